/* SPDX-License-Identifier: MIT */
/*
 * rxray run --sample's classifier (rxray/lapsplit.h) on stacks written
 * here, as the sampler would give them (leaf first, kernel frames before
 * user frames, roles from the DPDK tables): which samples are the lap's,
 * which part each is, and the result member it makes. No root, no BPF.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rxray/lapsplit.h"

#define BURST "net_null rx_pkt_burst (port 0)"

/* frames: a user function with no DPDK role, one with a role, a kernel one */
#define U(n)                                                                                       \
	{                                                                                          \
		.name = (n), .dso = "rxray", .role = RXB_ROLE_NONE                                 \
	}
#define R(n, r)                                                                                    \
	{                                                                                          \
		.name = (n), .dso = "librte_x.so", .role = (r)                                     \
	}
#define K(n)                                                                                       \
	{                                                                                          \
		.name = (n), .dso = "[kernel]", .role = RXB_ROLE_NONE, .kernel = true              \
	}
#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct rxb_lapframe in_burst[] = {R(BURST, RXB_ROLE_RX_BURST), U("eth_burst"),
					       U("rxd_rx_loop")};
static const struct rxb_lapframe at_site[] = {U("eth_burst"), U("rxd_rx_loop")};
static const struct rxb_lapframe handoff[] = {U("rx_handoff_ring"), U("rxd_rx_loop")};

/* The part named name, or NULL. */
static const struct rxb_lappart *find(const struct rxb_lapsplit *sp, const char *name)
{
	for (size_t i = 0; i < sp->nparts; i++)
		if (!strcmp(sp->parts[i].name, name))
			return &sp->parts[i];
	return NULL;
}

/* One stack counted on a fresh split (learnt first, as the fold does). */
static const struct rxb_lappart *one(struct rxb_lapsplit *sp, const struct rxb_lapframe *f,
				     size_t n, const char *name)
{
	rxb_lapsplit_init(sp);
	rxb_lapsplit_learn(sp, f, n, 1);
	rxb_lapsplit_add(sp, f, n, 1);
	cr_assert_eq(sp->nparts, 1, "one stack, %zu parts", sp->nparts);
	const struct rxb_lappart *p = find(sp, name);
	cr_assert_not_null(p, "no part '%s' (it is '%s')", name, sp->parts[0].name);
	return p;
}

Test(lapsplit, the_burst_function_itself_is_its_own_part)
{
	struct rxb_lapsplit sp;
	/* bug: a leaf in the PMD's burst counted as a callee or outside */
	cr_assert_eq(one(&sp, in_burst, N(in_burst), BURST)->kind, RXB_PART_RX_BURST);
	cr_assert_eq(sp.in_burst, 1);
	cr_assert_str_eq(sp.burst_fn, BURST);
}

Test(lapsplit, a_mempool_ops_entry_names_get_or_put_over_mempool_code_below_it)
{
	struct rxb_lapsplit sp;
	const struct rxb_lapframe get[] = {
	    U("rte_ring_dequeue_elems"), R("common_ring_mc_dequeue", RXB_ROLE_MP_GET),
	    U("rte_pktmbuf_alloc_bulk"), R(BURST, RXB_ROLE_RX_BURST), U("eth_burst")};
	const struct rxb_lapframe put[] = {R("common_ring_mp_enqueue", RXB_ROLE_MP_PUT),
					   R(BURST, RXB_ROLE_RX_BURST)};
	/* bug: the ring code at the leaf (a mempool name) wins over the role,
	 * and the get becomes anonymous "mempool" time */
	cr_assert_eq(one(&sp, get, N(get), "common_ring_mc_dequeue")->kind, RXB_PART_MP_GET);
	cr_assert_eq(one(&sp, put, N(put), "common_ring_mp_enqueue")->kind, RXB_PART_MP_PUT);
}

Test(lapsplit, a_refill_is_replenish_and_its_mempool_calls_are_mempool)
{
	struct rxb_lapsplit sp;
	const struct rxb_lapframe refill[] = {U("mlx5_rx_replenish_bulk_mbuf"),
					      R(BURST, RXB_ROLE_RX_BURST), U("eth_burst")};
	const struct rxb_lapframe below[] = {U("rte_mempool_ops_dequeue_bulk"),
					     U("i40e_rx_alloc_bufs"), R(BURST, RXB_ROLE_RX_BURST)};
	cr_assert_eq(one(&sp, refill, N(refill), "mlx5_rx_replenish_bulk_mbuf")->kind,
		     RXB_PART_REPLENISH);
	/* bug: the pool's time charged to the refill that called it */
	cr_assert_eq(one(&sp, below, N(below), "rte_mempool_ops_dequeue_bulk")->kind,
		     RXB_PART_MEMPOOL);
}

