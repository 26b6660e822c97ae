/* SPDX-License-Identifier: MIT */
/*
 * Backend "sim": the verbs datapath on the software NIC's rings. The NIC
 * allocates the RQ/CQ rings like a driver would; this file only presents
 * them as the mlx5dv_rwq / mlx5dv_cq pair mlx5dv_init_obj returns on real
 * hardware, registers the slot regions, and runs the NIC thread.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "rxray/simnic.h"
#include "rxray/util.h"
#include "verbs_int.h"

static int sim_caps(const struct rx_config *c, struct rx_caps *caps, char *err, size_t errlen)
{
	/* the device string's options: the NIC's own check (caps->dev),
	 * with the shared validation, before anything opens */
	if (c->cqe_comp == RX_CQE_COMP_ON) {
		snprintf(err, errlen,
			 "cqe-comp: the verbs engine's consumer (a DevX RQ, like daqiri's) "
			 "does not ask for compressed CQEs; use --cqe-comp off or auto");
		return -EINVAL;
	}
	rxs_caps(caps);
	return 0;
}

static int sim_open(struct verbs_run *run, char *err, size_t errlen)
{
	struct rxs_params p;
	/* the verbs RQ counts WQEs, not segments: no caps needed for the ring */
	int rc = rxs_params_of_run(run->c, NULL, &run->pl, &p, err, errlen);
	if (rc < 0)
		return rc;
	p.seconds = run->nic_seconds; /* the warm-up first, when there is one */
	struct rxs_nic *nic = NULL;
	rc = rxs_nic_open(&p, &nic, err, errlen);
	if (rc < 0)
		return rc;
	run->be_priv = nic;
	for (uint32_t i = 0; i < run->nq; i++) {
		struct rxs_ring r;
		rc = rxs_nic_ring(nic, i, &r);
		if (rc < 0) {
			snprintf(err, errlen, "device: sim has no ring for queue %u", i);
			return rc;
		}
		struct verbs_queue *q = &run->q[i];
		q->rq.buf = r.rq_buf;
		q->rq.dbrec = &r.rq_dbrec[MLX5_RCV_DBR];
		q->rq.wqe_cnt = r.wqe_cnt;
		q->rq.stride = r.stride;
		q->cq.buf = r.cq_buf;
		q->cq.dbrec = &r.cq_dbrec[RXS_CQ_SET_CI];
		q->cq.cqe_cnt = r.cqe_cnt;
		q->cq.cqe_size = sizeof(struct mlx5_cqe64);
	}
	return 0;
}

static int sim_reg(struct verbs_run *run, void *addr, size_t len, bool gpu, uint32_t *lkey,
		   char *err, size_t errlen)
{
	int rc = gpu ? rxs_mr_reg_gpu(run->be_priv, addr, len, lkey)
		     : rxs_mr_reg(run->be_priv, addr, len, lkey);
	if (rc < 0)
		snprintf(err, errlen, "device: sim cannot register %zu bytes: %s", len, strerror(-rc));
	return rc;
}

static int sim_start(struct verbs_run *run, char *err, size_t errlen)
{
	int rc = rxs_nic_start(run->be_priv);
	if (rc < 0)
		snprintf(err, errlen, "device: cannot start the NIC thread: %s", strerror(-rc));
	return rc;
}

static int sim_wait(struct verbs_run *run, volatile sig_atomic_t *stop, double *seconds, char *err,
		    size_t errlen)
{
	struct rxs_nic *nic = run->be_priv;
	/* 5 ms: this thread has no core of its own; waking it less often
	 * leaves the pinned workers alone */
	const struct timespec tick = {0, 5000000};
	bool stopping = false;
	while (!rxs_nic_done(nic)) {
		if (*stop && !stopping) {
			rxs_nic_stop(nic);
			stopping = true;
		}
		nanosleep(&tick, NULL);
	}
	int rc = rxs_nic_join(nic);
	struct rxs_stats st;
	rxs_nic_stats(nic, &st);
	*seconds = st.seconds;
	if (rc < 0)
		snprintf(err, errlen, "nic thread on core %d: %s", run->pl.nic_core, strerror(-rc));
	return rc;
}

static int sim_collect(struct verbs_run *run, struct rxr_result *r, struct verbs_dev_counters *tot,
		       struct verbs_dev_counters *perq)
{
	const struct rxs_nic *nic = run->be_priv;
	int rc = rxs_nic_result_add(nic, r);
	if (rc < 0)
		return rc;
	struct rxs_counters k;
	rxs_nic_counters(nic, UINT32_MAX, &k);
	tot->offered = k.offered;
	tot->out_of_buffer = k.out_of_buffer;
	tot->errors = k.errors;
	tot->known = true;
	for (uint32_t i = 0; i < run->nq; i++) {
		rxs_nic_counters(nic, i, &k);
		perq[i].offered = k.offered;
		perq[i].out_of_buffer = k.out_of_buffer;
		perq[i].errors = k.errors;
		perq[i].known = true;
	}
	return 0;
}

static int sim_rearm(struct verbs_run *run, double seconds, char *err, size_t errlen)
{
	int rc = rxs_nic_rearm(run->be_priv, seconds);
	if (rc < 0)
		snprintf(err, errlen, "device: cannot rearm the software NIC: %s", strerror(-rc));
	return rc;
}

static void sim_close(struct verbs_run *run)
{
	rxs_nic_free(run->be_priv);
	run->be_priv = NULL;
}

const struct verbs_backend_ops verbs_backend_sim = {
	.name = "sim",
	.caps = sim_caps,
	.open = sim_open,
	.reg = sim_reg,
	.start = sim_start,
	.wait = sim_wait,
	.collect = sim_collect,
	.rearm = sim_rearm,
	.close = sim_close,
};
