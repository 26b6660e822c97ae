/* SPDX-License-Identifier: MIT */
/*
 * Backend "mlx5": the verbs datapath on a real ConnectX through rdma-core.
 *
 *   ibv_get_device_list -> ibv_open_device -> ibv_query_device_ex (caps)
 *   ibv_alloc_pd -> ibv_reg_mr (header region, payload region)
 *   per queue: ibv_create_cq, ibv_create_wq(IBV_WQT_RQ, 1 or 2 SGEs),
 *              ibv_modify_wq(RDY)
 *   ibv_create_rwq_ind_table -> ibv_create_qp_ex(RAW_PACKET, RSS Toeplitz
 *   over IPv4 + UDP ports) -> ibv_create_flow(eth / ipv4 / udp dst port)
 *   mlx5dv_init_obj(CQ | RWQ) per queue: rwq.buf/stride/dbrec and
 *   cq.buf/cqe_cnt/cqe_size/dbrec, which the shared datapath drives
 *   directly (the CQ becomes DV-owned: the datapath updates its consumer
 *   index).
 *
 * Device string: "mlx5:<ibdev name | PCI address>[,udp=PORT][,port=N]".
 * Offered is received + drops + the port's out_of_buffer counter delta
 * (sysfs hw_counters); the wire itself is not ours to count.
 * The sender must carry rxray's tag (rxray/simnic.h: be64 sequence number
 * at byte 42) per queue for the sequence check to mean anything.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rxray/simnic.h"
#include "rxray/util.h"
#include "verbs_int.h"

#ifdef RXRAY_HAVE_VERBS
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#define MLX5_DEFAULT_UDP RXS_UDP_DST_PORT

struct mlx5_opts {
	char dev[256];
	uint16_t udp;
	uint8_t port;
};

struct mlx5_be {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr[2];
	int nmr;
	struct ibv_cq *cq[RX_MAX_QUEUES];
	struct ibv_wq *wq[RX_MAX_QUEUES];
	struct ibv_rwq_ind_table *ind;
	struct ibv_qp *qp;
	struct ibv_flow *flow;
	struct mlx5_opts o;
	char ibdev[IBV_SYSFS_NAME_MAX];
	uint64_t oob_start;
	bool oob_ok;
};

static int mlx5_opts_parse(const char *args, struct mlx5_opts *o, char *err, size_t errlen)
{
	char buf[sizeof(o->dev)];
	memset(o, 0, sizeof(*o));
	o->udp = MLX5_DEFAULT_UDP;
	o->port = 1;
	if (snprintf(buf, sizeof(buf), "%s", args) >= (int)sizeof(buf)) {
		snprintf(err, errlen, "device: mlx5 options too long");
		return -EINVAL;
	}
	char *save = NULL;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		uint64_t v;
		if (!strncmp(t, "udp=", 4)) {
			if (rxu_parse_u64(t + 4, 1, 65535, &v) < 0)
				goto bad;
			o->udp = (uint16_t)v;
		} else if (!strncmp(t, "port=", 5)) {
			if (rxu_parse_u64(t + 5, 1, 255, &v) < 0)
				goto bad;
			o->port = (uint8_t)v;
		} else if (!o->dev[0] && !strchr(t, '=')) {
			snprintf(o->dev, sizeof(o->dev), "%s", t);
		} else {
			goto bad;
		}
		continue;
bad:
		snprintf(err, errlen,
			 "device: mlx5 option '%s' not understood (mlx5:<ibdev|pci>[,udp=PORT][,port=N])",
			 t);
		return -EINVAL;
	}
	if (!o->dev[0]) {
		snprintf(err, errlen, "device: mlx5 needs a device: mlx5:<ibdev name or PCI address>");
		return -EINVAL;
	}
	return 0;
}

/* The PCI address behind an ibdev (basename of its sysfs device link). */
static void mlx5_dev_pci(struct ibv_device *d, char *out, size_t len)
{
	char path[PATH_MAX], real[PATH_MAX];
	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/device", d->ibdev_path);
	if (!realpath(path, real))
		return;
	const char *b = strrchr(real, '/');
	snprintf(out, len, "%.63s", b ? b + 1 : real);
}

/* Match by ibdev name, full PCI address, or PCI address without domain. */
static bool mlx5_dev_match(struct ibv_device *d, const char *want)
{
	if (!strcmp(ibv_get_device_name(d), want))
		return true;
	char pci[64];
	mlx5_dev_pci(d, pci, sizeof(pci));
	size_t lp = strlen(pci), lw = strlen(want);
	return pci[0] && (!strcmp(pci, want) ||
			  (lw < lp && !strcmp(pci + lp - lw, want) && pci[lp - lw - 1] == ':'));
}

