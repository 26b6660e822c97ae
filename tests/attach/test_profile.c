/* SPDX-License-Identifier: MIT */
/*
 * The attach profile's arithmetic and findings from known telemetry
 * snapshots: no root, no BPF, no DPDK. (The end-to-end run on testpmd is
 * test_attach.c.)
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rxray/attach.h"
#include "rxray/attach_findings.h"

static struct rxb_profile *prof;

static void setup(void)
{
	rxb_profile_open(&prof);
	cr_assert_not_null(prof);
	prof->pid = 4242;
	snprintf(prof->comm, sizeof(prof->comm), "app");
	prof->seconds = 2;
	prof->clock_hz = 2e9;
	prof->busy_ns = 2000000000ull; /* 2 s on CPU = 4e9 cycles */
	prof->have_tele = true;
	snprintf(prof->stack_mode, sizeof(prof->stack_mode), "fp");

	struct rxb_tele_snap *a = &prof->t0, *b = &prof->t1;
	a->nports = b->nports = 1;
	a->ports[0] = (struct rxb_tele_port){.id = 0, .nb_rx_queues = 1,
					      .rx_mbuf_size_min = 2176, .ipackets = 1000};
	snprintf(a->ports[0].name, sizeof(a->ports[0].name), "net_null0");
	b->ports[0] = a->ports[0];
	b->ports[0].ipackets = 1000 + 100000000; /* 100 M packets in the window */
	a->npools = b->npools = 2;
	/* a pktmbuf pool without cache whose data room matches the port's */
	a->pools[0] = (struct rxb_tele_pool){.size = 16384, .cache_size = 0, .elt_size = 2304,
					      .private_data_size = 64};
	snprintf(a->pools[0].name, sizeof(a->pools[0].name), "mb_pool_0");
	/* a cached pool: no finding */
	a->pools[1] = (struct rxb_tele_pool){.size = 1024, .cache_size = 256, .elt_size = 2304,
					      .private_data_size = 64};
	snprintf(a->pools[1].name, sizeof(a->pools[1].name), "cached");
	b->pools[0] = a->pools[0];
	b->pools[1] = a->pools[1];
	prof->mempool_share = 0.25;
	prof->sst.samples = 1000;
}

static void teardown(void)
{
	rxb_profile_free(prof);
}

/* what rxray attach does after folding: measure (probes), then interpret (analyzers) */
static void finish(void)
{
	rxb_profile_finish(prof);
	rxa_attach_findings(prof);
}

static bool has_finding(const char *a, const char *b)
{
	for (size_t i = 0; i < prof->nfindings; i++)
		if (strstr(prof->findings[i], a) && (!b || strstr(prof->findings[i], b)))
			return true;
	return false;
}

TestSuite(attach_profile, .init = setup, .fini = teardown);

Test(attach_profile, cycles_per_packet_is_busy_cycles_over_packets)
{
	finish();
	cr_assert_eq(prof->packets, 100000000u);
	cr_assert_float_eq(prof->busy_cycles, 4e9, 1);
	cr_assert_float_eq(prof->cycles_per_packet, 40.0, 1e-9);
}

Test(attach_profile, cacheless_pool_feeding_rx_is_named)
{
	finish();
	cr_assert(has_finding("mb_pool_0", "cache_size 0"));
	cr_assert(has_finding("mb_pool_0", "feeds RX of port 0"));
	/* 25% of 40 cycles */
	cr_assert(has_finding("mb_pool_0", "10.0 cycles/packet"), "%s", prof->findings[0]);
	cr_assert_not(has_finding("cached", NULL));
}

Test(attach_profile, no_pool_finding_without_rx_queues)
{
	prof->t1.ports[0].nb_rx_queues = 0;
	finish();
	cr_assert_not(has_finding("mb_pool_0", NULL));
}

Test(attach_profile, rising_nombuf_and_imissed_are_findings)
{
	prof->t1.ports[0].rx_nombuf = 17;
	prof->t1.ports[0].imissed = 5000000;
	finish();
	cr_assert_eq(prof->rx_nombuf, 17u);
	cr_assert_eq(prof->imissed, 5000000u);
	cr_assert(has_finding("rx_nombuf rose by 17", NULL));
	cr_assert(has_finding("imissed rose by 5000000", "5.00%"));
}

Test(attach_profile, counters_going_backwards_are_not_negative)
{
	prof->t0.ports[0].imissed = 10; /* e.g. stats reset during the window */
	prof->t1.ports[0].imissed = 0;
	finish();
	cr_assert_eq(prof->imissed, 0u);
	cr_assert_not(has_finding("imissed", NULL));
}

