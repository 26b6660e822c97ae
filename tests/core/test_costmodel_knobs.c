/* SPDX-License-Identifier: MIT */
/* The cost model's knobs: --inject (not idle), --coalesce, --op-delay. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rxray/core.h"
#include "rxray/inject.h"

/* A device's limits roomy enough for every knob here. */
static struct rx_caps knob_caps(void)
{
	struct rx_caps caps;
	memset(&caps, 0, sizeof(caps));
	caps.max_ring = 32768;
	caps.max_sges = 2;
	caps.max_queues = 64;
	caps.max_frame = 9216;
	return caps;
}

Test(knobs, inject_into_idle_is_rejected_with_one_line)
{
	struct rx_config c;
	char err[256] = "";
	rx_config_defaults(&c);
	cr_assert_eq(rx_config_set(&c, "inject", "idle=100", err, sizeof(err)), -EINVAL);
	cr_assert(!strncmp(err, "inject:", 7) && strstr(err, "idle") && !strchr(err, '\n'), "%s", err);
	cr_assert_eq(c.inject[RXP_ST_IDLE], 0);
	/* every other stage is accepted and accumulates */
	cr_assert_eq(rx_config_set(&c, "inject", "buf_alloc=150", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(rx_config_set(&c, "inject", "hdr_write=2k", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(c.inject[RXP_ST_BUF_ALLOC], 150);
	cr_assert_eq(c.inject[RXP_ST_HDR_WRITE], 2000);
}

/*
 * --inject STAGE=0 is an A/A run's stage: with --inject-ab it validates and
 * the config says 0 for it; without it, it would spin nothing, silently,
 * so it is rejected with one line naming the stage. Catches a 0 taken as
 * "off" (the A/A run would lose its turn-keeping stage) and the sentinel
 * leaking into the config JSON as a huge K.
 */
Test(knobs, inject_zero_is_an_a_a_stage_for_inject_ab_only)
{
	struct rx_config c;
	char err[256] = "";
	rx_config_defaults(&c);
	struct rx_caps caps = knob_caps();
	c.allow_oversubscribe = true;
	cr_assert_eq(rx_config_set(&c, "inject", "doorbell=0", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(c.inject[RXP_ST_DOORBELL], RXP_INJECT_NULL);
	cr_assert_eq(rx_config_validate(&c, &caps, err, sizeof(err)), -EINVAL);
	cr_assert(!strncmp(err, "inject:", 7) && strstr(err, "doorbell=0") && !strchr(err, '\n'),
		  "%s", err);
	c.inject_ab = true;
	cr_assert_eq(rx_config_validate(&c, &caps, err, sizeof(err)), 0, "%s", err);
	json_t *j = rx_config_to_json(&c);
	json_t *k = json_object_get(json_object_get(j, "inject"), "doorbell");
	cr_assert(json_is_integer(k));
	cr_assert_eq(json_integer_value(k), 0);
	json_decref(j);
}

Test(knobs, coalesce_parses_and_must_not_exceed_the_burst)
{
	struct rx_config c;
	char err[256] = "";
	rx_config_defaults(&c);
	cr_assert_eq(rx_config_set(&c, "coalesce", "64", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(c.coalesce, 64);
	cr_assert_eq(rx_config_set(&c, "coalesce", "x", err, sizeof(err)), -EINVAL);
	struct rx_caps caps = knob_caps();
	c.allow_oversubscribe = true;
	c.coalesce = 65; /* burst 64 */
	cr_assert_eq(rx_config_validate(&c, &caps, err, sizeof(err)), -EINVAL);
	cr_assert(!strncmp(err, "coalesce:", 9), "%s", err);
	json_t *j = rx_config_to_json(&c);
	cr_assert_eq(json_integer_value(json_object_get(j, "coalesce")), 65);
	json_decref(j);
	/* off: the config JSON does not carry it (run keys stay as they were) */
	c.coalesce = 0;
	j = rx_config_to_json(&c);
	cr_assert_null(json_object_get(j, "coalesce"));
	cr_assert_null(json_object_get(j, "op_delay"));
	json_decref(j);
}

Test(knobs, op_delay_parses_each_operation)
{
	struct rx_config c;
	char err[256] = "";
	rx_config_defaults(&c);
	cr_assert_eq(c.op_delay_mempool + c.op_delay_mr + c.op_delay_hdr_write, 0, "off by default");
	cr_assert_eq(rx_config_set(&c, "op-delay", "mempool=200,mr=1k", err, sizeof(err)), 0, "%s",
		     err);
	cr_assert_eq(rx_config_set(&c, "op-delay", "hdr_write=50", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(c.op_delay_mempool, 200);
	cr_assert_eq(c.op_delay_mr, 1000);
	cr_assert_eq(c.op_delay_hdr_write, 50);
	const char *bad[] = {"cache=5", "mempool", "mempool=-1", "mr=2M", ""};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(rx_config_set(&c, "op-delay", bad[i], err, sizeof(err)), -EINVAL, "%s",
			     bad[i]);
		cr_assert(!strncmp(err, "op-delay:", 9), "%s", err);
	}
}

/* --inject-ab pairs one change: one --op-delay operation, or --inject. Two
 * operations (two gates on the rx thread) or an operation beside an
 * injection (a spin and a gate taking turns apart) are refused: exit 2. */
Test(knobs, inject_ab_pairs_one_change_at_a_time)
{
	struct rx_config c;
	struct rx_caps caps;
	char err[256] = "";
	rx_caps_ideal(&caps);
	rx_config_defaults(&c);
	c.inject_ab = true;
	c.op_delay_mempool = 200;
	cr_assert_eq(rx_config_validate_fields(&c, &caps, err, sizeof(err)), 0, "%s", err);
	c.op_delay_mr = 200;
	cr_assert_eq(rx_config_validate_fields(&c, &caps, err, sizeof(err)), -EINVAL);
	cr_assert(!strncmp(err, "inject-ab:", 10), "%s", err);
	c.op_delay_mr = 0;
	c.inject[RXP_ST_APP] = 100;
	cr_assert_eq(rx_config_validate_fields(&c, &caps, err, sizeof(err)), -EINVAL);
	c.inject_ab = false; /* without A/B both may run together */
	c.op_delay_mr = 200;
	cr_assert_eq(rx_config_validate_fields(&c, &caps, err, sizeof(err)), 0, "%s", err);
	/* the gate: the stage performing the operation, per role */
	c.inject_ab = true;
	c.inject[RXP_ST_APP] = 0;
	c.op_delay_mempool = 0;
	cr_assert_eq(rx_op_gate_stage(&c, "rx", NULL), RXP_ST_SGE_SETUP);
	cr_assert_eq(rx_op_gate_stage(&c, "app", NULL), -1);
	c.op_delay_mr = 0;
	c.op_delay_mempool = 50;
	cr_assert_eq(rx_op_gate_stage(&c, "rx", NULL), RXP_ST_BUF_ALLOC);
	cr_assert_eq(rx_op_gate_stage(&c, "app", NULL), RXP_ST_FREE);
	c.inject_ab = false;
	cr_assert_eq(rx_op_gate_stage(&c, "rx", NULL), -1);
}
