/* SPDX-License-Identifier: MIT */
/*
 * The fixed-slot datapath against rings this test drives by hand, as a NIC
 * would (mlx5 formats from rdma-core's mlx5dv.h): the WQEs it posts, the
 * owner bit across CQ wraps, slot = wqe_counter & mask, error CQEs, the
 * sequence check (duplicates and gaps), one doorbell per batch, and the
 * hand-off to an app thread. Single-threaded: the wire is marked quiet
 * before the RX loop runs, so the loop drains what is there and returns.
 */
#include <criterion/criterion.h>
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_int.h"

#define RING 256u
#define FRAME 1064u
#define SPLIT 64u
#define SEQ_OFF 42u

struct fake {
	struct rx_config c;
	struct verbs_run run;
	struct verbs_queue q;
	__be32 rq_db[2], cq_db[2];
	uint8_t *rq, *cqbuf, *hdr, *pay;
	uint32_t cqe_cnt;
	uint32_t produced; /* completions written */
	struct rxp_probe *p;
};

static void fake_init_sized(struct fake *f, enum rx_mode mode, uint32_t wqe_stride, bool inline_app,
			    enum rx_consumer consumer, uint32_t batch, uint32_t burst)
{
	memset(f, 0, sizeof(*f));
	cr_assert_eq(rxp_clock_init(20), 0);
	rx_config_defaults(&f->c);
	f->c.consumer = consumer;
	f->c.mode = mode;
	f->c.ring = RING;
	f->c.batch = batch;
	f->c.burst = burst;
	f->c.frame = FRAME;
	f->c.split = SPLIT;
	f->cqe_cnt = RING;
	f->rq = aligned_alloc(64, RING * wqe_stride);
	f->cqbuf = aligned_alloc(64, f->cqe_cnt * 64);
	cr_assert(f->rq && f->cqbuf);
	memset(f->rq, 0xee, RING * wqe_stride);
	memset(f->cqbuf, 0, f->cqe_cnt * 64);
	for (uint32_t i = 0; i < f->cqe_cnt; i++)
		((struct mlx5_cqe64 *)f->cqbuf)[i].op_own = MLX5_CQE_INVALID << 4;
	f->run.c = &f->c;
	f->run.hdr_stride = mode == RX_MODE_HDS ? 64 : 0;
	f->run.pay_stride = mode == RX_MODE_HDS ? 1024 : 1088;
	f->run.seq_off = SEQ_OFF;
	f->run.wire_done = 1;
	f->hdr = calloc(RING, 64);
	f->pay = calloc(RING, f->run.pay_stride);
	cr_assert(f->hdr && f->pay);
	/* every slot starts with a sequence number no packet will carry */
	for (uint32_t i = 0; i < RING; i++) {
		uint64_t bad = htobe64(0xdead0000u + i);
		memcpy(f->hdr + i * 64 + SEQ_OFF, &bad, 8);
		memcpy(f->pay + i * f->run.pay_stride + SEQ_OFF, &bad, 8);
	}
	struct verbs_queue *q = &f->q;
	q->rq.buf = f->rq;
	q->rq.dbrec = f->rq_db;
	q->rq.wqe_cnt = RING;
	q->rq.stride = wqe_stride;
	q->cq.buf = f->cqbuf;
	q->cq.dbrec = f->cq_db;
	q->cq.cqe_cnt = f->cqe_cnt;
	q->cq.cqe_size = 64;
	q->hdr_base = f->hdr;
	q->pay_base = f->pay;
	q->hdr_lkey = 0x11;
	q->pay_lkey = 0x22;
	q->inline_app = inline_app;
	char err[256] = "";
	cr_assert_eq(verbs_queue_setup(&f->run, q, err, sizeof(err)), 0, "%s", err);
	rxp_probe_open("rx", -1, 0, 0, &f->p, NULL, 0);
	cr_assert_not_null(f->p);
}

static void fake_init_consumer(struct fake *f, enum rx_mode mode, uint32_t wqe_stride,
			       bool inline_app, enum rx_consumer consumer)
{
	fake_init_sized(f, mode, wqe_stride, inline_app, consumer, 64, 64);
}

static void fake_init(struct fake *f, enum rx_mode mode, uint32_t wqe_stride, bool inline_app)
{
	fake_init_consumer(f, mode, wqe_stride, inline_app, RX_CONSUMER_DEVX);
}

static void fake_fini(struct fake *f)
{
	verbs_queue_teardown(&f->q);
	rxp_probe_free(f->p);
	free(f->rq);
	free(f->cqbuf);
	free(f->hdr);
	free(f->pay);
}