/*
 * Device list + the wanted device. -ENODEV with "no RDMA device: ..." when
 * the list is NULL or empty or the device is not in it.
 */
static int mlx5_dev_find(const struct mlx5_opts *o, struct ibv_device ***list,
			 struct ibv_device **dev, char *err, size_t errlen)
{
	int n = 0;
	errno = 0;
	*list = ibv_get_device_list(&n);
	if (!*list) {
		int e = errno ? errno : ENODEV;
		snprintf(err, errlen, "no RDMA device: ibv_get_device_list failed: %s", strerror(e));
		return -ENODEV;
	}
	if (n <= 0) {
		snprintf(err, errlen, "no RDMA device: ibv_get_device_list found none (wanted %s)",
			 o->dev);
		return -ENODEV;
	}
	for (int i = 0; i < n; i++) {
		if (mlx5_dev_match((*list)[i], o->dev)) {
			if (!mlx5dv_is_supported((*list)[i])) {
				snprintf(err, errlen, "no RDMA device: %s is not an mlx5 device",
					 ibv_get_device_name((*list)[i]));
				return -ENODEV;
			}
			*dev = (*list)[i];
			return 0;
		}
	}
	int off = snprintf(err, errlen, "no RDMA device: %s is not among the %d present:", o->dev, n);
	for (int i = 0; i < n && off > 0 && (size_t)off < errlen; i++)
		off += snprintf(err + off, errlen - (size_t)off, " %s", ibv_get_device_name((*list)[i]));
	return -ENODEV;
}

/* The port's out_of_buffer counter (hw_counters), false when unreadable. */
static bool mlx5_oob_read(const char *ibdev, uint8_t port, uint64_t *v)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%u/hw_counters/out_of_buffer",
		 ibdev, port);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	unsigned long long x;
	bool ok = fscanf(f, "%llu", &x) == 1;
	fclose(f);
	*v = x;
	return ok;
}

/* Largest frame: the netdev's MTU + Ethernet header, 0 when unknown. */
static uint32_t mlx5_max_frame(const char *ibdev)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device/net", ibdev);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	uint32_t frame = 0;
	for (struct dirent *e = readdir(d); e; e = readdir(d)) {
		if (e->d_name[0] == '.')
			continue;
		char mtu_path[PATH_MAX + 300];
		snprintf(mtu_path, sizeof(mtu_path), "%s/%s/mtu", path, e->d_name);
		FILE *f = fopen(mtu_path, "r");
		unsigned mtu = 0;
		if (f) {
			if (fscanf(f, "%u", &mtu) != 1)
				mtu = 0;
			fclose(f);
		}
		if (mtu + 14u > frame)
			frame = mtu + 14u;
	}
	closedir(d);
	return frame;
}

static int mlx5_caps(const struct rx_config *c, struct rx_caps *caps, char *err, size_t errlen)
{
	struct rx_dev dev;
	struct mlx5_opts o;
	struct ibv_device **list = NULL, *d = NULL;
	struct ibv_context *ctx = NULL;
	struct ibv_device_attr_ex attr;
	int rc = rx_dev_parse(c->device, &dev, err, errlen);
	if (rc < 0 || (rc = mlx5_opts_parse(dev.args, &o, err, errlen)) < 0)
		return rc;
	rc = mlx5_dev_find(&o, &list, &d, err, errlen);
	if (rc < 0)
		goto out;
	ctx = ibv_open_device(d);
	if (!ctx) {
		rc = -(errno ? errno : ENODEV);
		snprintf(err, errlen, "no RDMA device: cannot open %s: %s", ibv_get_device_name(d),
			 strerror(-rc));
		goto out;
	}
	memset(&attr, 0, sizeof(attr));
	if ((rc = ibv_query_device_ex(ctx, NULL, &attr)) != 0) {
		rc = -rc;
		snprintf(err, errlen, "device: ibv_query_device_ex on %s: %s", ibv_get_device_name(d),
			 strerror(-rc));
		goto out;
	}
	snprintf(caps->name, sizeof(caps->name), "%s", ibv_get_device_name(d));
	caps->max_ring = (uint32_t)attr.orig_attr.max_qp_wr;
	caps->max_sges = (uint32_t)attr.orig_attr.max_sge;
	caps->max_queues = attr.rss_caps.max_rwq_indirection_table_size;
	if (!caps->max_queues || caps->max_queues > RX_MAX_QUEUES)
		caps->max_queues = RX_MAX_QUEUES;
	caps->buffer_split = caps->max_sges >= 2;
	caps->max_frame = mlx5_max_frame(ibv_get_device_name(d));
	rc = 0;
out:
	if (ctx)
		ibv_close_device(ctx);
	if (list)
		ibv_free_device_list(list);
	return rc;
}

