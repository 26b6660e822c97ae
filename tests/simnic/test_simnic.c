/* SPDX-License-Identifier: MIT */
/* The software NIC driven directly by a tiny fixed-slot consumer. */
#include <criterion/criterion.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>

#include "consumer.h"
#include "rxray/validity.h"

static void init_clock(void)
{
	cr_assert_eq(rxp_clock_init(20), 0);
}

TestSuite(simnic, .init = init_clock);

/* Every sequence number of every queue is accounted for exactly once. */
static void check_accounting(struct tc *t)
{
	struct rxs_counters tot;
	rxs_nic_counters(t->nic, UINT32_MAX, &tot);
	cr_assert_eq(tot.offered, tot.received + tot.out_of_buffer,
		     "NIC conservation: offered %lu != received %lu + oob %lu",
		     (unsigned long)tot.offered, (unsigned long)tot.received,
		     (unsigned long)tot.out_of_buffer);
	for (uint32_t qi = 0; qi < t->nq; qi++) {
		struct rxs_counters c;
		struct tc_queue *q = &t->q[qi];
		rxs_nic_counters(t->nic, qi, &c);
		cr_assert_eq(c.offered, c.received + c.out_of_buffer, "queue %u conserves", qi);
		cr_assert_eq(c.received, q->good + q->errors, "queue %u: every CQE seen", qi);
		cr_assert_eq(c.errors, q->errors);
		cr_assert_eq(q->backwards, 0, "queue %u: %lu packets delivered twice/out of order", qi,
			     (unsigned long)q->backwards);
		cr_assert_eq(q->bad_hdr, 0, "queue %u: header tag wrong", qi);
		cr_assert_eq(q->bad_len, 0, "queue %u: byte_cnt wrong", qi);
		cr_assert_eq(q->bad_stamp, 0, "queue %u: payload stamp wrong", qi);
		cr_assert_eq(q->bad_session, 0, "queue %u: session crosses the CQ's end", qi);
		cr_assert_eq(q->bad_hash, 0, "queue %u: RSS hash of another queue", qi);
		cr_assert_eq(q->bad_ptype, 0, "queue %u: packet-type fields wrong", qi);
		cr_assert_eq(q->bad_wqe, 0, "queue %u: %lu completions out of WQE order", qi,
			     (unsigned long)q->bad_wqe);
		cr_assert_eq(q->bad_order, 0, "queue %u: %lu times a later CQE was out first", qi,
			     (unsigned long)q->bad_order);
		if (!t->p.cqe_comp)
			cr_assert_eq(q->sessions, 0, "queue %u: compressed without being asked", qi);
		cr_assert_leq(q->next_seq, c.offered);
		uint64_t lost = q->gaps + (c.offered - q->next_seq);
		cr_assert_eq(lost, c.out_of_buffer + c.errors,
			     "queue %u: %lu sequence numbers missing, %lu counted", qi,
			     (unsigned long)lost, (unsigned long)(c.out_of_buffer + c.errors));
	}
}

static void run_consumer(struct tc *t)
{
	cr_assert_eq(rxs_nic_start(t->nic), 0);
	tc_run(t);
	cr_assert_eq(rxs_nic_join(t->nic), 0);
}

/* Consume until `want` CQEs were seen on queue 0, then stop the NIC. */
static void run_until(struct tc *t, uint32_t want)
{
	cr_assert_eq(rxs_nic_start(t->nic), 0);
	for (;;) {
		bool done = rxs_nic_done(t->nic);
		int got = 0;
		for (uint32_t qi = 0; qi < t->nq; qi++)
			got += tc_poll_one(t, qi);
		if (t->q[0].ci >= want)
			rxs_nic_stop(t->nic);
		if (!got && done)
			break;
	}
	cr_assert_eq(rxs_nic_join(t->nic), 0);
}

Test(simnic, ring_wraps_many_revolutions)
{
	struct rxs_params p;
	struct tc t;
	rxs_params_defaults(&p);
	p.ring = 64;
	p.frame = 128;
	p.rate_pps = 2e6;
	p.seconds = 30; /* a cap: the consumer stops the NIC */
	cr_assert_eq(tc_init(&t, &p, 0), 0);
	run_until(&t, 200u * p.ring);
	check_accounting(&t);
	/* the ring, the CQ owner bit and the slots wrapped 200 times */
	cr_assert_geq(t.q[0].ci, 200u * p.ring, "only %u CQEs consumed", t.q[0].ci);
	cr_assert_gt(t.q[0].good, 100u * p.ring);
	tc_fini(&t);
}

Test(simnic, wqe_counter_wraps_16_bits)
{
	/* > 65536 completions on a small ring: the 16-bit WQE counter, the
	 * doorbell record and the CQ owner bit all wrap; stop once there */
	struct rxs_params p;
	struct tc t;
	rxs_params_defaults(&p);
	p.ring = 256;
	p.frame = 64;
	p.seconds = 30; /* a cap only */
	p.rate_pps = 2e6;
	p.payload = RX_PAYLOAD_NONE;
	cr_assert_eq(tc_init(&t, &p, 0), 0);
	run_until(&t, 70000);
	check_accounting(&t);
	cr_assert_geq(t.q[0].ci, 70000u, "only %u CQEs before the 30 s cap", t.q[0].ci);
	cr_assert_geq(t.q[0].good, 60000u);
	tc_fini(&t);
}

Test(simnic, queues_spread_and_sequence_per_queue)
{
	struct rxs_params p;
	struct tc t;
	rxs_params_defaults(&p);
	p.queues = 4;
	p.ring = 128;
	p.frame = 256;
	p.sges = 2;
	p.rate_pps = 1e6;
	p.seconds = 0;
	p.max_packets = 40000;
	cr_assert_eq(tc_init(&t, &p, 64), 0);
	run_consumer(&t);
	check_accounting(&t);
	for (uint32_t qi = 0; qi < 4; qi++) {
		struct rxs_counters c;
		rxs_nic_counters(t.nic, qi, &c);
		cr_assert_gt(c.offered, 0, "flow hash left queue %u empty", qi);
	}
	tc_fini(&t);
}

Test(simnic, bad_sges_give_error_cqes_and_no_stray_writes)
{
	struct rxs_params p;
	struct tc t;
	rxs_params_defaults(&p);
	p.ring = 16;
	p.frame = 128;
	p.seconds = 0;
	p.max_packets = 4;
	p.payload = RX_PAYLOAD_FULL;
	cr_assert_eq(tc_init(&t, &p, 0), 0);
	/* an unregistered canary right where a bad address points */
	char *canary = aligned_alloc(64, 4096);
	memset(canary, 0, 4096);
	struct tc_queue *q = &t.q[0];
	rxs_seg_set(rxs_wqe_seg(&q->r, 0, 0), tc_hdr_slot(&t, 0, 0), t.slot, t.hkey ^ 0x7);
	rxs_seg_set(rxs_wqe_seg(&q->r, 1, 0), canary, 1024, t.hkey);
	/* inside the region but running past its end */
	rxs_seg_set(rxs_wqe_seg(&q->r, 2, 0), t.hdr + t.hdr_len - 64, 128, t.hkey);
	/* registered and in range, but too short for the frame */
	rxs_seg_set(rxs_wqe_seg(&q->r, 3, 0), tc_hdr_slot(&t, 0, 3), 100, t.hkey);
	char *tail = tc_hdr_slot(&t, 0, 3);
	cr_assert_eq(rxs_nic_start(t.nic), 0);
	uint8_t synd[4] = {0};
	uint32_t n = 0;
	while (n < 4) {
		struct mlx5_cqe64 *cqe = rxs_cq_peek(&q->r, q->ci);
		if (!cqe) {
			cr_assert(!rxs_nic_done(t.nic) || rxs_cq_peek(&q->r, q->ci),
				  "NIC done after %u CQEs", n);
			continue;
		}
		cr_assert_eq(rxs_cqe_opcode(cqe), MLX5_CQE_RESP_ERR, "CQE %u not an error", n);
		cr_assert_eq(be16toh(cqe->wqe_counter), n);
		synd[n++] = rxs_cqe_syndrome(cqe);
		q->ci++;
		q->errors++;
	}
	cr_assert_eq(rxs_nic_join(t.nic), 0);
	cr_assert_eq(synd[0], MLX5_CQE_SYNDROME_LOCAL_PROT_ERR, "bad lkey");
	cr_assert_eq(synd[1], MLX5_CQE_SYNDROME_LOCAL_PROT_ERR, "unregistered address");
	cr_assert_eq(synd[2], MLX5_CQE_SYNDROME_LOCAL_PROT_ERR, "range past the end");
	cr_assert_eq(synd[3], MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR, "segment too short");
	for (int i = 0; i < 4096; i++)
		cr_assert_eq(canary[i], 0, "write outside any region at canary+%d", i);
	for (int i = 0; i < 128; i++)
		cr_assert_eq(tail[i], 0, "write into a short segment");
	struct rxs_counters c;
	rxs_nic_counters(t.nic, 0, &c);
	cr_assert_eq(c.errors, 4);
	cr_assert_eq(c.received, 4);
	cr_assert_eq(c.offered, c.received + c.out_of_buffer);
	free(canary);
	tc_fini(&t);
}