static uint32_t posted(const struct fake *f)
{
	return be32toh(f->rq_db[0]);
}

/* The NIC side: complete the next WQE with sequence number seq. */
static void fake_complete(struct fake *f, uint64_t seq, uint8_t opcode)
{
	uint32_t n = f->produced++;
	cr_assert_neq((uint16_t)(posted(f) - n), 0, "test bug: no WQE posted for completion %u", n);
	uint32_t slot = n & (RING - 1);
	uint8_t *hdr = f->c.mode == RX_MODE_HDS ? f->hdr + slot * 64 : f->pay + slot * f->run.pay_stride;
	uint64_t be = htobe64(seq);
	memcpy(hdr + SEQ_OFF, &be, 8);
	struct mlx5_cqe64 *cqe = (struct mlx5_cqe64 *)f->cqbuf + (n & (f->cqe_cnt - 1));
	cqe->byte_cnt = htobe32(FRAME);
	cqe->wqe_counter = htobe16((uint16_t)n);
	if (opcode == MLX5_CQE_RESP_ERR)
		((struct mlx5_err_cqe *)cqe)->syndrome = 0x4;
	cqe->op_own = (uint8_t)((opcode << 4) | ((n / f->cqe_cnt) & 1));
}

Test(verbs_dp, wqes_point_at_their_slots)
{
	struct fake f;
	fake_init(&f, RX_MODE_HDS, 32, true);
	cr_assert_eq(posted(&f), RING);
	for (uint32_t i = 0; i < RING; i++) {
		struct mlx5_wqe_data_seg *d = (struct mlx5_wqe_data_seg *)(f.rq + i * 32);
		cr_assert_eq(be64toh(d[0].addr), (uint64_t)(uintptr_t)(f.hdr + i * 64));
		cr_assert_eq(be32toh(d[0].lkey), 0x11);
		cr_assert_eq(be32toh(d[0].byte_count), SPLIT);
		cr_assert_eq(be64toh(d[1].addr), (uint64_t)(uintptr_t)(f.pay + i * 1024));
		cr_assert_eq(be32toh(d[1].lkey), 0x22);
		cr_assert_eq(be32toh(d[1].byte_count), 1024);
	}
	fake_fini(&f);
}

Test(verbs_dp, single_sge_list_is_terminated)
{
	struct fake f;
	fake_init(&f, RX_MODE_SINGLE, 32, true); /* room for 2 segments, 1 used */
	for (uint32_t i = 0; i < RING; i++) {
		struct mlx5_wqe_data_seg *d = (struct mlx5_wqe_data_seg *)(f.rq + i * 32);
		cr_assert_eq(be64toh(d[0].addr), (uint64_t)(uintptr_t)(f.pay + i * 1088));
		cr_assert_eq(be32toh(d[1].lkey), MLX5_INVALID_LKEY);
		cr_assert_eq(d[1].byte_count, 0);
	}
	fake_fini(&f);
}

/* 300 CQ wraps, past the 16-bit wqe_counter and doorbell wrap (65536):
 * the owner bit flips, slots recycle, nothing is lost. */
Test(verbs_dp, owner_bit_across_wraps)
{
	struct fake f;
	fake_init(&f, RX_MODE_HDS, 32, true);
	uint64_t seq = 0;
	for (int round = 0; round < 300; round++) {
		for (uint32_t k = 0; k < RING; k++)
			fake_complete(&f, seq++, MLX5_CQE_RESP_SEND);
		f.q.rx_fn(&f.q, f.p);
		cr_assert_eq(f.q.app.received, seq, "round %d", round);
		cr_assert_eq(be32toh(f.cq_db[0]), f.produced);
		cr_assert_eq(posted(&f), (RING + f.produced) & 0xffff, "every slot reposted");
	}
	cr_assert_eq(f.q.app.seq_missing, 0);
	cr_assert_eq(f.q.app.seq_dup, 0);
	cr_assert_eq(f.q.app.len_errors, 0);
	cr_assert_eq(f.q.app.bytes, seq * FRAME);
	fake_fini(&f);
}

/* A CQE still carrying the previous pass's owner bit is not software's. */
Test(verbs_dp, stale_owner_not_consumed)
{
	struct fake f;
	fake_init(&f, RX_MODE_SINGLE, 16, true);
	for (uint32_t k = 0; k < RING; k++)
		fake_complete(&f, k, MLX5_CQE_RESP_SEND);
	f.q.rx_fn(&f.q, f.p);
	cr_assert_eq(f.q.app.received, RING);
	/* entry 0 now holds pass-0 parity; the consumer expects pass 1 */
	f.q.rx_fn(&f.q, f.p);
	cr_assert_eq(f.q.app.received, RING);
	cr_assert_eq(f.q.ci, RING);
	fake_fini(&f);
}