Test(lapsplit, another_function_the_burst_called_is_a_callee_by_its_leaf)
{
	struct rxb_lapsplit sp;
	const struct rxb_lapframe cp[] = {U("__memcpy_avx_unaligned"), U("helper"),
					  R(BURST, RXB_ROLE_RX_BURST), U("eth_burst")};
	cr_assert_eq(one(&sp, cp, N(cp), "__memcpy_avx_unaligned")->kind, RXB_PART_CALLEE);
}

Test(lapsplit, kernel_time_in_the_burst_is_named_by_its_entry)
{
	struct rxb_lapsplit sp;
	const struct rxb_lapframe k[] = {K("native_write_msr_[k]"),
					 K("asm_sysvec_apic_timer_interrupt_[k]"),
					 R(BURST, RXB_ROLE_RX_BURST), U("eth_burst")};
	/* bug: named by the kernel leaf, kernel time spreads over every
	 * function an interrupt happens to run */
	cr_assert_eq(one(&sp, k, N(k), "asm_sysvec_apic_timer_interrupt_[k]")->kind,
		     RXB_PART_KERNEL);
	cr_assert_eq(sp.in_burst, 1);
}

Test(lapsplit, the_lap_site_counts_once_learnt_and_other_stages_never)
{
	struct rxb_lapsplit sp;
	rxb_lapsplit_init(&sp);
	/* learnt from the burst's stacks, in whatever order they come */
	rxb_lapsplit_learn(&sp, handoff, N(handoff), 7);
	rxb_lapsplit_learn(&sp, at_site, N(at_site), 3);
	rxb_lapsplit_learn(&sp, in_burst, N(in_burst), 5);
	rxb_lapsplit_add(&sp, handoff, N(handoff), 7);
	rxb_lapsplit_add(&sp, at_site, N(at_site), 3);
	rxb_lapsplit_add(&sp, in_burst, N(in_burst), 5);
	cr_assert_eq(sp.samples, 15);
	/* bug: rte_eth_rx_burst's inline code (and the lap's clock read)
	 * left out of the lap that times it */
	cr_assert_eq(sp.at_site, 3);
	cr_assert_eq(sp.in_burst, 5);
	const struct rxb_lappart *site = find(&sp, "eth_burst");
	cr_assert_not_null(site);
	cr_assert_eq(site->kind, RXB_PART_LAP_SITE);
	/* bug: another stage of the thread (the hand-off) taken into the lap */
	cr_assert_null(find(&sp, "rx_handoff_ring"));
	cr_assert_eq(sp.nparts, 2);
	/* a stack cut short of the rx loop may have been the lap's: counted
	 * apart (bug: it would pass as another stage) */
	const struct rxb_lapframe cut[] = {U("rte_pktmbuf_alloc_bulk")};
	rxb_lapsplit_add(&sp, cut, N(cut), 2);
	cr_assert_eq(sp.unplaced, 2);
	cr_assert_eq(sp.samples, 17);
	cr_assert_eq(sp.in_burst + sp.at_site, 8);

	/* nothing learnt (no burst stack): the site is not known as one */
	rxb_lapsplit_init(&sp);
	rxb_lapsplit_add(&sp, at_site, N(at_site), 3);
	cr_assert_eq(sp.at_site, 0);
	cr_assert_eq(sp.nparts, 0);
}

Test(lapsplit, parts_beyond_the_table_are_one_other_part_and_nothing_is_lost)
{
	struct rxb_lapsplit sp;
	char names[40][16];
	rxb_lapsplit_init(&sp);
	for (int i = 0; i < 40; i++) {
		snprintf(names[i], sizeof(names[i]), "callee_%02d", i);
		const struct rxb_lapframe f[] = {U(names[i]), R(BURST, RXB_ROLE_RX_BURST)};
		rxb_lapsplit_add(&sp, f, N(f), (uint64_t)i + 1);
	}
	rxb_lapsplit_sort(&sp);
	cr_assert_eq(sp.nparts, RXB_LAPSPLIT_MAX_PARTS);
	uint64_t sum = 0;
	size_t rest = 0;
	for (size_t i = 0; i < sp.nparts; i++) {
		sum += sp.parts[i].samples;
		rest += sp.parts[i].kind == RXB_PART_REST;
		/* sorted, most first */
		if (i)
			cr_assert_geq(sp.parts[i - 1].samples, sp.parts[i].samples);
	}
	cr_assert_eq(rest, 1);
	/* bug: samples of the functions beyond the table dropped */
	cr_assert_eq(sum, sp.in_burst);
	cr_assert_eq(sp.in_burst, 40 * 41 / 2);
}