Test(simnic, deregistered_key_is_rejected)
{
	struct rxs_params p;
	struct tc t;
	rxs_params_defaults(&p);
	p.ring = 8;
	p.frame = 64;
	p.seconds = 0;
	p.max_packets = 8;
	cr_assert_eq(tc_init(&t, &p, 0), 0);
	cr_assert_eq(rxs_mr_dereg(t.nic, t.hkey), 0);
	cr_assert_eq(rxs_mr_dereg(t.nic, t.hkey), -EINVAL);
	run_consumer(&t);
	check_accounting(&t);
	cr_assert_eq(t.q[0].good, 0);
	cr_assert_eq(t.q[0].errors, 8);
	cr_assert_eq(t.q[0].last_synd, MLX5_CQE_SYNDROME_LOCAL_PROT_ERR);
	tc_fini(&t);
}

Test(simnic, overload_counts_out_of_buffer_and_conserves)
{
	struct rxs_params p;
	struct tc t;
	rxs_params_defaults(&p);
	p.ring = 64;
	p.frame = 64;
	p.seconds = 0.2;
	p.rate_pps = 0; /* as fast as the NIC goes */
	cr_assert_eq(tc_init(&t, &p, 0), 0);
	t.spin_per_pkt = (uint64_t)(rxp_clock_get()->hz / 200000); /* 5 us per packet */
	run_consumer(&t);
	check_accounting(&t);
	struct rxs_counters c;
	rxs_nic_counters(t.nic, UINT32_MAX, &c);
	cr_assert_gt(c.out_of_buffer, 0);
	cr_assert_gt(c.received, 0);
	tc_fini(&t);
}

Test(simnic, cq_full_is_out_of_buffer)
{
	/* a consumer that never advances the CQ index: the CQ fills first */
	struct rxs_params p;
	struct tc t;
	rxs_params_defaults(&p);
	p.ring = 64;
	p.cq_depth = 16;
	p.frame = 64;
	p.seconds = 0;
	p.max_packets = 100;
	cr_assert_eq(tc_init(&t, &p, 0), 0);
	cr_assert_eq(rxs_nic_start(t.nic), 0);
	cr_assert_eq(rxs_nic_join(t.nic), 0);
	struct rxs_counters c;
	rxs_nic_counters(t.nic, 0, &c);
	cr_assert_eq(c.received, 16);
	cr_assert_eq(c.cq_full, 84);
	cr_assert_eq(c.out_of_buffer, 84);
	tc_fini(&t);
}

Test(simnic, hds_memory_placement_full_payload)
{
	struct rxs_params p;
	struct tc t;
	rxs_params_defaults(&p);
	p.ring = 32;
	p.frame = 1064;
	p.sges = 2;
	p.dma = RX_DMA_MEMORY;
	p.payload = RX_PAYLOAD_FULL;
	p.seconds = 0;
	p.rate_pps = 5e5;
	p.max_packets = 2000;
	cr_assert_eq(tc_init(&t, &p, 128), 0);
	run_consumer(&t);
	check_accounting(&t);
	cr_assert_gt(t.q[0].good, 0);
	/* the last delivered packet: payload bytes all equal seq & 0xff */
	uint64_t seq = t.q[0].next_seq - 1;
	uint32_t s = (t.q[0].ci - 1) & (p.ring - 1);
	const uint8_t *pay = (const uint8_t *)tc_pay_slot(&t, 0, s);
	const uint8_t *hdr = (const uint8_t *)tc_hdr_slot(&t, 0, s);
	cr_assert_eq(rxs_hdr_seq(hdr), seq);
	cr_assert_eq(hdr[12], 0x08, "ethertype IPv4");
	cr_assert_eq(hdr[23], 17, "protocol UDP");
	for (uint32_t i = 0; i < p.frame - 128; i++)
		cr_assert_eq(pay[i], (uint8_t)seq, "payload byte %u", i);
	tc_fini(&t);
}

Test(simnic, paced_rate_never_runs_ahead)
{
	struct rxs_params p;
	struct tc t;
	rxs_params_defaults(&p);
	p.ring = 1024;
	p.frame = 64;
	p.rate_pps = 1e6;
	p.seconds = 0.1;
	cr_assert_eq(tc_init(&t, &p, 0), 0);
	run_consumer(&t);
	check_accounting(&t);
	struct rxs_stats st;
	struct rxs_counters c;
	rxs_nic_stats(t.nic, &st);
	rxs_nic_counters(t.nic, UINT32_MAX, &c);
	cr_assert_gt(c.offered, 0);
	cr_assert_leq((double)c.offered, 1e6 * st.seconds + RXS_BURST + 1,
		      "offered %lu in %.3f s at 1 Mpps", (unsigned long)c.offered, st.seconds);
	cr_assert_leq(st.achieved_pps, 1.01e6);
	tc_fini(&t);
}

Test(simnic, rejects_bad_params_and_busy_registration)
{
	struct rxs_params p;
	char err[256] = "";
	rxs_params_defaults(&p);
	p.ring = 1000;
	struct rxs_nic *bad = NULL;
	cr_assert_eq(rxs_nic_open(&p, &bad, err, sizeof(err)), -EINVAL);
	cr_assert_null(bad);
	cr_assert(strstr(err, "ring") != NULL, "%s", err);
	rxs_params_defaults(&p);
	p.frame = 32;
	cr_assert_lt(rxs_nic_open(&p, &bad, err, sizeof(err)), 0);
	cr_assert_null(bad);
	cr_assert(strstr(err, "frame") != NULL, "%s", err);

	struct tc t;
	rxs_params_defaults(&p);
	p.ring = 8;
	p.frame = 64;
	p.seconds = 0.05;
	cr_assert_eq(tc_init(&t, &p, 0), 0);
	cr_assert_eq(rxs_nic_start(t.nic), 0);
	uint32_t k;
	cr_assert_eq(rxs_mr_reg(t.nic, t.hdr, 64, &k), -EBUSY);
	tc_run(&t);
	cr_assert_eq(rxs_nic_join(t.nic), 0);
	tc_fini(&t);
}

