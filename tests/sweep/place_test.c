/* SPDX-License-Identifier: MIT */
/* Placement: cores per role, infeasible points, oversubscription. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/sweep.h"
#include "sweep_test_util.h"

struct fixture {
	struct sweep_spec *sp;
	struct sweep_point *pts;
	size_t n;
};

static struct fixture expand(const char *yaml)
{
	struct fixture f = {0};
	char err[SWEEP_ERR_LEN] = "";
	cr_assert_eq(sweep_spec_parse(yaml, strlen(yaml), "p.yaml", &f.sp, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_eq(sweep_matrix_expand(f.sp, &f.pts, &f.n, err, sizeof(err)), 0, "%s", err);
	return f;
}

static void fixture_free(struct fixture *f)
{
	free(f->pts);
	sweep_spec_free(f->sp);
}

Test(sweep_place, sim_one_queue_on_two_cores_runs_the_app_inline)
{
	struct fixture f = expand("queues: 1\n");
	const int cores[] = {4, 7};
	struct sweep_place pl;
	cr_assert_eq(sweep_place_point(&f.pts[0], cores, 2, false, &pl), 0);
	cr_expect(pl.feasible);
	cr_expect_eq(pl.needed, 2);
	cr_expect_eq(pl.nic, 1);
	cr_expect_eq(pl.rx, 1);
	cr_expect_eq(pl.app, 0);
	cr_expect_str_eq(pl.app_mode, "inline");
	cr_expect_eq(pl.ncores, 2);
	cr_expect_eq(pl.cores[0], 4);
	cr_expect_eq(pl.cores[1], 7);
	fixture_free(&f);
}

Test(sweep_place, auto_app_takes_a_core_when_there_is_one)
{
	struct fixture f = expand("queues: [1, 2]\n");
	const int cores[] = {0, 1, 2, 3, 4, 5, 6, 7};
	struct sweep_place pl;
	sweep_place_point(&f.pts[0], cores, 4, false, &pl);
	cr_expect(pl.feasible);
	/* rx + app + the NIC thread's first writer leave one core: a second
	 * DMA writer (--dma-writers auto, the default) */
	cr_expect_eq(pl.needed, 4);
	cr_expect_eq(pl.nic, 2);
	cr_expect_str_eq(pl.app_mode, "thread");
	/* 2 queues on 4 cores: 1 nic + 2 rx fit, 2 app threads do not; the
	 * core left over goes to a second NIC thread */
	sweep_place_point(&f.pts[1], cores, 4, false, &pl);
	cr_expect(pl.feasible);
	cr_expect_eq(pl.needed, 4);
	cr_expect_eq(pl.nic, 2);
	cr_expect_str_eq(pl.app_mode, "inline");
	/* 2 queues on 8: 2 rx + 2 app + 2 NIC threads, and the 2 cores left
	 * a second writer each */
	sweep_place_point(&f.pts[1], cores, 8, false, &pl);
	cr_expect_eq(pl.needed, 8);
	cr_expect_eq(pl.nic, 4);
	cr_expect_eq(pl.app, 2);
	/* 2 queues on 5 cores: apps fit, nothing left for a second NIC thread */
	sweep_place_point(&f.pts[1], cores, 5, false, &pl);
	cr_expect_eq(pl.needed, 5);
	cr_expect_eq(pl.nic, 1);
	fixture_free(&f);
}

Test(sweep_place, too_few_cores_is_infeasible_with_the_reason)
{
	struct fixture f = expand("queues: [2, 4]\n");
	const int cores[] = {0, 1};
	struct sweep_place pl;
	sweep_place_point(&f.pts[0], cores, 2, false, &pl);
	cr_expect(!pl.feasible);
	cr_expect_str_eq(pl.reason, "needs 3 cores (1 nic + 2 rx + 0 app), 2 available; set "
				    "allow_oversubscribe to run it anyway");
	sweep_place_point(&f.pts[1], cores, 2, true, &pl);
	cr_expect(pl.feasible);
	cr_expect(pl.oversubscribed);
	cr_expect_eq(pl.needed, 5);
	cr_expect_eq(pl.ncores, 2);
	fixture_free(&f);
}

Test(sweep_place, explicit_app_thread_and_inline)
{
	struct fixture f = expand("app: [thread, same-core]\nqueues: 2\n");
	cr_assert_eq(f.n, 2);
	cr_expect_str_eq(sweep_point_knob(&f.pts[1], "app")->text, "inline", "same-core is inline");
	const int cores[] = {0, 1, 2, 3};
	struct sweep_place pl;
	sweep_place_point(&f.pts[0], cores, 4, false, &pl);
	cr_expect(!pl.feasible);
	cr_expect_eq(pl.needed, 5);
	sweep_place_point(&f.pts[1], cores, 3, false, &pl);
	cr_expect(pl.feasible);
	cr_expect_eq(pl.needed, 3);
	cr_expect_eq(pl.app, 0);
	fixture_free(&f);
}

Test(sweep_place, real_devices_need_no_nic_core)
{
	struct fixture f = expand("engines: dpdk\ndevice: dpdk:--vdev=net_null0\nqueues: 2\n"
				  "app: inline\n");
	const int cores[] = {0, 1};
	struct sweep_place pl;
	sweep_place_point(&f.pts[0], cores, 2, false, &pl);
	cr_expect(pl.feasible);
	cr_expect_eq(pl.nic, 0);
	cr_expect_eq(pl.needed, 2);
	fixture_free(&f);
}

Test(sweep_place, core_lists)
{
	/* the parser itself is tests/common's: here, the spec reaches it */
	int c[16];
	cr_expect_gt(sweep_cores_available(NULL, c, 16), 0);
}

Test(sweep_place, dry_run_shows_placement_and_trial_commands)
{
	char *dir = sw_tmpdir();
	char *spec = sw_write(dir, "s.yaml", "queues: [1, 2]\ncores: [0, 1]\nframes: 2064\n");
	char *out = NULL, *err = NULL;
	char *argv[] = {RXRAY_BIN, "sweep", spec, "--dry-run", NULL};
	cr_expect_eq(sw_run(argv, &out, &err), 0, "%s", err);
	cr_expect(strstr(out, "1 engine=verbs,mode=single,frame=2064,queues=1,ring=8192,"
			      "device=sim\n  place: 2 cores (nic 1, rx 1, app 0 inline): 0 1\n"),
		  "%s", out);
	cr_expect(strstr(out, " run --engine verbs --mode single --frame 2064 --queues 1 "
			      "--ring 8192 --device sim --rate max --seconds 1 --cores 0,1 -o "),
		  "%s", out);
	cr_expect(strstr(out, "2 engine=verbs,mode=single,frame=2064,queues=2,ring=8192,"
			      "device=sim\n  infeasible: needs 3 cores"),
		  "%s", out);
	free(out);
	free(err);
	free(spec);
	sw_rmtree(dir);
}
