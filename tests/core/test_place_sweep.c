/* SPDX-License-Identifier: MIT */
/*
 * The sweep places a point before its trial starts (sweeps/place.c); the
 * trial's `rxray run` places again with rx_place on the cores the sweep
 * handed over. The two must agree: same cores needed, same NIC threads,
 * and infeasible exactly when rx_place refuses.
 *
 * The knob table is the one list of knobs for `rxray run`/`caps` options,
 * rx_config_set and sweep specs: a row registered here reaches all three.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/core.h"
#include "rxray/engines.h"
#include "rxray/sweep.h"

/* `rxray run`/`caps` option parsing, as the CLI links it */
#include "../../tools/cli_io.c"
#include "../../tools/engine_list.c"

Test(place_sweep, sweep_and_rx_place_agree)
{
	/* nics=2 on one queue is a config `rxray run` rejects, and so does the
	 * spec (tests/sweep/spec_test.c): queues start at 2 here */
	static const char yaml[] = "queues: [2, 3, 4]\n"
				   "app: [auto, inline, thread]\n"
				   "device: [sim, 'sim:nics=2', 'sim:rate=1M,nics=1']\n";
	struct sweep_spec *sp = NULL;
	struct sweep_point *pts = NULL;
	size_t n = 0;
	char err[SWEEP_ERR_LEN] = "";
	cr_assert_eq(sweep_spec_parse(yaml, strlen(yaml), "p.yaml", &sp, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_eq(sweep_matrix_expand(sp, &pts, &n, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(n, 27);
	int avail[16];
	for (int i = 0; i < 16; i++)
		avail[i] = i;
	int checked = 0, multi = 0;
	for (size_t i = 0; i < n; i++) {
		const struct sweep_point *p = &pts[i];
		for (int navail = 1; navail <= 16; navail++) {
			for (int over = 0; over < 2; over++) {
				struct sweep_place sw;
				struct rx_config c;
				struct rx_placement pl;
				char e[256] = "";
				cr_assert_eq(sweep_place_point(p, avail, navail, over, &sw), 0);
				rx_config_defaults(&c);
				c.queues = (uint32_t)sweep_point_knob(p, "queues")->num;
				cr_assert_eq(rx_config_set(&c, "app", sweep_point_knob(p, "app")->text, e,
							   sizeof(e)), 0, "%s", e);
				cr_assert_eq(rx_config_set(&c, "device", sweep_point_knob(p, "device")->text,
							   e, sizeof(e)), 0, "%s", e);
				c.allow_oversubscribe = over;
				const char *what = sweep_point_knob(p, "device")->text;
				/* the device's caps, as the trial's run asks them */
				struct rx_caps caps;
				cr_assert_eq(
				    rxe_check(&c, RX_CHECK_NO_PLACE, &caps, NULL, e, sizeof(e)), 0,
				    "%s", e);
				if (!sw.feasible) {
					cr_assert_eq(rx_place_on(&c, &caps, avail, navail, &pl, e,
								 sizeof(e)),
						     -EINVAL, "%s q%u %s on %d: sweep says infeasible",
						     what, c.queues, sweep_point_knob(p, "app")->text, navail);
					continue;
				}
				cr_assert_eq(rx_place_on(&c, &caps, sw.cores, sw.ncores, &pl, e,
							 sizeof(e)),
					     0, "%s q%u on %d: %s", what, c.queues, navail, e);
				cr_assert_eq(pl.needed, sw.needed, "%s q%u %s on %d cores", what,
					     c.queues, sweep_point_knob(p, "app")->text, navail);
				/* the sweep counts every NIC core: threads x writers */
				cr_assert_eq(pl.nic_all, sw.nic, "%s q%u on %d cores", what,
					     c.queues, navail);
				cr_assert_eq(pl.app == RX_APP_INLINE ? 0 : (int)c.queues, sw.app);
				cr_assert_eq(pl.oversubscribed, sw.oversubscribed);
				checked++;
				multi += pl.nic_threads > 1;
			}
		}
	}
	cr_assert_gt(checked, 100);
	cr_assert_gt(multi, 0, "some points ran several NIC threads");
	free(pts);
	sweep_spec_free(sp);
}

/*
 * A knob added as one row (rx_knob_register, a test-only row on the
 * sample_shift field) is taken by rx_config_set, by `rxray caps` option
 * parsing and by a sweep spec, with the table's range and message. Fails
 * when any of the three keeps its own list of knobs.
 */
Test(knob_table, a_registered_row_reaches_run_caps_and_sweep)
{
	static const struct rx_knob row = {
	    "test-knob", RX_KT_UINT, "K", 0, 30, NULL, offsetof(struct rx_config, sample_shift),
	    sizeof(unsigned), 0, NULL, "test: a knob added by one row", 20, "test_knobs"};
	static const struct rx_knob gap = {"test-gap", RX_KT_FLAG, NULL, 0, 0, NULL,
					   offsetof(struct rx_config, quiet), sizeof(bool), 0, NULL,
					   "test: a sweep position past the next", 22, NULL};
	cr_assert_eq(rx_knob_register(&gap), -EINVAL);
	cr_assert_eq(rx_knob_register(&row), 0);
	cr_assert_eq(rx_knob_register(&row), -EEXIST);
	cr_assert_eq(rx_knob_find("test_knob"), &row);

	/* rxray run: rx_config_set */
	struct rx_config c;
	char err[SWEEP_ERR_LEN] = "";
	rx_config_defaults(&c);
	cr_assert_eq(rx_config_set(&c, "test-knob", "7", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(c.sample_shift, 7);
	cr_assert_eq(rx_config_set(&c, "test-knob", "31", err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "test-knob: 31 is out of range"), "%s", err);

	/* rxray caps: its options */
	char a0[] = "caps", a1[] = "--test-knob", a2[] = "9";
	char *argv[] = {a0, a1, a2, NULL};
	rx_config_defaults(&c);
	cr_assert_eq(rxt_config_parse_argv("caps", 3, argv, &c, NULL), 0);
	cr_assert_eq(c.sample_shift, 9);

	/* a sweep spec: the plural is an axis, each point sets the field */
	static const char yaml[] = "engines: verbs\ntest_knobs: [3, 5]\n";
	struct sweep_spec *sp = NULL;
	struct sweep_point *pts = NULL;
	size_t n = 0;
	cr_assert_eq(sweep_spec_parse(yaml, strlen(yaml), "k.yaml", &sp, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_eq(sweep_matrix_expand(sp, &pts, &n, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(n, 2);
	cr_assert(strstr(pts[1].key, ",test_knob=5,device=sim"), "%s", pts[1].key);
	cr_assert_eq(sweep_point_config(sp, &pts[1], &c, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(c.sample_shift, 5);
	free(pts);
	sweep_spec_free(sp);
	static const char bad[] = "test_knob: 99\n";
	sp = NULL;
	cr_assert_eq(sweep_spec_parse(bad, strlen(bad), "k.yaml", &sp, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "k.yaml:1:12: test_knob: 99 is out of range [0, 30]");
}

/*
 * The sweep's knobs are the table's sweep rows and nothing else: index k
 * names the row at position k + 1, and every knob the sweep code handles
 * by name is such a row. Fails when the sweep keeps a list of its own
 * that disagrees with the table, or uses a name the table lacks.
 */
Test(knob_table, sweep_knobs_are_the_tables_sweep_rows)
{
	char err[SWEEP_ERR_LEN] = "";
	cr_assert_eq(sweep_knobs_check(err, sizeof(err)), 0, "%s", err);
	size_t rows = 0;
	for (size_t i = 0; i < rx_knob_count(); i++) {
		const struct rx_knob *rk = rx_knob_at(i);
		cr_assert_leq(rk->sweep, RX_KNOB_SWEEP_MAX, "%s", rk->name);
		if (!rk->sweep)
			continue;
		rows++;
		cr_expect_eq(sweep_knob_find(rk->name), (int)rk->sweep - 1, "%s", rk->name);
		cr_expect_eq(rx_knob_find(sweep_knob_name(rk->sweep - 1)), rk, "%s", rk->name);
	}
	cr_assert_eq(sweep_knob_count(), rows);
	cr_expect_null(sweep_knob_name(rows));
	size_t used = 0;
	for (const char *const *n = sweep_knobs_used; *n; n++, used++)
		cr_expect_geq(sweep_knob_find(*n), 0, "the sweep uses knob %s", *n);
	cr_assert_gt(used, 0);
	cr_expect_eq(sweep_knob_find("no-such-knob"), -1);
	cr_expect_eq(sweep_knob_find("rate"), -1, "a row without a sweep position");
	cr_expect_eq(sweep_knob_find("mempool_cache"), sweep_knob_find("mempool-cache"));
}

/*
 * The names the sweep code looks up are the ones it declares: a point of
 * the default matrix has each of them, by name, where the key says.
 */
Test(knob_table, the_sweeps_names_reach_its_points)
{
	static const char yaml[] = "engines: [verbs]\n";
	struct sweep_spec *sp = NULL;
	struct sweep_point *pts = NULL;
	size_t n = 0;
	char err[SWEEP_ERR_LEN] = "";
	cr_assert_eq(sweep_spec_parse(yaml, strlen(yaml), "d.yaml", &sp, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_eq(sweep_matrix_expand(sp, &pts, &n, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(pts[0].key, "engine=verbs,mode=single,frame=1064,queues=1,ring=8192,"
				     "device=sim");
	cr_expect_str_eq(sweep_point_knob(&pts[0], "engine")->text, "verbs");
	cr_expect_eq(sweep_point_knob(&pts[0], "frame")->num, 1064);
	cr_expect_eq(sweep_point_knob(&pts[0], "queues")->num, 1);
	cr_expect_str_eq(sweep_point_knob(&pts[0], "device")->text, "sim");
	cr_expect_null(sweep_point_knob(&pts[0], "burst"), "not named: the engine's default");
	cr_expect_null(sweep_point_knob(&pts[0], "rate"), "no sweep knob");
	free(pts);
	sweep_spec_free(sp);
}

/*
 * A sweep knob past the sweep's capacity (RX_KNOB_SWEEP_MAX) is refused
 * when it is registered, with -ENOSPC, not dropped by the sweep later;
 * the rows up to the capacity work and a row that is no axis still
 * registers.
 */
Test(knob_table, a_sweep_knob_past_the_capacity_is_refused)
{
	static struct rx_knob rows[RX_KNOB_SWEEP_MAX + 1];
	static char names[RX_KNOB_SWEEP_MAX + 1][24];
	unsigned next = (unsigned)sweep_knob_count() + 1;
	cr_assert_leq(next, RX_KNOB_SWEEP_MAX, "the table leaves room to test");
	size_t nrows = 0;
	for (unsigned pos = next; pos <= RX_KNOB_SWEEP_MAX + 1; pos++, nrows++) {
		snprintf(names[nrows], sizeof(names[nrows]), "test-cap-%u", pos);
		rows[nrows] = (struct rx_knob){names[nrows], RX_KT_UINT, "K", 0, 30, NULL,
					       offsetof(struct rx_config, sample_shift),
					       sizeof(unsigned), 0, NULL, "test: fills the sweep",
					       pos, NULL};
	}
	cr_assert_leq(nrows, RX_KNOB_EXTRA_MAX, "registration slots for the test's rows");
	for (size_t i = 0; i + 1 < nrows; i++)
		cr_assert_eq(rx_knob_register(&rows[i]), 0, "%s", rows[i].name);
	cr_assert_eq(sweep_knob_count(), RX_KNOB_SWEEP_MAX);
	cr_assert_eq(rx_knob_register(&rows[nrows - 1]), -ENOSPC, "position %u",
		     rows[nrows - 1].sweep);
	cr_assert_null(rx_knob_find(rows[nrows - 1].name));
	cr_assert_eq(sweep_knob_count(), RX_KNOB_SWEEP_MAX);

	/* not the registration slots: a row with no sweep position fits */
	static const struct rx_knob plain = {
	    "test-plain", RX_KT_UINT, "K", 0, 30, NULL, offsetof(struct rx_config, sample_shift),
	    sizeof(unsigned), 0, NULL, "test: no axis", 0, NULL};
	cr_assert_eq(rx_knob_register(&plain), 0);

	/* the full table drives a sweep: its last knob is an axis */
	char err[SWEEP_ERR_LEN] = "", yaml[64];
	cr_assert_eq(sweep_knobs_check(err, sizeof(err)), 0, "%s", err);
	snprintf(yaml, sizeof(yaml), "test_cap_%d: [1, 2]\n", RX_KNOB_SWEEP_MAX);
	struct sweep_spec *sp = NULL;
	struct sweep_point *pts = NULL;
	size_t n = 0;
	cr_assert_eq(sweep_spec_parse(yaml, strlen(yaml), "c.yaml", &sp, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_eq(sweep_matrix_expand(sp, &pts, &n, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(n, 2);
	char want[64];
	snprintf(want, sizeof(want), ",test_cap_%d=2,device=sim", RX_KNOB_SWEEP_MAX);
	cr_assert(strstr(pts[1].key, want), "%s", pts[1].key);
	free(pts);
	sweep_spec_free(sp);
}