Test(simnic, config_maps_to_params)
{
	struct rx_config c;
	struct rxs_params p;
	char err[256];
	rx_config_defaults(&c);
	snprintf(c.device, sizeof(c.device), "sim:rate=2M,flows=16,cq=16384");
	c.mode = RX_MODE_HDS;
	c.inject[RXP_ST_HDR_WRITE] = 100;
	c.inject[RXP_ST_CQE_POLL] = 100;
	cr_assert_eq(rxs_params_of_run(&c, NULL, NULL, &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(p.sges, 2);
	cr_assert_float_eq(p.rate_pps, 2e6, 1);
	cr_assert_eq(p.flows, 16);
	cr_assert_eq(p.cq_depth, 16384);
	cr_assert_eq(p.inject[RXP_ST_HDR_WRITE], 100);
	cr_assert_eq(p.inject[RXP_ST_CQE_POLL], 0, "engine stages are not the NIC's");
	snprintf(c.device, sizeof(c.device), "sim:bogus=1");
	cr_assert_eq(rxs_params_of_run(&c, NULL, NULL, &p, err, sizeof(err)), -EINVAL);
	cr_assert(strncmp(err, "device:", 7) == 0, "%s", err);
	snprintf(c.device, sizeof(c.device), "mlx5:0000:3b:00.0");
	cr_assert_eq(rxs_params_of_run(&c, NULL, NULL, &p, err, sizeof(err)), -EINVAL);
}

Test(simnic, result_carries_nic_thread_and_counters)
{
	struct rxs_params p;
	struct tc t;
	rxs_params_defaults(&p);
	p.ring = 64;
	p.frame = 64;
	p.seconds = 0;
	p.max_packets = 1000;
	p.rate_pps = 1e6;
	cr_assert_eq(tc_init(&t, &p, 0), 0);
	run_consumer(&t);
	struct rxr_result *r = NULL;
	rxr_result_open(&r);
	cr_assert_not_null(r);
	cr_assert_eq(rxs_nic_result_add(t.nic, r), 0);
	cr_assert_eq(r->c.offered, 1000);
	cr_assert_eq(r->nthreads, 1);
	cr_assert_str_eq(r->threads[0].role, "nic");
	json_t *nic = json_object_get(r->extra, "nic");
	cr_assert_not_null(nic);
	cr_assert(json_is_array(json_object_get(nic, "queues")));
	rxr_result_free(r);
	tc_fini(&t);
}

/* ------------------------------------------------ several NIC threads */

/* Each thread's own tally equals the sums over the queues it owns
 * (q % threads == t), and the threads add up to the NIC totals. */
static void check_threads(struct tc *t, uint32_t nthreads)
{
	struct rxs_counters tot, sum = {0};
	rxs_nic_counters(t->nic, UINT32_MAX, &tot);
	cr_assert_eq(rxs_nic_threads(t->nic), nthreads);
	for (uint32_t ti = 0; ti < nthreads; ti++) {
		struct rxs_thread_stats ts;
		struct rxs_counters own = {0};
		rxs_nic_thread_stats(t->nic, ti, &ts);
		for (uint32_t qi = ti; qi < t->nq; qi += nthreads) {
			struct rxs_counters c;
			rxs_nic_counters(t->nic, qi, &c);
			own.offered += c.offered;
			own.received += c.received;
			own.out_of_buffer += c.out_of_buffer;
		}
		cr_assert_eq(ts.cnt.offered, own.offered,
			     "thread %u offered %lu, its queues were offered %lu", ti,
			     (unsigned long)ts.cnt.offered, (unsigned long)own.offered);
		cr_assert_eq(ts.cnt.received, own.received, "thread %u received", ti);
		cr_assert_eq(ts.cnt.out_of_buffer, own.out_of_buffer, "thread %u oob", ti);
		cr_assert_eq(ts.queues, (t->nq - ti + nthreads - 1) / nthreads);
		cr_assert_gt(ts.flows, 0, "thread %u got no flow", ti);
		sum.offered += ts.cnt.offered;
		sum.received += ts.cnt.received;
		sum.out_of_buffer += ts.cnt.out_of_buffer;
		const struct rxp_probe *pr = rxs_nic_thread_probe(t->nic, ti);
		cr_assert_not_null(pr);
		cr_assert(ti == 0 || pr != rxs_nic_thread_probe(t->nic, 0), "a probe per thread");
	}
	cr_assert_eq(sum.offered, tot.offered);
	cr_assert_eq(sum.received, tot.received);
	cr_assert_eq(sum.out_of_buffer, tot.out_of_buffer);
	cr_assert_null(rxs_nic_thread_probe(t->nic, nthreads));
}

Test(simnic, four_queues_two_threads_conserve_per_queue)
{
	struct rxs_params p;
	struct tc t;
	rxs_params_defaults(&p);
	p.queues = 4;
	p.threads = 2;
	p.ring = 128;
	p.frame = 256;
	p.sges = 2;
	p.rate_pps = 1e6;
	p.seconds = 0;
	p.max_packets = 40001; /* odd: the quotas must still add up */
	cr_assert_eq(tc_init(&t, &p, 64), 0);
	run_consumer(&t);
	check_accounting(&t); /* sequence numbers per queue, tags name the queue */
	check_threads(&t, 2);
	struct rxs_counters tot;
	rxs_nic_counters(t.nic, UINT32_MAX, &tot);
	cr_assert_eq(tot.offered, 40001);
	for (uint32_t qi = 0; qi < 4; qi++) {
		struct rxs_counters c;
		rxs_nic_counters(t.nic, qi, &c);
		cr_assert_gt(c.offered, 0, "queue %u got nothing", qi);
	}
	struct rxs_stats st;
	rxs_nic_stats(t.nic, &st);
	cr_assert_eq(st.threads, 2);
	tc_fini(&t);
}

Test(simnic, two_threads_overloaded_count_drops_on_their_own_queues)
{
	struct rxs_params p;
	struct tc t;
	rxs_params_defaults(&p);
	p.queues = 2;
	p.threads = 2;
	p.ring = 64;
	p.frame = 64;
	p.seconds = 0.2;
	p.rate_pps = 0;
	cr_assert_eq(tc_init(&t, &p, 0), 0);
	t.spin_per_pkt = (uint64_t)(rxp_clock_get()->hz / 200000); /* 5 us per packet */
	run_consumer(&t);
	check_accounting(&t);
	check_threads(&t, 2);
	struct rxs_counters c;
	rxs_nic_counters(t.nic, UINT32_MAX, &c);
	cr_assert_gt(c.out_of_buffer, 0);
	cr_assert_gt(c.received, 0);
	tc_fini(&t);
}

Test(simnic, rate_splits_by_flow_share)
{
	struct rxs_params p;
	struct tc t;
	rxs_params_defaults(&p);
	p.queues = 3;
	p.threads = 2;
	p.ring = 64;
	p.frame = 128;
	p.flows = 100;
	p.rate_pps = 3e6;
	p.seconds = 0;
	p.max_packets = 3000;
	cr_assert_eq(tc_init(&t, &p, 0), 0);
	run_consumer(&t);
	check_accounting(&t);
	check_threads(&t, 2);
	double sum = 0;
	uint32_t flows = 0;
	for (uint32_t ti = 0; ti < 2; ti++) {
		struct rxs_thread_stats ts;
		rxs_nic_thread_stats(t.nic, ti, &ts);
		cr_assert_float_eq(ts.target_pps, 3e6 * ts.flows / 100.0, 1e-3);
		/* quota by flow share: within one packet of it */
		double share = 3000.0 * ts.flows / 100.0;
		cr_assert(ts.cnt.offered + 1 > share && ts.cnt.offered < share + 1,
			  "thread %u offered %lu for a share of %.1f", ti,
			  (unsigned long)ts.cnt.offered, share);
		sum += ts.target_pps;
		flows += ts.flows;
	}
	cr_assert_eq(flows, 100);
	cr_assert_float_eq(sum, 3e6, 1e-3);
	tc_fini(&t);
}

Test(simnic, result_has_a_nic_thread_entry_per_thread)
{
	struct rxs_params p;
	struct tc t;
	rxs_params_defaults(&p);
	p.queues = 4;
	p.threads = 2;
	p.ring = 64;
	p.frame = 64;
	p.seconds = 0;
	p.max_packets = 2000;
	p.rate_pps = 2e6;
	cr_assert_eq(tc_init(&t, &p, 0), 0);
	run_consumer(&t);
	struct rxr_result *r = NULL;
	rxr_result_open(&r);
	cr_assert_not_null(r);
	cr_assert_eq(rxs_nic_result_add(t.nic, r), 0);
	cr_assert_eq(r->c.offered, 2000);
	cr_assert_eq(r->nthreads, 2);
	cr_assert_str_eq(r->threads[0].role, "nic");
	cr_assert_str_eq(r->threads[1].role, "nic");
	json_t *nic = json_object_get(r->extra, "nic");
	json_t *nt = json_object_get(nic, "nic_threads");
	cr_assert_eq(json_integer_value(json_object_get(nt, "actual")), 2);
	cr_assert_eq(json_integer_value(json_object_get(nt, "resolved")), 2);
	/* raw parameters asked for nothing */
	cr_assert_str_eq(json_string_value(json_object_get(nt, "asked")), "auto");
	struct rx_dev_record rec;
	cr_assert_eq(rxs_nic_record(r, &rec), 0);
	cr_assert_eq(rec.actual.threads, 2);
	cr_assert_eq(rec.actual.writers, 1);
	cr_assert(json_is_object(json_object_get(nic, "totals")), "aggregate kept");
	json_t *ts = json_object_get(nic, "threads");
	cr_assert_eq(json_array_size(ts), 2);
	json_int_t offered = 0;
	for (size_t i = 0; i < 2; i++) {
		json_t *o = json_array_get(ts, i);
		json_t *qs = json_object_get(o, "queues");
		cr_assert_eq(json_array_size(qs), 2);
		cr_assert_eq(json_integer_value(json_array_get(qs, 0)), (json_int_t)i);
		cr_assert_eq(json_integer_value(json_array_get(qs, 1)), (json_int_t)i + 2);
		offered += json_integer_value(json_object_get(o, "offered"));
	}
	cr_assert_eq(offered, 2000);
	rxr_result_free(r);
	tc_fini(&t);
}

Test(simnic, nic_threads_params_checked)
{
	struct rxs_params p;
	struct rx_config c;
	char err[256] = "";
	rxs_params_defaults(&p);
	cr_assert_eq(p.threads, 1);
	p.queues = 2;
	p.threads = 3;
	struct rxs_nic *bad = NULL;
	cr_assert_eq(rxs_nic_open(&p, &bad, err, sizeof(err)), -EINVAL);
	cr_assert_null(bad);
	cr_assert(strncmp(err, "nic-threads:", 12) == 0, "%s", err);

	rx_config_defaults(&c);
	c.queues = 4;
	snprintf(c.device, sizeof(c.device), "sim:nics=2");
	cr_assert_eq(rxs_params_of_run(&c, NULL, NULL, &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(p.threads, 2);
	c.nic_threads = 4;
	cr_assert_eq(rxs_params_of_run(&c, NULL, NULL, &p, err, sizeof(err)), -EINVAL);
	cr_assert(strncmp(err, "nic-threads:", 12) == 0, "%s", err);
	snprintf(c.device, sizeof(c.device), "sim");
	cr_assert_eq(rxs_params_of_run(&c, NULL, NULL, &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(p.threads, 4);
	c.nic_threads = 0;
	cr_assert_eq(rxs_params_of_run(&c, NULL, NULL, &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(p.threads, 1, "auto is the placement's call; alone it is 1");
	snprintf(c.device, sizeof(c.device), "sim:nics=0");
	cr_assert_eq(rxs_params_of_run(&c, NULL, NULL, &p, err, sizeof(err)), -EINVAL);
	cr_assert(strncmp(err, "device:", 7) == 0, "%s", err);
	snprintf(c.device, sizeof(c.device), "sim:nics=8");
	cr_assert_eq(rxs_params_of_run(&c, NULL, NULL, &p, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "queues") != NULL, "%s", err);

	struct rx_placement pl;
	memset(&pl, 0, sizeof(pl));
	pl.nic_threads = 2;
	pl.dma_writers = 1;
	pl.nic_all = 2;
	pl.nic_cores[0] = 5;
	pl.nic_cores[1] = 7;
	snprintf(c.device, sizeof(c.device), "sim");
	cr_assert_eq(rxs_params_of_run(&c, NULL, &pl, &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(p.threads, 2);
	cr_assert_eq(p.core, 5);
	cr_assert_eq(p.thread_core[1], 7);
	cr_assert_eq(p.thread_core[2], -1);
}

/* ------------------------------------------------ compressed sessions */

/* Compression on, a small ring wrapping thousands of times at full rate:
 * every sequence number accounted for, in order, sessions really written
 * (and so mini arrays overwrite entries a lap later: a consumer or NIC
 * that mishandles the invalidated entries shows as backwards/bad_len).
 * The consumer stops the NIC once it has seen 200,000 completions (30 s
 * cap): a NIC that stopped at 200,000 offered once left a descheduled
 * consumer fewer than 8 ring laps on the 2-core CI host. */
Test(simnic, compressed_sessions_wrap_and_conserve)
{
	struct rxs_params p;
	struct tc t;
	rxs_params_defaults(&p);
	p.ring = 64;
	p.frame = 1064;
	p.seconds = 30; /* a cap */
	p.cqe_comp = true;
	cr_assert_eq(tc_init(&t, &p, 0), 0);
	run_until(&t, 200000);
	cr_assert_geq(t.q[0].ci, 200000, "only %u completions before the 30 s cap", t.q[0].ci);
	check_accounting(&t);
	struct tc_queue *q = &t.q[0];
	cr_assert_gt(q->sessions, 0, "no compressed session at full rate");
	cr_assert_gt(q->minis, 2 * q->sessions - 1);
	cr_assert_gt(q->good, 8 * 64, "fewer packets than 8 ring laps");
	tc_fini(&t);
}

/* Several queues and two NIC threads: a burst interleaves queues, each
 * queue's completions still form their own sessions; a CQ deeper than
 * the ring; hds with a payload stamp checked per mini. */
Test(simnic, compressed_sessions_per_queue_hds)
{
	struct rxs_params p;
	struct tc t;
	rxs_params_defaults(&p);
	p.queues = 4;
	p.threads = 2;
	p.ring = 128;
	p.cq_depth = 512;
	p.sges = 2;
	p.frame = 512;
	p.seconds = 0;
	p.max_packets = 100000;
	p.cqe_comp = true;
	cr_assert_eq(tc_init(&t, &p, 64), 0);
	run_consumer(&t);
	check_accounting(&t);
	uint64_t sessions = 0;
	for (uint32_t qi = 0; qi < 4; qi++)
		sessions += t.q[qi].sessions;
	cr_assert_gt(sessions, 0);
	tc_fini(&t);
}

/* The NIC's side of the format: a title carries the count and the
 * compressed format, mini 0 sits in the entry after it, error
 * completions stay plain, the title's op_own is the last store. */
Test(simnic, session_layout)
{
	struct rxs_params p;
	struct tc t;
	rxs_params_defaults(&p);
	p.ring = 64;
	p.frame = 200;
	p.seconds = 0;
	p.max_packets = 20; /* one burst, nothing consumed: 20 in one session */
	p.cqe_comp = true;
	cr_assert_eq(tc_init(&t, &p, 0), 0);
	cr_assert_eq(rxs_nic_start(t.nic), 0);
	cr_assert_eq(rxs_nic_join(t.nic), 0);
	const struct rxs_ring *r = &t.q[0].r;
	struct mlx5_cqe64 *title = rxs_cq_peek(r, 0);
	cr_assert_not_null(title);
	cr_assert(rxs_cqe_compressed(title));
	cr_assert_eq(rxs_cqe_opcode(title), MLX5_CQE_RESP_SEND);
	cr_assert_eq(rxs_cqe_session_len(title), 20);
	cr_assert_eq(be16toh(title->wqe_counter), 0);
	cr_assert_eq(title->l4_hdr_type_etc, (RXS_CQE_L4_UDP << 4) | (MLX5_CQE_L3_HDR_TYPE_IPV4 << 2));
	/* minis 0-7 in entry 1, 8-15 in entry 8, 16-19 in entry 16 */
	const struct rxs_mini_cqe8 *m0 = (const void *)&r->cq_buf[1];
	const struct rxs_mini_cqe8 *m8 = (const void *)&r->cq_buf[8];
	const struct rxs_mini_cqe8 *m16 = (const void *)&r->cq_buf[16];
	cr_assert_eq(rxs_mini_cqe(r, 0, 0), &m0[0]);
	cr_assert_eq(rxs_mini_cqe(r, 0, 9), &m8[1]);
	cr_assert_eq(rxs_mini_cqe(r, 0, 19), &m16[3]);
	for (uint32_t i = 0; i < 20; i++)
		cr_assert_eq(be32toh(rxs_mini_cqe(r, 0, i)->byte_cnt), 200, "mini %u", i);
	/* the entries after the session were never written */
	cr_assert_null(rxs_cq_peek(r, 20));
	tc_fini(&t);
}

/* Fix 8: while a queue's RQ is dry the NIC fetches its doorbell record at
 * most once per burst (a NIC does not poll host memory per dropped
 * packet); catches a NIC that re-reads it for every due packet. */
Test(simnic, dry_rq_doorbell_fetched_once_per_burst)
{
	struct rxs_params p;
	struct tc t;
	rxs_params_defaults(&p);
	p.ring = 16;
	p.frame = 64;
	p.seconds = 0;
	p.max_packets = 3200; /* 100 full bursts, nobody reposts */
	cr_assert_eq(tc_init(&t, &p, 0), 0);
	cr_assert_eq(rxs_nic_start(t.nic), 0);
	cr_assert_eq(rxs_nic_join(t.nic), 0);
	struct rxs_counters c;
	struct rxs_stats st;
	rxs_nic_counters(t.nic, 0, &c);
	rxs_nic_stats(t.nic, &st);
	cr_assert_eq(c.received, 16);
	cr_assert_eq(c.out_of_buffer, 3200 - 16);
	cr_assert_leq(c.dbrec_reads, st.bursts + 1, "%lu doorbell fetches in %lu bursts",
		      (unsigned long)c.dbrec_reads, (unsigned long)st.bursts);
	tc_fini(&t);
}

/* ------------------------------------------------ parallel DMA writers */

/* The invariants check_accounting asserts, counted instead: how many
 * fail. A broken NIC must make this nonzero. */
static int accounting_violations(struct tc *t)
{
	int bad = 0;
	struct rxs_counters tot;
	rxs_nic_counters(t->nic, UINT32_MAX, &tot);
	bad += tot.offered != tot.received + tot.out_of_buffer;
	for (uint32_t qi = 0; qi < t->nq; qi++) {
		struct rxs_counters c;
		struct tc_queue *q = &t->q[qi];
		rxs_nic_counters(t->nic, qi, &c);
		bad += c.offered != c.received + c.out_of_buffer;
		bad += c.received != q->good + q->errors;
		bad += q->backwards != 0;
		bad += q->bad_hdr != 0;
		bad += q->bad_stamp != 0;
		bad += q->bad_session != 0;
		bad += q->bad_wqe != 0;
		bad += q->bad_order != 0;
		bad += q->next_seq > c.offered;
		bad += q->gaps + (c.offered - q->next_seq) != c.out_of_buffer + c.errors;
	}
	return bad;
}

/* One writer-path run with a consumer that keeps up: the ring holds more
 * WQEs than packets offered, so no packet may find the RQ empty, and every
 * sequence number must arrive once, in order, in WQE order. */
static void writers_exact(uint32_t writers, uint32_t sges, enum rx_payload pay, bool comp,
			  uint32_t queues)
{
	struct rxs_params p;
	struct tc t;
	rxs_params_defaults(&p);
	p.queues = queues;
	p.threads = 1;
	p.writers = writers;
	p.ring = 16384;
	p.sges = sges;
	p.frame = 256;
	p.payload = pay;
	p.cqe_comp = comp;
	p.seconds = 0;
	p.max_packets = 12000 * queues;
	p.rate_pps = 0;
	cr_assert_eq(tc_init(&t, &p, sges == 2 ? 64 : 0), 0);
	/* one writer publishes its runs in CQ order; several may make a
	 * later run visible first (the consumer still reads in order) */
	t.check_order = !comp && writers == 1;
	run_consumer(&t);
	check_accounting(&t);
	cr_assert_eq(accounting_violations(&t), 0);
	struct rxs_counters c;
	rxs_nic_counters(t.nic, UINT32_MAX, &c);
	cr_assert_eq(c.offered, p.max_packets, "W=%u: offered %lu", writers,
		     (unsigned long)c.offered);
	cr_assert_eq(c.out_of_buffer, 0, "W=%u: the ring never ran dry", writers);
	cr_assert_eq(c.received, p.max_packets);
	for (uint32_t qi = 0; qi < queues; qi++) {
		rxs_nic_counters(t.nic, qi, &c);
		cr_assert_eq(t.q[qi].gaps, 0, "W=%u queue %u: sequence gaps", writers, qi);
		cr_assert_eq(t.q[qi].next_seq, c.offered, "W=%u queue %u: last seq", writers, qi);
		if (comp)
			cr_assert_gt(t.q[qi].sessions, 0, "W=%u: no session written", writers);
	}
	/* every writer claimed runs (the claim is shared, not one writer's) */
	uint32_t active = 0;
	for (uint32_t w = 0; w < writers; w++) {
		struct rxs_thread_stats ts;
		rxs_nic_thread_stats(t.nic, w, &ts);
		active += ts.cnt.offered > 0;
	}
	cr_assert_geq(active, 1);
	tc_fini(&t);
}

Test(simnic, writers_1_2_4_in_order_single_and_hds)
{
	static const uint32_t ws[] = {1, 2, 4};
	for (size_t i = 0; i < 3; i++) {
		writers_exact(ws[i], 1, RX_PAYLOAD_STAMP, false, 1);
		writers_exact(ws[i], 2, RX_PAYLOAD_STAMP, false, 1);
		writers_exact(ws[i], 2, RX_PAYLOAD_FULL, false, 2);
		writers_exact(ws[i], 1, RX_PAYLOAD_NONE, false, 1);
	}
}

Test(simnic, writers_1_2_4_compressed_sessions_whole)
{
	static const uint32_t ws[] = {1, 2, 4};
	for (size_t i = 0; i < 3; i++) {
		writers_exact(ws[i], 1, RX_PAYLOAD_STAMP, true, 1);
		writers_exact(ws[i], 2, RX_PAYLOAD_STAMP, true, 2);
	}
}

/* A small ring and a slow consumer: writers find the RQ empty; every
 * packet is received or out_of_buffer, and the sequence gaps the consumer
 * sees are exactly the out_of_buffer the NIC counted. */
Test(simnic, writers_overloaded_conserve)
{
	static const uint32_t ws[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		for (int comp = 0; comp < 2; comp++) {
			struct rxs_params p;
			struct tc t;
			rxs_params_defaults(&p);
			p.writers = ws[i];
			p.ring = 64;
			p.frame = 128;
			p.seconds = 0;
			p.max_packets = 40000;
			p.cqe_comp = comp;
			cr_assert_eq(tc_init(&t, &p, 0), 0);
			t.spin_per_pkt = (uint64_t)(rxp_clock_get()->hz / 2e6); /* 0.5 us */
			run_consumer(&t);
			check_accounting(&t);
			struct rxs_counters c;
			rxs_nic_counters(t.nic, 0, &c);
			cr_assert_eq(c.offered, 40000);
			cr_assert_gt(c.out_of_buffer, 0, "W=%u: the consumer never fell behind",
				     ws[i]);
			tc_fini(&t);
		}
	}
}

/* Nobody consumes: exactly the posted WQEs (or the CQ's entries, when
 * the CQ is smaller) complete, everything else is out_of_buffer. */
Test(simnic, writers_out_of_buffer_exact)
{
	for (uint32_t w = 2; w <= 4; w += 2) {
		struct rxs_params p;
		struct tc t;
		rxs_params_defaults(&p);
		p.writers = w;
		p.ring = 64;
		p.frame = 64;
		p.seconds = 0;
		p.max_packets = 1000;
		cr_assert_eq(tc_init(&t, &p, 0), 0);
		cr_assert_eq(rxs_nic_start(t.nic), 0);
		cr_assert_eq(rxs_nic_join(t.nic), 0);
		struct rxs_counters c;
		rxs_nic_counters(t.nic, 0, &c);
		cr_assert_eq(c.received, 64, "W=%u: %lu CQEs for 64 WQEs", w,
			     (unsigned long)c.received);
		cr_assert_eq(c.out_of_buffer, 1000 - 64);
		cr_assert_eq(c.cq_full, 0);
		tc_run(&t);
		check_accounting(&t);
		tc_fini(&t);

		/* a CQ of 16 fills before the RQ runs dry */
		p.cq_depth = 16;
		cr_assert_eq(tc_init(&t, &p, 0), 0);
		cr_assert_eq(rxs_nic_start(t.nic), 0);
		cr_assert_eq(rxs_nic_join(t.nic), 0);
		rxs_nic_counters(t.nic, 0, &c);
		cr_assert_eq(c.received, 16);
		cr_assert_eq(c.out_of_buffer, 1000 - 16);
		cr_assert_eq(c.cq_full, 1000 - 16);
		tc_fini(&t);
	}
}

/* Deliberately broken claim: one writer's third claim takes its WQEs
 * without advancing the producer, so two runs use the same WQEs. The
 * checks the writer tests rely on must catch it. */
Test(simnic, writers_duplicate_claim_is_caught)
{
	struct rxs_params p;
	struct tc t;
	rxs_params_defaults(&p);
	p.writers = 2;
	p.ring = 16384;
	p.frame = 256;
	p.seconds = 0;
	p.max_packets = 12000;
	p.fault_dup_claim = 3;
	cr_assert_eq(tc_init(&t, &p, 0), 0);
	run_consumer(&t);
	cr_assert_gt(accounting_violations(&t), 0, "a WQE used twice went unnoticed");
	tc_fini(&t);
}

/* The completion gate under test control: writer 0's ticket t is done
 * once gate_level >= t. */
static uint64_t gate_level;
static uint64_t test_gate(void *arg, uint32_t writer)
{
	(void)arg;
	(void)writer;
	return __atomic_load_n(&gate_level, __ATOMIC_ACQUIRE);
}

/* Wait (bounded) until queue 0's CQ entry ci is software's. */
static bool wait_cqe(struct tc *t, uint32_t ci)
{
	for (long i = 0; i < 20000000; i++) {
		if (rxs_cq_peek(&t->q[0].r, ci))
			return true;
		sched_yield();
	}
	return false;
}

/* Completions are published only when their run's copy has landed: a
 * run written but not complete shows no CQE, the first run's completion
 * shows exactly its entries, and the NIC kept writing meanwhile. */
Test(simnic, writers_publish_only_completed_runs)
{
	struct rxs_params p;
	struct tc t;
	rxs_params_defaults(&p);
	p.writers = 1;
	p.ring = 64;
	p.frame = 128;
	p.seconds = 0;
	p.max_packets = 40; /* runs of 32 and 8 */
	p.gate_fn = test_gate;
	gate_level = 0;
	cr_assert_eq(tc_init(&t, &p, 0), 0);
	cr_assert_eq(rxs_nic_start(t.nic), 0);
	struct rxs_counters c;
	for (long i = 0; i < 20000000; i++) {
		rxs_nic_counters(t.nic, 0, &c);
		if (c.received == 40)
			break;
		sched_yield();
	}
	cr_assert_eq(c.received, 40, "both runs written while the first copy is in flight");
	/* the last packet's header landed, no completion is out */
	cr_assert_eq(rxs_hdr_seq(tc_hdr_slot(&t, 0, 39)), 39);
	cr_assert_null(rxs_cq_peek(&t.q[0].r, 0), "a CQE before its run completed");
	cr_assert(!rxs_nic_done(t.nic));
	__atomic_store_n(&gate_level, 1, __ATOMIC_RELEASE);
	cr_assert(wait_cqe(&t, 31), "the first run's completions never appeared");
	for (uint32_t i = 0; i < 32; i++)
		cr_assert_not_null(rxs_cq_peek(&t.q[0].r, i));
	cr_assert_null(rxs_cq_peek(&t.q[0].r, 32), "the second run is not complete yet");
	__atomic_store_n(&gate_level, 2, __ATOMIC_RELEASE);
	tc_run(&t);
	cr_assert_eq(rxs_nic_join(t.nic), 0);
	check_accounting(&t);
	cr_assert_eq(t.q[0].good, 40);
	tc_fini(&t);
}

/* Runs waiting for their completion gate hold every WQE, so the RQ runs
 * dry and the writer's claims find none; once the gate opens the writer
 * must still publish those runs while it goes on claiming (and dropping)
 * packets. Before, a writer retired its runs only after writing one that
 * found WQEs: with the RQ dry it never did again, and the queue stalled
 * for good (GPU hds with 8 writers on the H200 host). No timing: the NIC
 * runs until stopped, the test waits on the CQE with a bound. */
Test(simnic, writers_publish_gated_runs_while_the_rq_is_dry)
{
	struct rxs_params p;
	struct tc t;
	rxs_params_defaults(&p);
	p.writers = 1;
	p.ring = 64;
	p.frame = 128;
	p.seconds = 3600; /* until rxs_nic_stop */
	p.gate_fn = test_gate;
	gate_level = 0;
	cr_assert_eq(tc_init(&t, &p, 0), 0);
	cr_assert_eq(rxs_nic_start(t.nic), 0);
	struct rxs_counters c = {0};
	for (long i = 0; i < 20000000 && !c.out_of_buffer; i++) {
		rxs_nic_counters(t.nic, 0, &c);
		sched_yield();
	}
	cr_assert_gt(c.out_of_buffer, 0, "the RQ never ran dry");
	cr_assert_eq(c.received, 64, "every WQE is in a gated run");
	cr_assert_null(rxs_cq_peek(&t.q[0].r, 0), "a CQE before its run's gate opened");
	__atomic_store_n(&gate_level, 2, __ATOMIC_RELEASE); /* both runs' tickets */
	cr_assert(wait_cqe(&t, 63), "gated runs never published while the RQ was dry");
	rxs_nic_stop(t.nic);
	tc_run(&t);
	cr_assert_eq(rxs_nic_join(t.nic), 0);
	check_accounting(&t);
	tc_fini(&t);
}

/* Completions delayed by a host-memory gate (N polls, as GPU copies
 * land later than the writes) with two writers: the CQ still fills in
 * order, sessions whole, nothing lost or repeated. */
Test(simnic, writers_delayed_completions_stay_in_order)
{
	for (int comp = 0; comp < 2; comp++) {
		struct rxs_params p;
		struct tc t;
		rxs_params_defaults(&p);
		p.writers = 2;
		p.ring = 256;
		p.frame = 256;
		p.sges = 2;
		p.seconds = 0;
		p.max_packets = 20000;
		p.gate_polls = 5;
		p.cqe_comp = comp;
		cr_assert_eq(tc_init(&t, &p, 64), 0);
		run_consumer(&t);
		check_accounting(&t);
		struct rxs_counters c;
		rxs_nic_counters(t.nic, 0, &c);
		cr_assert_eq(c.offered, 20000);
		tc_fini(&t);
	}
}

Test(simnic, writers_params_checked)
{
	struct rxs_params p;
	struct rx_config c;
	struct rxs_nic *bad = NULL;
	char err[256] = "";
	rxs_params_defaults(&p);
	p.writers = RXS_MAX_WRITERS + 1;
	cr_assert_eq(rxs_nic_open(&p, &bad, err, sizeof(err)), -EINVAL);
	cr_assert(strncmp(err, "dma-writers:", 12) == 0, "%s", err);
	p.writers = 4;
	p.ring = 16; /* 4 writers x 8 WQEs a run need 32 */
	cr_assert_eq(rxs_nic_open(&p, &bad, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "ring") != NULL, "%s", err);
	rxs_params_defaults(&p);
	p.train = RXS_BURST + 1; /* a train is one writer's run */
	cr_assert_eq(rxs_nic_open(&p, &bad, err, sizeof(err)), -EINVAL);
	cr_assert(strncmp(err, "train:", 6) == 0, "%s", err);
	cr_assert_null(bad);
	p.train = 0;
	p.line_gbps = 0.5;
	cr_assert_eq(rxs_nic_open(&p, &bad, err, sizeof(err)), -EINVAL);
	cr_assert(strncmp(err, "line:", 5) == 0, "%s", err);
	cr_assert_null(bad);

	rx_config_defaults(&c);
	snprintf(c.device, sizeof(c.device), "sim:writers=4");
	cr_assert_eq(rxs_params_of_run(&c, NULL, NULL, &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(p.writers, 4);
	c.dma_writers = 2;
	cr_assert_eq(rxs_params_of_run(&c, NULL, NULL, &p, err, sizeof(err)), -EINVAL);
	cr_assert(strncmp(err, "dma-writers:", 12) == 0, "%s", err);
	c.dma_writers = 0;
	snprintf(c.device, sizeof(c.device), "sim:writers=17");
	cr_assert_eq(rxs_params_of_run(&c, NULL, NULL, &p, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "device: writers=17 out of range 1..16");
	c.dma_writers = 17; /* the knob takes it: the limit is the NIC's */
	snprintf(c.device, sizeof(c.device), "sim");
	cr_assert_eq(rxs_params_of_run(&c, NULL, NULL, &p, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "dma-writers: 17 out of range 1..16");
	/* the pair's limit names the writers as they were asked, and their count */
	cr_assert_eq(rxs_threads_check(8, 8192, &(struct rx_dev_threads){8, 16},
				       RXS_ASKED_WRITERS_DEV, err, sizeof(err)),
		     -EINVAL);
	cr_assert_str_eq(err, "device: writers=16 writers x 8 NIC threads exceed 64 threads");
	cr_assert_eq(rxs_threads_check(8, 8192, &(struct rx_dev_threads){8, 16}, 0, err,
				       sizeof(err)),
		     -EINVAL);
	cr_assert_str_eq(err, "dma-writers: 16 writers x 8 NIC threads exceed 64 threads");
	c.dma_writers = 2;
	/* auto yields to the knob; line= and train= are device options */
	snprintf(c.device, sizeof(c.device), "sim:writers=auto,line=100G,train=8");
	cr_assert_eq(rxs_params_of_run(&c, NULL, NULL, &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(p.writers, 2);
	cr_assert_eq(p.train, 8);
	cr_assert_float_eq(p.line_gbps, 100.0, 1e-9);
	snprintf(c.device, sizeof(c.device), "sim:line=4000G");
	cr_assert_eq(rxs_params_of_run(&c, NULL, NULL, &p, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "line=4000G") != NULL, "%s", err);
	snprintf(c.device, sizeof(c.device), "sim:train=0");
	cr_assert_eq(rxs_params_of_run(&c, NULL, NULL, &p, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "train=0") != NULL, "%s", err);
	snprintf(c.device, sizeof(c.device), "sim");
	c.ring = 16;
	c.dma_writers = 4;
	cr_assert_eq(rxs_params_of_run(&c, NULL, NULL, &p, err, sizeof(err)), -EINVAL);
	cr_assert(strncmp(err, "dma-writers:", 12) == 0, "%s", err);

	/* placement: writers get cores after the NIC threads' first; auto
	 * takes the cores the other roles leave */
	int cores[16];
	for (int i = 0; i < 16; i++)
		cores[i] = i;
	struct rx_placement pl;
	struct rx_caps caps;
	rxs_caps(&caps);
	rx_config_defaults(&c);
	cr_assert_eq(c.dma_writers, 0, "auto is the default");
	c.app = RX_APP_THREAD;
	cr_assert_eq(rx_place_on(&c, &caps, cores, 16, &pl, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(pl.nic_threads, 1);
	cr_assert_eq(pl.dma_writers, (int)RXS_AUTO_WRITERS,
		     "16 cores - rx - app leave 13: auto takes %u", RXS_AUTO_WRITERS);
	cr_assert_eq(pl.rx_core[0], (int)RXS_AUTO_WRITERS);
	cr_assert_eq(rx_place_on(&c, &caps, cores, 4, &pl, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(pl.dma_writers, 2, "4 cores - rx - app - the first writer leave one more");
	c.app = RX_APP_AUTO;
	cr_assert_eq(rx_place_on(&c, &caps, cores, 2, &pl, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(pl.dma_writers, 1, "2 cores: one writer");
	c.app = RX_APP_THREAD;
	c.dma_writers = 4;
	cr_assert_eq(rx_place_on(&c, &caps, cores, 4, &pl, err, sizeof(err)), -EINVAL);
	cr_assert(strncmp(err, "dma-writers:", 12) == 0, "%s", err);
	cr_assert_eq(rx_place_on(&c, &caps, cores, 16, &pl, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(rxs_params_of_run(&c, &caps, &pl, &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(p.writers, 4);
	cr_assert_eq(p.asked.writers, 4);
	cr_assert_eq(p.thread_core[3], 3);
	cr_assert_eq(p.thread_core[4], -1);
}

/* ------------------------------------------- the NIC's threads, placed */

/* Auto NIC threads take the cores the rx workers and app threads leave,
 * at most one per queue (the rule is the NIC's: rxs_dev_ops.size). */
Test(simnic, place_auto_nic_threads_take_the_spare_cores)
{
	struct rx_config c;
	struct rx_placement pl;
	struct rx_caps caps;
	char err[256] = "";
	int sixteen[16];
	for (int i = 0; i < 16; i++)
		sixteen[i] = i;
	rxs_caps(&caps);
	cr_assert(caps.dev == &rxs_dev_ops);
	rx_config_defaults(&c);
	c.dma_writers = 1; /* NIC threads here; auto writers: writers_params_checked */
	/* 2 cores, 1 queue: one NIC thread, nothing changes */
	cr_assert_eq(rx_place_on(&c, &caps, sixteen, 2, &pl, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(pl.nic_threads, 1);
	cr_assert_eq(pl.nic_cores[0], 0);
	cr_assert_eq(pl.nic_cores[1], -1);
	cr_assert_eq(pl.needed, 2);
	/* 2 queues on 8: rx 2 + app 2, NIC threads min(2, 4 left) = 2 */
	c.queues = 2;
	cr_assert_eq(rx_place_on(&c, &caps, sixteen, 8, &pl, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(pl.nic_threads, 2);
	cr_assert_eq(pl.nic_core, 0);
	cr_assert_eq(pl.nic_cores[1], 1);
	cr_assert_eq(pl.rx_core[0], 2);
	cr_assert_eq(pl.app_core[1], 5);
	cr_assert_eq(pl.needed, 6);
	/* 4 queues on 16: app threads, 4 NIC threads of the 8 left */
	c.queues = 4;
	cr_assert_eq(rx_place_on(&c, &caps, sixteen, 16, &pl, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(pl.app, RX_APP_THREAD);
	cr_assert_eq(pl.nic_threads, 4);
	cr_assert_eq(pl.needed, 12);
	/* 3 queues on 7: app threads (1 + 6 fit), 1 core left -> 1 NIC thread */
	c.queues = 3;
	cr_assert_eq(rx_place_on(&c, &caps, sixteen, 7, &pl, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(pl.nic_threads, 1);
	cr_assert_eq(pl.needed, 7);
	/* oversubscribed: still one NIC thread */
	c.queues = 2;
	c.allow_oversubscribe = true;
	cr_assert_eq(rx_place_on(&c, &caps, sixteen, 2, &pl, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(pl.nic_threads, 1);
}

/* The count asked for, by --nic-threads or the device's nics=: never more
 * than the queues, and the two agree. */
Test(simnic, place_asked_nic_threads_checked)
{
	struct rx_config c;
	struct rx_placement pl;
	struct rx_caps caps;
	struct rx_dev_threads asked;
	char err[256] = "";
	const int eight[8] = {0, 1, 2, 3, 4, 5, 6, 7};
	rxs_caps(&caps);
	rx_config_defaults(&c);
	c.queues = 2;
	c.nic_threads = 3;
	cr_assert_eq(rx_place_on(&c, &caps, eight, 8, &pl, err, sizeof(err)), -EINVAL);
	cr_assert(strncmp(err, "nic-threads: 3 NIC threads for 2 queues", 39) == 0, "%s", err);
	/* the device option, alone and disagreeing */
	c.nic_threads = 0;
	snprintf(c.device, sizeof(c.device), "sim:rate=1M,nics=2");
	cr_assert_eq(caps.dev->check(&c, &caps, &asked, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(asked.threads, 2);
	cr_assert_eq(asked.writers, 0, "auto");
	cr_assert_eq(rx_place_on(&c, &caps, eight, 4, &pl, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(pl.nic_threads, 2);
	c.nic_threads = 1;
	cr_assert_eq(rx_place_on(&c, &caps, eight, 8, &pl, err, sizeof(err)), -EINVAL);
	cr_assert(strncmp(err, "nic-threads:", 12) == 0, "%s", err);
	c.nic_threads = 2;
	cr_assert_eq(caps.dev->check(&c, &caps, &asked, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(asked.threads, 2);
	/* the same rule, named as the user wrote it */
	c.nic_threads = 0;
	snprintf(c.device, sizeof(c.device), "sim:nics=3");
	cr_assert_eq(caps.dev->check(&c, &caps, NULL, err, sizeof(err)), -EINVAL);
	cr_assert(strncmp(err, "device: nics=3 NIC threads for 2 queues", 39) == 0, "%s", err);
}

/*
 * The ring the NIC gets is the one its rules see: the mlx5 PMD counts
 * descriptors in segments (dpdk sim: caps.rq_segments), so hds --ring 64
 * is 32 WQEs, 4 writers at most (catches: caps and the placement judged
 * the writers on --ring while open gave the NIC half of it).
 */
Test(simnic, hds_ring_of_segments_holds_the_writers)
{
	struct rx_config c;
	struct rx_placement pl;
	struct rx_caps verbs, dpdk;
	struct rxs_params p;
	char err[256] = "";
	int sixteen[16];
	for (int i = 0; i < 16; i++)
		sixteen[i] = i;
	rxs_caps(&verbs);
	rxs_caps(&dpdk);
	dpdk.rq_segments = true;
	rx_config_defaults(&c);
	c.mode = RX_MODE_HDS;
	c.ring = 64;
	c.batch = 32;
	c.burst = 32;
	cr_assert_eq(rxs_ring_wqes(&c, &verbs), 64);
	cr_assert_eq(rxs_ring_wqes(&c, &dpdk), 32);
	cr_assert_eq(rxs_ring_wqes(&c, NULL), 64);
	c.dma_writers = 8;
	cr_assert_eq(rx_config_validate_fields(&c, &verbs, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(rx_config_validate_fields(&c, &dpdk, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "dma-writers: 8 writers need a ring of at least 64 WQEs (8 each), "
			      "the NIC's ring has 32");
	/* auto takes what the ring holds */
	c.dma_writers = 0;
	c.app = RX_APP_THREAD;
	cr_assert_eq(rx_place_on(&c, &dpdk, sixteen, 16, &pl, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(pl.dma_writers, 4, "32 WQEs / 8 a run");
	cr_assert_eq(rxs_params_of_run(&c, &dpdk, &pl, &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(p.ring, 32);
	cr_assert_eq(p.writers, 4);
	cr_assert_eq(p.asked.writers, 0, "auto");
	cr_assert_eq(p.thread_core[3], 3);
	cr_assert_eq(p.thread_core[4], -1);
	/* single: every descriptor is a WQE */
	c.mode = RX_MODE_SINGLE;
	cr_assert_eq(rxs_ring_wqes(&c, &dpdk), 64);
	cr_assert_eq(rx_place_on(&c, &dpdk, sixteen, 16, &pl, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(pl.dma_writers, (int)RXS_AUTO_WRITERS);
}

/*
 * Results written before the record ({"asked","resolved","actual"}) read
 * as they were: the counts were numbers (.nic.nic_threads, .nic.dma_writers,
 * with .nic.dma_writers_auto) and the config and placement held copies.
 * The fixture is such a run: `rxray run --device sim:writers=2
 * --nic-threads 1`, trimmed. Catches: a reader that takes only the object.
 */
Test(simnic, reads_a_result_from_before_the_record)
{
	struct rxr_result *r = NULL;
	struct rx_dev_record rec;
	struct rx_caps caps;
	char err[256] = "";
	rxr_result_read(SIMNIC_DATA_DIR "/result_before_nic_record.json", &r, err, sizeof(err));
	cr_assert_not_null(r, "the reader refused it: %s", err);
	json_t *nic = json_object_get(r->extra, "nic");
	cr_assert(json_is_integer(json_object_get(nic, "dma_writers")), "the old shape");
	rxs_caps(&caps);
	cr_assert_eq(caps.dev->record(r, &rec), 0);
	cr_assert_eq(rec.actual.threads, 1);
	cr_assert_eq(rec.actual.writers, 2);
	cr_assert_eq(rec.resolved.threads, 1);
	cr_assert_eq(rec.resolved.writers, 2);
	cr_assert_eq(rec.asked.threads, 1, "--nic-threads 1");
	cr_assert_eq(rec.asked.writers, 2, "writers=2: not auto, though --dma-writers was");
	/* older still: no dma_writers_auto, the knob was all there was */
	json_object_del(nic, "dma_writers_auto");
	cr_assert_eq(caps.dev->record(r, &rec), 0);
	cr_assert_eq(rec.asked.writers, 0, "auto, as the summary of the time said");
	cr_assert_eq(rec.actual.writers, 2);
	/* a result without a software NIC has no record */
	json_object_del(r->extra, "nic");
	cr_assert_eq(caps.dev->record(r, &rec), -ENOENT);
	rxr_result_free(r);
}

/* A second phase (rxs_nic_rearm, as after a warm-up) on the writer path:
 * sequence numbers, WQEs and CQ entries carry on, counters and quotas
 * start again. */
Test(simnic, writers_rearm_carries_on)
{
	struct rxs_params p;
	struct tc t;
	rxs_params_defaults(&p);
	p.writers = 2;
	p.ring = 16384;
	p.frame = 128;
	p.seconds = 0;
	p.max_packets = 5000;
	cr_assert_eq(tc_init(&t, &p, 0), 0);
	run_consumer(&t);
	cr_assert_eq(t.q[0].next_seq, 5000);
	cr_assert_eq(rxs_nic_rearm(t.nic, 0), 0);
	run_consumer(&t);
	struct rxs_counters c;
	rxs_nic_counters(t.nic, 0, &c);
	cr_assert_eq(c.offered, 5000, "the phase's quota starts again");
	cr_assert_eq(c.received, 5000);
	struct tc_queue *q = &t.q[0];
	cr_assert_eq(q->next_seq, 10000, "sequence numbers carry on");
	cr_assert_eq(q->good, 10000);
	cr_assert_eq(q->gaps + q->backwards + q->bad_wqe + q->bad_order + q->bad_hdr, 0);
	tc_fini(&t);
}

/* A deliberately broken writer: its third run's completions go out
 * before its data (params.fault_early_cqe), one writer and several. The
 * consumer's checks must catch the stale headers. */
Test(simnic, writers_cqe_before_data_is_caught)
{
	static const uint32_t ws[] = {1, 3};
	for (size_t i = 0; i < 2; i++) {
		struct rxs_params p;
		struct tc t;
		rxs_params_defaults(&p);
		p.writers = ws[i];
		p.ring = 16384;
		p.frame = 256;
		p.seconds = 0;
		p.max_packets = 12000;
		p.fault_early_cqe = 3;
		cr_assert_eq(tc_init(&t, &p, 0), 0);
		run_consumer(&t);
		cr_assert_gt(t.q[0].bad_hdr, 0, "W=%u: a CQE before its header went unnoticed",
			     ws[i]);
		cr_assert_gt(accounting_violations(&t), 0);
		tc_fini(&t);
	}
}

/*
 * The fault switch that publishes before landing (params.fault_publish_
 * early) is caught by the check every gated test makes: with the gate
 * closed (no copy has landed) and every run written, a CQE is visible.
 * Without the fault none is (writers_publish_only_completed_runs too),
 * for one writer and for several.
 */
static bool cqe_before_gate(uint32_t writers, uint32_t fault)
{
	struct rxs_params p;
	struct tc t;
	rxs_params_defaults(&p);
	p.writers = writers;
	p.ring = 256;
	p.frame = 128;
	p.seconds = 0;
	p.max_packets = 128; /* four runs of 32 */
	p.gate_fn = test_gate;
	p.fault_publish_early = fault;
	gate_level = 0;
	cr_assert_eq(tc_init(&t, &p, 0), 0);
	cr_assert_eq(rxs_nic_start(t.nic), 0);
	struct rxs_counters c = {0};
	for (long i = 0; i < 20000000 && c.received < 128; i++) {
		rxs_nic_counters(t.nic, 0, &c);
		sched_yield();
	}
	cr_assert_eq(c.received, 128, "W=%u: every run written while the gate is closed", writers);
	/* the fault's CQE may trail the counter: wait for it (bounded); the
	 * correct NIC's absence is checked at once, as the gated tests do */
	bool seen = fault ? wait_cqe(&t, 0) : rxs_cq_peek(&t.q[0].r, 0) != NULL;
	__atomic_store_n(&gate_level, UINT64_MAX, __ATOMIC_RELEASE);
	tc_run(&t);
	cr_assert_eq(rxs_nic_join(t.nic), 0);
	tc_fini(&t);
	return seen;
}

Test(simnic, writers_publish_before_landing_is_caught)
{
	static const uint32_t ws[] = {1, 3};
	for (size_t i = 0; i < 2; i++) {
		cr_assert(!cqe_before_gate(ws[i], 0), "W=%u: a CQE before its gate opened", ws[i]);
		cr_assert(cqe_before_gate(ws[i], 1),
			  "W=%u: the fault published before landing and no check saw it", ws[i]);
	}
}

/*
 * The arrival pattern is the wire's, whatever the writer count: trains of
 * `train` packets, each claimed whole by one writer (so exactly
 * offered / train runs among all writers), the CQE timestamps of a
 * train one wire time apart at the line rate and the trains one train
 * interval apart, and no completion visible before its timestamp. Exact
 * counts and the NIC's own timestamps: no timing is asserted.
 */
Test(simnic, arrivals_are_the_same_trains_for_every_writer_count)
{
	static const uint32_t ws[] = {1, 2, 4};
	const uint32_t train = 8, n = 4000;
	const double rate = 2e6, gbps = 100;
	for (size_t i = 0; i < 3; i++) {
		struct rxs_params p;
		struct tc t;
		rxs_params_defaults(&p);
		p.writers = ws[i];
		p.ring = 8192;
		p.frame = 256;
		p.seconds = 0;
		p.max_packets = n;
		p.rate_pps = rate;
		p.train = train;
		p.line_gbps = gbps;
		cr_assert_eq(tc_init(&t, &p, 0), 0);
		t.ts_log = calloc(n, sizeof(*t.ts_log));
		cr_assert_not_null(t.ts_log);
		t.ts_cap = n;
		run_consumer(&t);
		check_accounting(&t);
		struct rxs_counters c;
		struct rxs_stats st;
		rxs_nic_counters(t.nic, 0, &c);
		rxs_nic_stats(t.nic, &st);
		cr_assert_eq(c.received, n, "W=%u: the ring never ran dry", ws[i]);
		cr_assert_eq(st.bursts, n / train, "W=%u: %lu runs for %u trains", ws[i],
			     (unsigned long)st.bursts, n / train);
		double hz = rxp_clock_get()->hz;
		double wire = hz * 8.0 * (p.frame + 24) / (gbps * 1e9);
		double period = hz * train / rate;
		uint32_t off_wire = 0, off_train = 0;
		for (uint32_t j = 1; j < n; j++) {
			double d = (double)(t.ts_log[j] - t.ts_log[j - 1]);
			if (j % train && (d < wire - 2 || d > wire + 2))
				off_wire++;
			if (j >= train) {
				double e = (double)(t.ts_log[j] - t.ts_log[j - train]);
				if (e < period - 2 || e > period + 2)
					off_train++;
			}
		}
		cr_assert_eq(off_wire, 0, "W=%u: %u packets not one wire time after the last",
			     ws[i], off_wire);
		cr_assert_eq(off_train, 0, "W=%u: %u packets not one train interval apart", ws[i],
			     off_train);
		cr_assert_eq(t.q[0].seen_early, 0, "W=%u: %lu completions seen before their arrival",
			     ws[i], (unsigned long)t.q[0].seen_early);
		free(t.ts_log);
		t.ts_log = NULL;
		tc_fini(&t);
	}
}

/*
 * Late drops (simnic.h "Late"). Paced at 2 Mpps with nobody consuming, the
 * ring of 1024 runs dry after 1024 packets and the other 1976 of 3000
 * are out_of_buffer (the ring covers 512 us: the late limit is 51 us).
 * Whether they are the generator's loss depends on the NIC alone, so the
 * counts are exact: a writer that stops 5 ms with its first run written
 * and unpublished (params.fault_stall_train: the writer of the first
 * train) leaves every later drop behind the NIC's schedule. One writer
 * then claims trains already overdue; with three the others drop while
 * its run is the oldest not published (or, kept off the CPU meanwhile,
 * claim overdue trains themselves). The run is disturbed, with the NIC named. Without the stall
 * none of the drops is late (a writer kept off its CPU past the limit
 * would make some so: a few tries).
 */
static uint64_t late_drops_of(uint32_t writers, bool stall, bool *reason)
{
	struct rxs_params p;
	struct tc t;
	rxs_params_defaults(&p);
	p.writers = writers;
	p.ring = 1024;
	p.frame = 64;
	p.seconds = 0;
	p.max_packets = 3000;
	p.rate_pps = 2e6;
	if (stall) {
		p.fault_stall_train = 1;
		p.fault_stall_us = 5000;
	}
	cr_assert_eq(tc_init(&t, &p, 0), 0);
	cr_assert_eq(rxs_nic_start(t.nic), 0);
	cr_assert_eq(rxs_nic_join(t.nic), 0);
	struct rxs_counters c;
	rxs_nic_counters(t.nic, 0, &c);
	cr_assert_eq(c.received, 1024, "W=%u: %lu CQEs for 1024 WQEs", writers,
		     (unsigned long)c.received);
	cr_assert_eq(c.out_of_buffer, 3000 - 1024);
	cr_assert_leq(c.late_drops, c.out_of_buffer, "late drops are a subset");
	struct rxr_valid_limits lim;
	struct rxr_validity *v = NULL;
	char err[256];
	rxr_valid_limits_default(&lim);
	cr_assert_eq(rxr_validity_open(&lim, &v, err, sizeof(err)), 0, "%s", err);
	cr_assert_geq(rxs_nic_validity_add(t.nic, v), 0);
	json_t *j = rxr_validity_json(v), *x;
	size_t i;
	*reason = false;
	json_array_foreach(json_object_get(j, "reasons"), i, x) *reason |=
	    strstr(json_string_value(x), "the generator's loss, not the receiver's") != NULL;
	cr_assert(!*reason || rxr_validity_disturbed(v));
	json_decref(j);
	rxr_validity_free(v);
	tc_fini(&t);
	return c.late_drops;
}

Test(simnic, a_stalled_writer_makes_its_drops_late_and_only_then, .timeout = 60)
{
	/* without the stall: one writer and two (three on two cores would
	 * take turns on them, late by design) */
	static const uint32_t ws[] = {1, 3}, wclean[] = {1, 2};
	for (size_t i = 0; i < 2; i++) {
		bool reason;
		uint64_t late = late_drops_of(ws[i], true, &reason);
		/* catches: drops behind a stalled writer charged to the receiver */
		cr_assert_eq(late, 3000 - 1024, "W=%u: %lu of 1976 drops behind the stall late",
			     ws[i], (unsigned long)late);
		cr_assert(reason, "W=%u: no validity reason names the NIC's late drops", ws[i]);
		/* catches: every drop charged to the NIC (a receiver's drop is
		 * its own) */
		bool clean = false;
		for (int k = 0; k < 5 && !clean; k++)
			clean = late_drops_of(wclean[i], false, &reason) == 0 && !reason;
		cr_assert(clean, "W=%u: drops with the NIC on time counted late, 5 tries",
			  wclean[i]);
	}
}