Test(verbs_dp, duplicate_and_gap_detected)
{
	struct fake f;
	fake_init(&f, RX_MODE_HDS, 32, true);
	uint64_t seqs[] = {0, 1, 1, 2, 7, 8};
	for (size_t i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++)
		fake_complete(&f, seqs[i], MLX5_CQE_RESP_SEND);
	f.q.rx_fn(&f.q, f.p);
	cr_assert_eq(f.q.app.received, 6);
	cr_assert_eq(f.q.app.seq_dup, 1);
	cr_assert_eq(f.q.app.seq_missing, 4); /* 3, 4, 5, 6 */
	cr_assert_eq(f.q.app.next_seq, 9);
	fake_fini(&f);
}

/* Error CQEs are counted, never reach the app, and free their slot. */
Test(verbs_dp, error_cqe_counted_and_released)
{
	struct fake f;
	fake_init(&f, RX_MODE_HDS, 32, true);
	fake_complete(&f, 0, MLX5_CQE_RESP_SEND);
	fake_complete(&f, 1, MLX5_CQE_RESP_ERR);
	fake_complete(&f, 2, MLX5_CQE_RESP_SEND);
	f.q.rx_fn(&f.q, f.p);
	cr_assert_eq(f.q.rx.err_cqes, 1);
	cr_assert_eq(f.q.rx.last_syndrome, 0x4);
	cr_assert_eq(f.q.app.received, 2);
	cr_assert_eq(f.q.app.seq_missing, 1);
	cr_assert_eq(atomic_load(&f.q.released), 3);
	fake_fini(&f);
}

/* Four full bursts released: four doorbells, each covering one batch. */
Test(verbs_dp, one_doorbell_per_batch)
{
	struct fake f;
	fake_init(&f, RX_MODE_SINGLE, 16, true);
	for (uint32_t k = 0; k < 256; k++)
		fake_complete(&f, k, MLX5_CQE_RESP_SEND);
	f.q.rx_fn(&f.q, f.p);
	cr_assert_eq(f.q.rx.doorbells, 4);
	cr_assert_eq(f.q.rx.posted, 256);
	cr_assert_eq(f.p->st[RXP_ST_DOORBELL].count, 4);
	cr_assert_eq(f.p->st[RXP_ST_DOORBELL].packets, 256);
	fake_fini(&f);
}

/*
 * An idle poll reposts released slots only while the NIC holds half the
 * ring or less (dp_starving): daqiri refills per batch, and an rx thread
 * that read the app's release counter on every idle poll would charge the
 * app a coherence miss per packet. Batch = ring, so only the idle poll
 * can repost: 100 taken of 256 leaves 156 with the NIC, nothing is
 * reposted; 150 taken leaves 106, all 150 are. Catches an idle poll that
 * reposts regardless (the first case) and one that never does, which
 * stalls a ring the app holds (the second).
 */
Test(verbs_dp, idle_poll_reposts_only_when_the_nic_starves)
{
	const uint32_t taken[] = {100, 150}, want[] = {RING, RING + 150};
	for (int i = 0; i < 2; i++) {
		struct fake f;
		fake_init_sized(&f, RX_MODE_SINGLE, 16, true, RX_CONSUMER_DEVX, RING, 64);
		cr_assert_eq(posted(&f), RING);
		for (uint32_t k = 0; k < taken[i]; k++)
			fake_complete(&f, k, MLX5_CQE_RESP_SEND);
		f.q.rx_fn(&f.q, f.p);
		cr_assert_eq(atomic_load(&f.q.released), taken[i]);
		cr_assert_eq(posted(&f), want[i], "%u taken: %u posted (want %u)", taken[i],
			     posted(&f), want[i]);
		cr_assert_eq(f.q.rx.doorbells, i, "%u taken: %lu doorbells", taken[i],
			     (unsigned long)f.q.rx.doorbells);
		fake_fini(&f);
	}
}

/* RX pushes bursts into the SPSC ring; the app thread body drains it. */
Test(verbs_dp, handoff_to_app)
{
	struct fake f;
	fake_init(&f, RX_MODE_HDS, 32, false);
	for (uint32_t k = 0; k < 200; k++)
		fake_complete(&f, k, MLX5_CQE_RESP_SEND);
	f.q.rx_fn(&f.q, f.p);
	cr_assert_eq(f.q.app.received, 0, "inline work ran in the thread variant");
	cr_assert_eq(atomic_load(&f.q.rx_done), 1);
	struct rx_worker w = {.core = -1};
	rxp_probe_open("app", -1, 0, 0, &w.probe, NULL, 0);
	cr_assert_eq(verbs_app_worker(&w, &f.q), 0);
	cr_assert_eq(f.q.app.received, 200);
	cr_assert_eq(f.q.app.seq_missing, 0);
	cr_assert_eq(atomic_load(&f.q.released), 200);
	cr_assert_eq(w.probe->st[RXP_ST_HANDOFF].packets, 200);
	rxp_probe_free(w.probe);
	fake_fini(&f);
}