Test(lapsplit, the_burst_function_named_is_the_one_most_sampled)
{
	struct rxb_lapsplit sp;
	const struct rxb_lapframe a[] = {R("net_ring rx_pkt_burst (port 0)", RXB_ROLE_RX_BURST)};
	const struct rxb_lapframe b[] = {R(BURST, RXB_ROLE_RX_BURST)};
	rxb_lapsplit_init(&sp);
	rxb_lapsplit_add(&sp, a, 1, 2);
	rxb_lapsplit_add(&sp, b, 1, 5);
	rxb_lapsplit_add(&sp, a, 1, 1);
	cr_assert_str_eq(sp.burst_fn, BURST);
}

/* A result with one rx thread whose laps are known. */
static struct rxr_result *result_rx(uint64_t cqe, uint64_t idle, uint64_t other, uint64_t pk)
{
	struct rxr_result *r = NULL;
	struct rxr_thread_result t;
	memset(&t, 0, sizeof(t));
	snprintf(t.role, sizeof(t.role), "rx");
	t.packets = pk;
	t.st[RXP_ST_CQE_POLL].cycles = cqe;
	t.st[RXP_ST_IDLE].cycles = idle;
	t.st[RXP_ST_HANDOFF].cycles = other;
	cr_assert_eq(rxr_result_open(&r), 0);
	cr_assert_eq(rxr_result_add_thread(r, &t), 0);
	/* an app thread's laps are not the rx thread's */
	snprintf(t.role, sizeof(t.role), "app");
	t.st[RXP_ST_CQE_POLL].cycles = 1u << 30;
	cr_assert_eq(rxr_result_add_thread(r, &t), 0);
	return r;
}

Test(lapsplit, the_member_stands_beside_the_rx_threads_counted_laps_and_checks)
{
	struct rxb_lapsplit sp;
	rxb_lapsplit_init(&sp);
	rxb_lapsplit_learn(&sp, in_burst, N(in_burst), 60);
	rxb_lapsplit_add(&sp, in_burst, N(in_burst), 60);
	rxb_lapsplit_add(&sp, at_site, N(at_site), 20);
	rxb_lapsplit_add(&sp, handoff, N(handoff), 20);
	rxb_lapsplit_sort(&sp);
	snprintf(sp.event, sizeof(sp.event), "cpu-clock");
	snprintf(sp.stacks, sizeof(sp.stacks), "dwarf");
	sp.freq_hz = 999;
	sp.rx_threads = 1;
	struct rxr_result *r = result_rx(600, 200, 200, 10);
	json_t *m = rxb_lapsplit_json(&sp, r);
	cr_assert_not_null(m);
	char field[96], what[256];
	cr_assert_eq(rxr_result_check_sampled(m, field, sizeof(field), what, sizeof(what)), 0,
		     "%s: %s", field, what);
	json_t *c = json_object_get(m, "counted");
	/* bug: the counted figures taken from another thread or stage */
	cr_assert_eq(json_integer_value(json_object_get(c, "cqe_poll_cycles")), 600);
	cr_assert_eq(json_integer_value(json_object_get(c, "idle_cycles")), 200);
	cr_assert_eq(json_integer_value(json_object_get(c, "thread_cycles")), 1000);
	cr_assert_eq(json_integer_value(json_object_get(m, "lap_samples")), 80);
	cr_assert_str_eq(json_string_value(json_object_get(m, "lap_site_function")), "eth_burst");
	/* the burst part: 60 of the lap's 80 samples; its estimate 60 of all
	 * 100 samples x 1000 counted cycles / 10 packets = 60 */
	json_t *p0 = json_array_get(json_object_get(m, "parts"), 0);
	cr_assert_str_eq(json_string_value(json_object_get(p0, "name")), BURST);
	cr_assert_float_eq(json_number_value(json_object_get(p0, "share")), 0.75, 1e-9);
	cr_assert_float_eq(json_number_value(json_object_get(p0, "est_cycles_per_packet")), 60,
			   1e-9);
	/* the label says these are estimates */
	cr_assert(strstr(json_string_value(json_object_get(m, "what")), "not counted"));
	json_decref(m);
	rxr_result_free(r);
}

Test(lapsplit, every_part_kind_is_one_the_readers_accept)
{
	size_t n = 0;
	for (int k = 0; k < RXB_PART_NKINDS; k++) {
		const char *name = rxb_lappart_kind_name((enum rxb_lappart_kind)k);
		bool known = false;
		cr_assert_not_null(name);
		for (size_t i = 0; rxr_sampled_part_kinds[i]; i++)
			known |= !strcmp(rxr_sampled_part_kinds[i], name);
		cr_assert(known, "kind '%s' would be refused by rxr_result_check", name);
	}
	while (rxr_sampled_part_kinds[n])
		n++;
	cr_assert_eq(n, RXB_PART_NKINDS);
	cr_assert_null(rxb_lappart_kind_name(RXB_PART_NKINDS));
}
