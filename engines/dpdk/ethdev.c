/* SPDX-License-Identifier: MIT */
/*
 * Backend "ethdev": a real DPDK port from EAL arguments (--device "dpdk:<eal
 * args>"). The PMD is opaque here: rte_eth_rx_burst is lapped as one stage
 * (cqe_poll), the workers add the app-side stages. Buffer split is set up the
 * way docs/design.md's testpmd line ("Reproducing with testpmd") does it:
 * segment 0 = header pool with length --split, segment 1 = payload pool with
 * length 0 (the pool's buffer size, so mlx5 keeps exactly two SGEs per WQE).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "dpdk_int.h"

struct eth_priv {
	uint16_t port;
	bool started, configured;
	char driver[64];
	struct rte_eth_dev_info info;
	struct rte_mempool *pools[RX_MAX_QUEUES][RXD_MAX_SEGS];
	void *gpu_mem[RX_MAX_QUEUES];
	size_t gpu_len[RX_MAX_QUEUES];
	struct rte_eth_stats before;
};

struct eth_q {
	uint16_t port, qid;
};

/* The first port the EAL arguments created. */
static int eth_port(uint16_t *port, char *err, size_t errlen)
{
	uint16_t p;
	RTE_ETH_FOREACH_DEV(p)
	{
		*port = p;
		return 0;
	}
	snprintf(err, errlen,
		 "device: the EAL arguments created no ethdev port (a vdev like "
		 "--vdev=net_null0, or -a <pci>); in a reused EAL a closed port is gone: "
		 "use a fresh process");
	return -ENODEV;
}

static bool eth_split_ok(const struct rte_eth_dev_info *di)
{
	return (di->rx_offload_capa & RTE_ETH_RX_OFFLOAD_BUFFER_SPLIT) &&
	       di->rx_seg_capa.max_nseg >= 2 && di->rx_seg_capa.multi_pools;
}

static int eth_caps(const struct rx_config *c, struct rx_caps *caps, char *err, size_t errlen)
{
	struct rte_eth_dev_info di;
	uint16_t port;
	char note[256];
	int rc = rxd_eal_for_config(c, note, sizeof(note), err, errlen);
	if (rc)
		return rc;
	rc = eth_port(&port, err, errlen);
	if (rc)
		return rc;
	rc = rte_eth_dev_info_get(port, &di);
	if (rc) {
		snprintf(err, errlen, "device: cannot read port %u info: %s", port, strerror(-rc));
		return rc;
	}
	memset(caps, 0, sizeof(*caps));
	snprintf(caps->name, sizeof(caps->name), "%s port %u", di.driver_name, port);
	caps->max_ring = di.rx_desc_lim.nb_max ? di.rx_desc_lim.nb_max : UINT16_MAX;
	caps->max_sges = eth_split_ok(&di) ? di.rx_seg_capa.max_nseg : 1;
	caps->max_queues = di.max_rx_queues;
	if (caps->max_queues > RX_MAX_QUEUES)
		caps->max_queues = RX_MAX_QUEUES;
	caps->max_frame = di.max_rx_pktlen;
	caps->buffer_split = eth_split_ok(&di);
	caps->gpu_mem = rxd_gpu_available();
	caps->max_rate_pps = 0;
	return 0;
}

static int eth_validate(const struct rx_config *c, const struct rx_caps *caps, char *err,
			size_t errlen)
{
	if (c->mode == RX_MODE_HDS && !caps->buffer_split) {
		snprintf(err, errlen,
			 "mode: %s has no buffer split (rx_offload_capa lacks BUFFER_SPLIT or "
			 "rx_seg_capa allows fewer than 2 segments from several pools); "
			 "--mode hds needs it",
			 caps->name);
		return -EINVAL;
	}
	if (c->payload_mem == RX_MEM_GPU && !caps->gpu_mem) {
		snprintf(err, errlen, "payload-mem: gpu needs CUDA and a GPU (%s)",
#ifdef RXRAY_HAVE_CUDA
			 "no GPU found"
#else
			 "built without CUDA"
#endif
		);
		return -EINVAL;
	}
	if (c->discipline != RX_DISC_AUTO) {
		snprintf(err, errlen,
			 "discipline: the ethdev backend runs whatever routine the "
			 "PMD picks; --discipline applies to --device sim");
		return -EINVAL;
	}
	return 0;
}