/*
 * The app thread takes what queued, up to a batch, per lap: 25 bursts of
 * 8 waiting (one with an error CQE in it) make laps of 16 at batch 20,
 * never more than a batch, and every slot is still released once. Catches
 * an app that laps one rx burst at a time (its laps would hold 8 however
 * far behind it fell, which the cost model's B = batch does not hold
 * for), one that overshoots its batch, and a merged release that loses
 * the error CQE's slot or counts a slot twice.
 */
Test(verbs_dp, app_takes_a_batch_of_queued_bursts)
{
	struct fake f;
	fake_init_sized(&f, RX_MODE_HDS, 32, false, RX_CONSUMER_DEVX, 20, 8);
	for (uint32_t k = 0; k < 200; k++)
		fake_complete(&f, k, k == 101 ? MLX5_CQE_RESP_ERR : MLX5_CQE_RESP_SEND);
	f.q.rx_fn(&f.q, f.p);
	cr_assert_eq(f.p->st[RXP_ST_HANDOFF].count, 25, "the rx side handed off bursts of 8");
	struct rx_worker w = {.core = -1};
	rxp_probe_open("app", -1, 0, 0, &w.probe, NULL, 0);
	cr_assert_eq(verbs_app_worker(&w, &f.q), 0);
	const struct rxp_acc *h = &w.probe->st[RXP_ST_HANDOFF];
	/* entries of 8 good packets, the 13th of 7: laps of two entries
	 * (16; 7 + 8 = 15 once), the last entry alone: 11 x 16, 15, 8 */
	cr_assert_eq(h->packets, 199);
	cr_assert_eq(h->count, 13, "app laps: %lu (one entry each would be 25)",
		     (unsigned long)h->count);
	cr_assert_eq(h->sum_pp, 11 * 16 * 16 + 15 * 15 + 8 * 8, "lap sizes: sum of squares %lu",
		     (unsigned long)h->sum_pp);
	cr_assert_eq(f.q.app.received, 199);
	cr_assert_eq(f.q.app.seq_missing, 1);
	cr_assert_eq(atomic_load(&f.q.released), 200);
	rxp_probe_free(w.probe);
	fake_fini(&f);
}

/* --consumer picks the loop once at setup: devx by default, rdma-core's
 * variant (a read barrier per CQE) when asked; catches a knob that never
 * reaches the queue. */
Test(verbs_dp, consumer_picks_its_loop)
{
	struct fake f;
	fake_init(&f, RX_MODE_HDS, 32, true);
	cr_assert_eq(f.q.rx_fn, verbs_rx_fn_pick(RX_CONSUMER_DEVX, true, true, false));
	fake_fini(&f);
	fake_init_consumer(&f, RX_MODE_HDS, 32, true, RX_CONSUMER_RDMA_CORE);
	cr_assert_eq(f.q.rx_fn, verbs_rx_fn_pick(RX_CONSUMER_RDMA_CORE, true, true, false));
	cr_assert_neq(f.q.rx_fn, verbs_rx_fn_pick(RX_CONSUMER_DEVX, true, true, false));
	fake_fini(&f);
}

/* The rdma-core consumer takes the same completions in the same order
 * across CQ wraps: the barrier changes cost, never what is delivered. */
Test(verbs_dp, rdma_core_consumer_owner_bit_across_wraps)
{
	struct fake f;
	fake_init_consumer(&f, RX_MODE_SINGLE, 16, true, RX_CONSUMER_RDMA_CORE);
	uint64_t seq = 0;
	for (int round = 0; round < 20; round++) {
		for (uint32_t k = 0; k < RING; k++)
			fake_complete(&f, seq++, MLX5_CQE_RESP_SEND);
		f.q.rx_fn(&f.q, f.p);
		cr_assert_eq(f.q.app.received, seq, "round %d", round);
		cr_assert_eq(be32toh(f.cq_db[0]), f.produced);
	}
	cr_assert_eq(f.q.app.seq_missing, 0);
	cr_assert_eq(f.q.app.seq_dup, 0);
	fake_fini(&f);
}
