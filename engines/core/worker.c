/* SPDX-License-Identifier: MIT */
/*
 * Workers: pinned threads with a probe each. The probe is reset on the
 * thread after pinning so set-up and migration never land in a stage.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rxray/core.h"
#include "rxray/inject.h"
#include "rxray/util.h"

int rx_op_gate_stage(const struct rx_config *c, const char *role, uint32_t *k)
{
	if (!c->inject_ab)
		return -1;
	bool rx = !strcmp(role, "rx"), app = !strcmp(role, "app");
	int s = -1;
	uint32_t d = 0;
	if (c->op_delay_mempool) { /* gets in the refill; puts in the app's free */
		s = rx ? RXP_ST_BUF_ALLOC : app ? RXP_ST_FREE : -1;
		d = c->op_delay_mempool;
	} else if (c->op_delay_mr) { /* lkey lookups while the SGEs are written */
		s = rx ? RXP_ST_SGE_SETUP : -1;
		d = c->op_delay_mr;
	} else if (c->op_delay_repost) { /* verbs: a released slot's WQE rewritten */
		s = rx ? RXP_ST_SGE_SETUP : -1;
		d = c->op_delay_repost;
	} else if (c->op_delay_dbrec) { /* verbs: the RQ doorbell record */
		s = rx ? RXP_ST_DOORBELL : -1;
		d = c->op_delay_dbrec;
	} else if (c->op_delay_hdr_read) { /* verbs: the app's header reads, on
					    * the rx thread when the app is inline */
		s = rx || app ? RXP_ST_HDR_READ : -1;
		d = c->op_delay_hdr_read;
	}
	if (k)
		*k = s >= 0 ? d : 0;
	return s;
}

static void *worker_main(void *arg)
{
	struct rx_worker *w = arg;
	/* who watches the phase (rx_run_watch) needs the kernel's thread id */
	__atomic_store_n(&w->ktid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	if (w->core >= 0) {
		int rc = rxu_pin_self(w->core);
		if (rc < 0) {
			w->rc = rc;
			__atomic_store_n(&w->finished, 1, __ATOMIC_RELEASE);
			return NULL;
		}
	}
	rxp_probe_reset(w->probe);
	/* the validity window is fn's: was the thread preempted or moved? */
	bool valid = rxr_valid_thread_begin(&w->valid, w->role, w->core, NULL, 0) == 0;
	__atomic_store_n(&w->entered, 1, __ATOMIC_RELEASE);
	w->rc = w->fn(w, w->arg);
	w->valid_ok = valid && rxr_valid_thread_end(&w->valid) == 0;
	__atomic_store_n(&w->finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

int rx_worker_start(struct rx_worker *w, const char *role, int core, const struct rx_config *c,
		    rx_worker_fn fn, void *arg)
{
	memset(w, 0, sizeof(*w));
	w->core = core;
	w->fn = fn;
	w->arg = arg;
	snprintf(w->role, sizeof(w->role), "%s", role);
	int prc = rxp_probe_open(role, core, c ? c->sample_shift : 0, 0, &w->probe, NULL, 0);
	if (prc < 0)
		return prc;
	if (c)
		for (int s = 0; s < RXP_ST_COUNT; s++)
			if (c->inject[s])
				rxp_probe_set_inject(w->probe, (enum rxp_stage)s, c->inject[s]);
	uint32_t gate_k = 0;
	int gate = c ? rx_op_gate_stage(c, role, &gate_k) : -1;
	if (gate >= 0)
		prc = rxp_probe_set_op_gate(w->probe, (enum rxp_stage)gate, gate_k);
	else if (c && c->inject_ab)
		prc = rxp_probe_set_inject_ab(w->probe, true);
	/* --op-delay without A/B: every lap pays its operations' delays (in
	 * A/B the thread performing them has a gate, which does it) */
	if (prc >= 0 && c && !c->inject_ab && rx_op_delays(c))
		prc = rxp_probe_set_op_pay(w->probe);
	if (prc < 0) {
		rxp_probe_free(w->probe);
		w->probe = NULL;
		return prc;
	}
	int rc = pthread_create(&w->tid, NULL, worker_main, w);
	if (rc != 0) {
		rxp_probe_free(w->probe);
		w->probe = NULL;
		return -rc;
	}
	/* "rxray-rx", "rxray-app": what top, perf and /proc show */
	char name[16];
	snprintf(name, sizeof(name), "rxray-%.9s", role);
	pthread_setname_np(w->tid, name);
	w->started = true;
	return 0;
}

int rx_worker_join(struct rx_worker *w)
{
	if (!w->started)
		return w->rc;
	if (!w->joined) {
		pthread_join(w->tid, NULL);
		w->joined = true;
	}
	return w->rc;
}

void rx_worker_destroy(struct rx_worker *w)
{
	if (!w)
		return;
	rx_worker_join(w);
	rxp_probe_free(w->probe);
	w->probe = NULL;
}