static uint16_t eth_burst(struct rxd_queue *q, struct rxp_probe *p, struct rte_mbuf **pkts,
			  uint16_t n)
{
	const struct eth_q *e = q->be;
	uint16_t got = rte_eth_rx_burst(e->port, e->qid, pkts, n);
	rxp_stage_begin(p, got ? RXP_ST_CQE_POLL : RXP_ST_IDLE); /* a PMD: known once it returns */
	rxp_lap(p, got ? RXP_ST_CQE_POLL : RXP_ST_IDLE, got);
	return got;
}

static int eth_open(struct rxd_run *run, char *err, size_t errlen)
{
	const struct rx_config *c = run->c;
	struct eth_priv *ep = calloc(1, sizeof(*ep));
	struct rte_eth_conf conf;
	int rc;
	if (!ep)
		return -ENOMEM;
	run->be_priv = ep;
	rc = eth_port(&ep->port, err, errlen);
	if (rc)
		return rc;
	rc = rte_eth_dev_info_get(ep->port, &ep->info);
	if (rc) {
		snprintf(err, errlen, "device: cannot read port info: %s", strerror(-rc));
		return rc;
	}
	snprintf(ep->driver, sizeof(ep->driver), "%s", ep->info.driver_name);
	memset(&conf, 0, sizeof(conf));
	if (c->mode == RX_MODE_HDS) {
		conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_BUFFER_SPLIT;
		if (ep->info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER)
			conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
	}
	if (run->nq > 1 && ep->info.flow_type_rss_offloads) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf =
		    ep->info.flow_type_rss_offloads &
		    (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP | RTE_ETH_RSS_TCP);
	}
	rc = rte_eth_dev_configure(ep->port, (uint16_t)run->nq, 0, &conf);
	if (rc) {
		snprintf(err, errlen, "device: rte_eth_dev_configure(%u rx queues): %s", run->nq,
			 strerror(-rc));
		return rc;
	}
	ep->configured = true;
	for (uint32_t i = 0; i < run->nq; i++) {
		struct rxd_queue *q = &run->q[i];
		struct rte_eth_rxconf rxc = ep->info.default_rxconf;
		union rte_eth_rxseg seg[2];
		char name[RTE_MEMPOOL_NAMESIZE];
		uint32_t n = run->pool_buffers;
		struct eth_q *e = calloc(1, sizeof(*e));
		if (!e)
			return -ENOMEM;
		q->be = e;
		e->port = ep->port;
		e->qid = (uint16_t)i;
		q->burst_fn = eth_burst;
		q->frame = 0; /* a real wire's frames vary: unchecked */
		q->check_tag = false;
		if (c->mode == RX_MODE_SINGLE) {
			uint32_t room = rxd_mbuf_room(c->frame);
			snprintf(name, sizeof(name), "rxd%u_e%u", run->run_id, i);
			/* single segment GPUDirect: the whole frame in GPU memory */
			if (c->payload_mem == RX_MEM_GPU)
				q->mp[0] = rxd_gpu_pool_create(name, ep->port, n, c->mempool_cache,
							       room, &ep->gpu_mem[i],
							       &ep->gpu_len[i], err, errlen);
			else
				q->mp[0] =
				    rxd_pool_create(name, n, c->mempool_cache, room, err, errlen);
			if (!q->mp[0])
				return -ENOMEM;
			ep->pools[i][0] = q->mp[0];
			q->segs = 1;
			rc =
			    rte_eth_rx_queue_setup(ep->port, (uint16_t)i, (uint16_t)c->ring,
						   rte_eth_dev_socket_id(ep->port), &rxc, q->mp[0]);
		} else {
			uint32_t pay = c->frame > c->split ? c->frame - c->split : 64;
			uint32_t proom = rxd_mbuf_room(pay);
			snprintf(name, sizeof(name), "rxd%u_eh%u", run->run_id, i);
			q->mp[0] = rxd_pool_create(name, n, c->mempool_cache,
						   rxd_mbuf_hdr_room(c->split), err, errlen);
			if (!q->mp[0])
				return -ENOMEM;
			ep->pools[i][0] = q->mp[0];
			snprintf(name, sizeof(name), "rxd%u_ep%u", run->run_id, i);
			if (c->payload_mem == RX_MEM_GPU)
				q->mp[1] = rxd_gpu_pool_create(name, ep->port, n, c->mempool_cache,
							       proom, &ep->gpu_mem[i],
							       &ep->gpu_len[i], err, errlen);
			else
				q->mp[1] =
				    rxd_pool_create(name, n, c->mempool_cache, proom, err, errlen);
			if (!q->mp[1])
				return -ENOMEM;
			ep->pools[i][1] = q->mp[1];
			q->segs = 2;
			memset(seg, 0, sizeof(seg));
			seg[0].split.mp = q->mp[0];
			seg[0].split.length = (uint16_t)c->split;
			seg[1].split.mp = q->mp[1];
			seg[1].split.length = 0; /* rest of the frame, pool-sized buffer */
			rxc.rx_seg = seg;
			rxc.rx_nseg = 2;
			rxc.offloads = conf.rxmode.offloads;
			rc = rte_eth_rx_queue_setup(ep->port, (uint16_t)i, (uint16_t)c->ring,
						    rte_eth_dev_socket_id(ep->port), &rxc, NULL);
			/* mlx5 counts the descriptors in segments (mbufs): a
			 * ring of N holds N/2 packets of two segments (other
			 * drivers: unknown, the ring is taken as packets) */
			if (ep->info.driver_name && !strncmp(ep->info.driver_name, "mlx5", 4))
				run->ring_pkts = c->ring / 2;
		}
		if (rc) {
			snprintf(err, errlen, "device: rx queue %u setup (%u descriptors%s): %s", i,
				 c->ring, c->mode == RX_MODE_HDS ? ", buffer split" : "",
				 strerror(-rc));
			return rc;
		}
		rc = rxd_queue_workers_init(run, q, err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

static int eth_start(struct rxd_run *run, char *err, size_t errlen)
{
	struct eth_priv *ep = run->be_priv;
	/* The rx workers are already polling (core/run.c starts them first):
	 * from rte_eth_dev_start on they receive, so the port's figures are
	 * zeroed and read before it, never after (a reset after the start lost
	 * what arrived in between: net_null under load counted 31296 packets
	 * received that the port never said it had, and conservation failed).
	 * The baseline is subtracted too, for a PMD whose reset leaves some. */
	rte_eth_stats_reset(ep->port);
	memset(&ep->before, 0, sizeof(ep->before));
	rte_eth_stats_get(ep->port, &ep->before);
	int rc = rte_eth_dev_start(ep->port);
	if (rc) {
		snprintf(err, errlen, "device: rte_eth_dev_start: %s", strerror(-rc));
		return rc;
	}
	ep->started = true;
	atomic_store_explicit(&run->live, 1, memory_order_release);
	return 0;
}

static bool eth_quiet(struct rxd_run *run, struct rxd_queue *q)
{
	(void)q;
	return atomic_load_explicit(&run->quit, memory_order_relaxed) != 0;
}

static bool eth_pending(struct rxd_run *run, struct rxd_queue *q)
{
	(void)run;
	(void)q;
	return false; /* a real port never runs dry; one drain pass is enough */
}

static uint64_t eth_xstat(uint16_t port, const char *name, bool *found)
{
	uint64_t id, v = 0;
	*found = false;
	if (rte_eth_xstats_get_id_by_name(port, name, &id) == 0 &&
	    rte_eth_xstats_get_by_id(port, &id, &v, 1) == 1)
		*found = true;
	return v;
}

/* A port counter's growth since the start's baseline (0 if it went back). */
static uint64_t since(uint64_t now, uint64_t before)
{
	return now >= before ? now - before : 0;
}

static int eth_collect(struct rxd_run *run, struct rxr_result *r, json_t *extra)
{
	struct eth_priv *ep = run->be_priv;
	struct rte_eth_stats st;
	struct rte_eth_burst_mode bm;
	bool found;
	uint64_t delivered = 0;
	json_t *port = json_object();
	if (!port)
		return -ENOMEM;
	memset(&st, 0, sizeof(st));
	rte_eth_stats_get(ep->port, &st);
	st.ipackets = since(st.ipackets, ep->before.ipackets);
	st.imissed = since(st.imissed, ep->before.imissed);
	st.rx_nombuf = since(st.rx_nombuf, ep->before.rx_nombuf);
	st.ierrors = since(st.ierrors, ep->before.ierrors);
	uint64_t missed = eth_xstat(ep->port, "rx_missed_errors", &found);
	for (uint32_t i = 0; i < run->nq; i++)
		delivered += run->q[i].rx.delivered;
	/* the port's own figures: imissed = packets with no descriptor
	 * (mlx5 out_of_buffer); rx_nombuf = allocation failures (events,
	 * not necessarily lost packets, so it stays out of conservation) */
	r->c.out_of_buffer = st.imissed;
	r->c.offered = st.ipackets + st.imissed;
	r->c.nombuf = 0;
	if (st.ipackets != delivered)
		r->c.errors +=
		    st.ipackets > delivered ? st.ipackets - delivered : delivered - st.ipackets;
	json_object_set_new(port, "driver", json_string(ep->driver));
	json_object_set_new(port, "port", json_integer(ep->port));
	json_object_set_new(port, "ipackets", json_integer((json_int_t)st.ipackets));
	json_object_set_new(port, "imissed", json_integer((json_int_t)st.imissed));
	json_object_set_new(port, "rx_nombuf", json_integer((json_int_t)st.rx_nombuf));
	json_object_set_new(port, "ierrors", json_integer((json_int_t)st.ierrors));
	json_object_set_new(port, "rx_missed_errors",
			    found ? json_integer((json_int_t)missed) : json_null());
	if (rte_eth_rx_burst_mode_get(ep->port, 0, &bm) == 0)
		json_object_set_new(port, "burst_mode", json_string(bm.info));
	else
		json_object_set_new(port, "burst_mode", json_null());
	json_object_set_new(extra, "port", port);
	return 0;
}

static void eth_close(struct rxd_run *run)
{
	struct eth_priv *ep = run->be_priv;
	if (!ep)
		return;
	if (ep->started)
		rte_eth_dev_stop(ep->port);
	/* the DMA mapping belongs to the device: undo it before the close */
	for (uint32_t i = 0; i < run->nq; i++)
		rxd_gpu_unmap(ep->port, ep->gpu_mem[i], ep->gpu_len[i]);
	if (ep->configured)
		rte_eth_dev_close(ep->port);
	for (uint32_t i = 0; i < run->nq && run->q; i++) {
		rxd_queue_workers_fini(&run->q[i]);
		free(run->q[i].be);
		run->q[i].be = NULL;
		/* the GPU pool is the payload pool (hds) or the only one */
		uint32_t g = ep->pools[i][1] ? 1 : 0;
		if (ep->gpu_mem[i])
			rxd_gpu_pool_free(ep->pools[i][g], ep->gpu_mem[i], ep->gpu_len[i]);
		else
			rte_mempool_free(ep->pools[i][g]);
		if (g)
			rte_mempool_free(ep->pools[i][0]);
	}
	free(ep);
	run->be_priv = NULL;
}

const struct rxd_backend_ops rxd_backend_ethdev = {
    .name = "ethdev",
    .caps = eth_caps,
    .validate = eth_validate,
    .open = eth_open,
    .start = eth_start,
    .quiet = eth_quiet,
    .pending = eth_pending,
    .collect = eth_collect,
    .close = eth_close,
};