Test(attach_profile, no_telemetry_means_no_packets)
{
	prof->have_tele = false;
	finish();
	cr_assert_eq(prof->packets, 0u);
	cr_assert_float_eq(prof->cycles_per_packet, 0.0, 1e-12);
	json_t *d = rxb_profile_to_json(prof, 10);
	cr_assert(json_is_null(json_object_get(d, "packets")));
	cr_assert(json_is_null(json_object_get(d, "cycles_per_packet")));
	json_decref(d);
}

Test(attach_profile, no_samples_is_a_warning)
{
	prof->sst.samples = 0;
	finish();
	cr_assert(has_finding("no samples", NULL));
}

Test(attach_profile, json_document_has_the_schema_fields)
{
	finish();
	json_t *d = rxb_profile_to_json(prof, 10);
	cr_assert_not_null(d);
	cr_assert_str_eq(json_string_value(json_object_get(d, "schema")), RXB_ATTACH_SCHEMA);
	const char *keys[] = {"target", "sampler", "window", "telemetry", "packets",
			      "cycles_per_packet", "top_functions", "findings", "shares"};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		cr_assert_not_null(json_object_get(d, keys[i]), "missing %s", keys[i]);
	cr_assert_eq(json_integer_value(json_object_get(d, "packets")), 100000000);
	json_t *pools = json_object_get(json_object_get(d, "telemetry"), "mempools");
	cr_assert_eq(json_array_size(pools), 2);
	json_decref(d);
}

Test(attach_profile, write_is_atomic_and_complete)
{
	char dir[] = "/tmp/rxray-profile-XXXXXX", err[256], p[300];
	cr_assert_not_null(mkdtemp(dir));
	finish();
	cr_assert_eq(rxb_profile_write(prof, dir, err, sizeof(err)), 0, "%s", err);
	snprintf(p, sizeof(p), "%s/attach.json", dir);
	json_error_t je;
	json_t *d = json_load_file(p, 0, &je);
	cr_assert_not_null(d, "%s", je.text);
	json_decref(d);
	snprintf(p, sizeof(p), "%s/stacks.folded", dir);
	cr_assert_eq(access(p, F_OK), 0);
	/* a path that cannot be a directory: an error naming it, nothing written */
	cr_assert_neq(rxb_profile_write(prof, "/proc/version/x", err, sizeof(err)), 0);
	cr_assert(strstr(err, "/proc/version/x"), "%s", err);
	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	cr_assert_eq(system(p), 0);
}

/*
 * The DPDK names in the findings (analyzers/attach_findings.c): the
 * cache-less pool's share split into get and put with the driver's
 * functions, and the PMD's receive function with its cost. Catches the
 * split or the receive function falling out of the summary a reader sees.
 */
Test(attach_profile, findings_split_get_put_and_name_the_rx_function)
{
	static char rx_name[] = "net_null rx_pkt_burst (port 0)";
	prof->mempool_get_share = 0.05;
	prof->mempool_put_share = 0.15;
	snprintf(prof->mempool_get_top, sizeof(prof->mempool_get_top), "ring_mp_mc dequeue");
	snprintf(prof->mempool_put_top, sizeof(prof->mempool_put_top), "ring_mp_mc enqueue");
	snprintf(prof->rx_burst_top, sizeof(prof->rx_burst_top), "%s", rx_name);
	prof->rx_burst_share = 0.6;
	struct rxb_profile_func f = {.name = rx_name, .self = 300, .total = 600,
				     .src = RXB_NAME_DPDK, .role = RXB_ROLE_RX_BURST};
	struct rxb_profile_stack st = {.folded = rx_name, .count = 1000};
	prof->funcs = &f;
	prof->nfuncs = 1;
	prof->stacks = &st;
	prof->nstacks = 1;
	finish();
	cr_assert(has_finding("mb_pool_0", "get 5.0%: ring_mp_mc dequeue; put 15.0%: "
			      "ring_mp_mc enqueue"), "%s", prof->findings[0]);
	/* 30% self of 40 cycles/packet */
	cr_assert(has_finding("PMD receive function: net_null rx_pkt_burst (port 0), 30.0%",
			      "12.0 cycles/packet"), "%s", prof->findings[1]);
	json_t *d = rxb_profile_to_json(prof, 10);
	json_t *top = json_array_get(json_object_get(d, "top_functions"), 0);
	cr_assert_str_eq(json_string_value(json_object_get(top, "source")), "dpdk");
	cr_assert_str_eq(json_string_value(json_object_get(top, "dpdk_role")), "rx_burst");
	cr_assert_float_eq(json_real_value(json_object_get(json_object_get(d, "shares"),
							   "mempool_put")), 0.15, 1e-9);
	json_decref(d);
	prof->funcs = NULL; /* on the stack: not the profile's to free */
	prof->nfuncs = 0;
	prof->stacks = NULL;
	prof->nstacks = 0;
}
