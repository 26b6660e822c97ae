/* The off mode compiles laps to nothing. */
#undef RXRAY_PROBE_MODE
#define RXRAY_PROBE_MODE 0
#include <criterion/criterion.h>

#include "rxray/probe.h"

Test(modes, off_mode_records_nothing)
{
	struct rxp_probe *p = NULL;
	rxp_probe_open("rx", -1, 0, 0, &p, NULL, 0);
	cr_assert_not_null(p);
	rxp_lap_start(p);
	rxp_burst_begin(p);
	rxp_lap(p, RXP_ST_CQE_POLL, 32);
	rxp_burst_end(p, 32);
	cr_assert_eq(p->st[RXP_ST_CQE_POLL].count, 0);
	cr_assert_eq(p->busy_packets, 0);
	rxp_probe_free(p);
}

/* The stage hint (rxp_stage_begin) is nothing outside full mode: its
 * arguments are not even evaluated, so a hint that computes its stage (a
 * GPU launch asking how many batches are in flight) costs the off and
 * counters builds nothing. */
Test(modes, off_mode_stage_hint_evaluates_nothing)
{
	struct rxp_probe *p = NULL;
	rxp_probe_open("rx", -1, 0, 0, &p, NULL, 0);
	cr_assert_not_null(p);
	int evaluated = 0;
	rxp_lap_start(p);
	rxp_burst_begin(p);
	rxp_stage_begin(p, (evaluated++, RXP_ST_APP));
	rxp_stage_begin((evaluated++, p), RXP_ST_APP);
	rxp_lap(p, RXP_ST_APP, 1);
	rxp_burst_end(p, 1);
	cr_assert_eq(evaluated, 0, "the hint evaluated its arguments in the off mode");
	rxp_probe_free(p);
}