static int mlx5_open(struct verbs_run *run, char *err, size_t errlen)
{
	const struct rx_config *c = run->c;
	struct ibv_device *d = NULL;
	struct mlx5_be *b = calloc(1, sizeof(*b));
	int rc;
	if (!b)
		return -ENOMEM;
	run->be_priv = b;
	if ((rc = mlx5_opts_parse(run->dev.args, &b->o, err, errlen)) < 0)
		return rc;
	if ((rc = mlx5_dev_find(&b->o, &b->list, &d, err, errlen)) < 0)
		return rc;
	snprintf(b->ibdev, sizeof(b->ibdev), "%s", ibv_get_device_name(d));
	b->ctx = ibv_open_device(d);
	if (!b->ctx) {
		rc = -(errno ? errno : ENODEV);
		snprintf(err, errlen, "no RDMA device: cannot open %s: %s", b->ibdev, strerror(-rc));
		return rc;
	}
	b->pd = ibv_alloc_pd(b->ctx);
	if (!b->pd) {
		rc = -(errno ? errno : ENOMEM);
		snprintf(err, errlen, "device: %s: ibv_alloc_pd: %s", b->ibdev, strerror(-rc));
		return rc;
	}
	uint32_t nsge = c->mode == RX_MODE_HDS ? 2 : 1;
	for (uint32_t i = 0; i < run->nq; i++) {
		b->cq[i] = ibv_create_cq(b->ctx, (int)c->ring, NULL, NULL, 0);
		if (!b->cq[i]) {
			rc = -(errno ? errno : ENOMEM);
			snprintf(err, errlen, "device: %s: ibv_create_cq(%u) for queue %u: %s", b->ibdev,
				 c->ring, i, strerror(-rc));
			return rc;
		}
		struct ibv_wq_init_attr wa = {
			.wq_type = IBV_WQT_RQ,
			.max_wr = c->ring,
			.max_sge = nsge,
			.pd = b->pd,
			.cq = b->cq[i],
		};
		b->wq[i] = ibv_create_wq(b->ctx, &wa);
		if (!b->wq[i]) {
			rc = -(errno ? errno : ENOMEM);
			snprintf(err, errlen, "device: %s: ibv_create_wq(%u WQEs, %u SGEs) for queue %u: %s",
				 b->ibdev, c->ring, nsge, i, strerror(-rc));
			return rc;
		}
		struct ibv_wq_attr ma = {.attr_mask = IBV_WQ_ATTR_STATE, .wq_state = IBV_WQS_RDY};
		if ((rc = ibv_modify_wq(b->wq[i], &ma)) != 0) {
			snprintf(err, errlen, "device: %s: ibv_modify_wq(RDY) for queue %u: %s", b->ibdev,
				 i, strerror(rc));
			return -rc;
		}
		struct verbs_queue *q = &run->q[i];
		struct mlx5dv_obj obj;
		memset(&obj, 0, sizeof(obj));
		obj.cq.in = b->cq[i];
		obj.cq.out = &q->cq;
		obj.rwq.in = b->wq[i];
		obj.rwq.out = &q->rq;
		if ((rc = mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ | MLX5DV_OBJ_RWQ)) != 0) {
			rc = rc > 0 ? -rc : (rc ? rc : -EINVAL);
			snprintf(err, errlen, "device: %s: mlx5dv_init_obj(CQ|RWQ) for queue %u: %s",
				 b->ibdev, i, strerror(-rc));
			return rc;
		}
		if (q->rq.wqe_cnt != c->ring) {
			snprintf(err, errlen, "device: %s: queue %u got %u WQEs for ring %u", b->ibdev, i,
				 q->rq.wqe_cnt, c->ring);
			return -EINVAL;
		}
	}
	/* RSS: the table needs a power-of-two size; queues repeat to fill it */
	uint32_t log = 0;
	while ((1u << log) < run->nq)
		log++;
	struct ibv_wq *tbl[RX_MAX_QUEUES];
	for (uint32_t i = 0; i < (1u << log); i++)
		tbl[i] = b->wq[i % run->nq];
	struct ibv_rwq_ind_table_init_attr ia = {.log_ind_tbl_size = log, .ind_tbl = tbl};
	b->ind = ibv_create_rwq_ind_table(b->ctx, &ia);
	if (!b->ind) {
		rc = -(errno ? errno : ENOMEM);
		snprintf(err, errlen, "device: %s: ibv_create_rwq_ind_table(2^%u): %s", b->ibdev, log,
			 strerror(-rc));
		return rc;
	}
	static uint8_t rss_key[40] = {
		0x2c, 0xc6, 0x81, 0xd1, 0x5b, 0xdb, 0xf4, 0xf7, 0xfc, 0xa2, 0x83, 0x19, 0xdb, 0x1a,
		0x3e, 0x94, 0x6b, 0x9e, 0x38, 0xd9, 0x2c, 0x9c, 0x03, 0xd1, 0xad, 0x99, 0x44, 0xa7,
		0xd9, 0x56, 0x3d, 0x59, 0x06, 0x3c, 0x25, 0xf3, 0xfc, 0x1f, 0xdc, 0x2a,
	};
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
			     IBV_QP_INIT_ATTR_RX_HASH,
		.pd = b->pd,
		.rwq_ind_tbl = b->ind,
		.rx_hash_conf = {
			.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ,
			.rx_hash_key_len = sizeof(rss_key),
			.rx_hash_key = rss_key,
			.rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 |
					       IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP,
		},
	};
	b->qp = ibv_create_qp_ex(b->ctx, &qa);
	if (!b->qp) {
		rc = -(errno ? errno : ENOMEM);
		snprintf(err, errlen, "device: %s: ibv_create_qp_ex(RAW_PACKET, RSS): %s%s", b->ibdev,
			 strerror(-rc), rc == -EPERM ? " (raw packet QPs need CAP_NET_RAW)" : "");
		return rc;
	}
	b->oob_ok = mlx5_oob_read(b->ibdev, b->o.port, &b->oob_start);
	return 0;
}

static int mlx5_reg(struct verbs_run *run, void *addr, size_t len, bool gpu, uint32_t *lkey,
		    char *err, size_t errlen)
{
	(void)gpu; /* GPU memory registers the same way (nvidia-peermem) */
	struct mlx5_be *b = run->be_priv;
	if (b->nmr >= 2)
		return -ENOSPC;
	struct ibv_mr *mr = ibv_reg_mr(b->pd, addr, len, IBV_ACCESS_LOCAL_WRITE);
	if (!mr) {
		int rc = -(errno ? errno : ENOMEM);
		snprintf(err, errlen, "device: %s: ibv_reg_mr(%zu bytes): %s", b->ibdev, len,
			 strerror(-rc));
		return rc;
	}
	b->mr[b->nmr++] = mr;
	*lkey = mr->lkey;
	return 0;
}

/* Steer UDP to the destination port into the RSS QP: traffic starts. */
static int mlx5_start(struct verbs_run *run, char *err, size_t errlen)
{
	struct mlx5_be *b = run->be_priv;
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
		struct ibv_flow_spec_ipv4 ip;
		struct ibv_flow_spec_tcp_udp udp;
	} fa; /* every member 4-byte aligned: no padding between the specs */
	_Static_assert(sizeof(fa) == sizeof(struct ibv_flow_attr) + sizeof(struct ibv_flow_spec_eth) +
					 sizeof(struct ibv_flow_spec_ipv4) +
					 sizeof(struct ibv_flow_spec_tcp_udp),
		       "flow specs must follow the attr back to back");
	memset(&fa, 0, sizeof(fa));
	fa.attr.type = IBV_FLOW_ATTR_NORMAL;
	fa.attr.size = sizeof(fa);
	fa.attr.num_of_specs = 3;
	fa.attr.port = b->o.port;
	fa.eth.type = IBV_FLOW_SPEC_ETH;
	fa.eth.size = sizeof(fa.eth);
	fa.ip.type = IBV_FLOW_SPEC_IPV4;
	fa.ip.size = sizeof(fa.ip);
	fa.udp.type = IBV_FLOW_SPEC_UDP;
	fa.udp.size = sizeof(fa.udp);
	fa.udp.val.dst_port = htons(b->o.udp);
	fa.udp.mask.dst_port = 0xffff;
	b->flow = ibv_create_flow(b->qp, &fa.attr);
	if (!b->flow) {
		int rc = -(errno ? errno : EINVAL);
		snprintf(err, errlen, "device: %s: ibv_create_flow(udp dst %u, port %u): %s", b->ibdev,
			 b->o.udp, b->o.port, strerror(-rc));
		return rc;
	}
	return 0;
}

/* Receive for the run's time, then remove the flow rule: the wire is quiet. */
static int mlx5_wait(struct verbs_run *run, volatile sig_atomic_t *stop, double *seconds,
		     char *err, size_t errlen)
{
	struct mlx5_be *b = run->be_priv;
	const struct timespec tick = {0, 1000000};
	double t0 = rxu_mono_seconds();
	while (!*stop && rxu_mono_seconds() - t0 < run->c->seconds)
		nanosleep(&tick, NULL);
	*seconds = rxu_mono_seconds() - t0;
	if (b->flow) {
		ibv_destroy_flow(b->flow);
		b->flow = NULL;
	}
	nanosleep(&tick, NULL); /* packets already past steering land */
	return 0;
}

static int mlx5_collect(struct verbs_run *run, struct rxr_result *r,
			struct verbs_dev_counters *tot, struct verbs_dev_counters *perq)
{
	struct mlx5_be *b = run->be_priv;
	uint64_t oob_end = 0, oob = 0, seen = 0, errs = 0;
	bool ok = b->oob_ok && mlx5_oob_read(b->ibdev, b->o.port, &oob_end);
	if (ok)
		oob = oob_end - b->oob_start;
	for (uint32_t i = 0; i < run->nq; i++) {
		const struct verbs_queue *q = &run->q[i];
		seen += q->app.received + q->rx.app_dropped + q->rx.err_cqes;
		errs += q->rx.err_cqes;
		perq[i].errors = q->rx.err_cqes;
		perq[i].known = false;
	}
	tot->offered = seen + oob;
	tot->out_of_buffer = oob;
	tot->errors = errs; /* the device's errors are the error CQEs it wrote */
	tot->known = ok;
	json_t *o = json_object();
	if (o) {
		json_object_set_new(o, "ibdev", json_string(b->ibdev));
		json_object_set_new(o, "port", json_integer(b->o.port));
		json_object_set_new(o, "udp_dst_port", json_integer(b->o.udp));
		json_object_set_new(o, "out_of_buffer_counter", json_boolean(ok));
		if (!r->extra)
			r->extra = json_object();
		if (r->extra)
			json_object_set_new(r->extra, "mlx5", o);
		else
			json_decref(o);
	}
	return 0;
}

/* Undo open in reverse; every object may be absent after a partial open. */
static void mlx5_close(struct verbs_run *run)
{
	struct mlx5_be *b = run->be_priv;
	if (!b)
		return;
	if (b->flow)
		ibv_destroy_flow(b->flow);
	if (b->qp)
		ibv_destroy_qp(b->qp);
	if (b->ind)
		ibv_destroy_rwq_ind_table(b->ind);
	for (int i = RX_MAX_QUEUES - 1; i >= 0; i--) {
		if (b->wq[i])
			ibv_destroy_wq(b->wq[i]);
		if (b->cq[i])
			ibv_destroy_cq(b->cq[i]);
	}
	for (int i = b->nmr - 1; i >= 0; i--)
		ibv_dereg_mr(b->mr[i]);
	if (b->pd)
		ibv_dealloc_pd(b->pd);
	if (b->ctx)
		ibv_close_device(b->ctx);
	if (b->list)
		ibv_free_device_list(b->list);
	free(b);
	run->be_priv = NULL;
}

const struct verbs_backend_ops verbs_backend_mlx5 = {
	.name = "mlx5",
	.caps = mlx5_caps,
	.open = mlx5_open,
	.reg = mlx5_reg,
	.start = mlx5_start,
	.wait = mlx5_wait,
	.collect = mlx5_collect,
	.close = mlx5_close,
};

#else /* !RXRAY_HAVE_VERBS */

/* Built without rdma-core: the backend exists to say so, and only that. */
static int mlx5_absent(char *err, size_t errlen)
{
	snprintf(err, errlen, "no RDMA device: this build has no rdma-core (libibverbs, libmlx5)");
	return -ENODEV;
}

static int mlx5_caps(const struct rx_config *c, struct rx_caps *caps, char *err, size_t errlen)
{
	return mlx5_absent(err, errlen);
}

static int mlx5_open(struct verbs_run *run, char *err, size_t errlen)
{
	return mlx5_absent(err, errlen);
}

static void mlx5_close(struct verbs_run *run)
{
}

const struct verbs_backend_ops verbs_backend_mlx5 = {
	.name = "mlx5",
	.caps = mlx5_caps,
	.open = mlx5_open,
	.close = mlx5_close,
};
#endif
