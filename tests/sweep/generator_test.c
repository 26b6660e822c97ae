/* SPDX-License-Identifier: MIT */
/*
 * An external generator driving runs and sweeps on a real port (issue 44,
 * rxray/generator.h):
 *  - the templates and the `generator:` block's checks (everywhere);
 *  - the TRex example's config through the spec loader (it cannot rot);
 *  - `rxray run --generator` refusals, and a run whose generator's count
 *    does not add up failing with the account in its result (net_null);
 *  - a sweep of two frame sizes with netsniff-ng's trafgen sending over a
 *    veth pair, from a network namespace, into the dpdk engine on
 *    net_af_packet (root; skips with the reason without it, or without
 *    trafgen, ip, a network namespace or the PMD). It asserts structure
 *    only: points resolved or flagged with a reason, every trial
 *    conserving against the generator's count, the window in order.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rxray/generator.h"
#include "rxray/sweep.h"
#include "sweep_test_util.h"

Test(sweep_generator, templates_expand_every_placeholder)
{
	struct sweep_gen g;
	sweep_gen_defaults(&g);
	snprintf(g.iface, sizeof(g.iface), "veth1");
	g.flows = 8;
	struct sweep_gen_ask a = {20000, 1024, 0.5, "/tmp/o"};
	char out[512];
	cr_assert_eq(sweep_gen_expand("r={rate_pps} f={frame} s={seconds} n={flows} i={iface} "
				      "p={packets} b={rate_bps} g={gap_ns} o={output} {{x}}",
				      &g, &a, out, sizeof(out)),
		     0);
	cr_expect_str_eq(out, "r=20000 f=1024 s=0.5 n=8 i=veth1 p=10000 b=163840000 g=50000 "
			      "o=/tmp/o {x}");
	cr_expect_eq(sweep_gen_expand("{rate}", &g, &a, out, sizeof(out)), -EINVAL);
	cr_expect_str_eq(out, "rate");
	cr_expect_eq(sweep_gen_expand("{rate_pps", &g, &a, out, sizeof(out)), -EINVAL);
	char small[8];
	cr_expect_eq(sweep_gen_expand("{iface}{iface}", &g, &a, small, sizeof(small)), -ENOSPC);
}

/* A bad block names file, line, column and field; `rxray run` and the
 * sweep read it with the one parser. */
Test(sweep_generator, bad_blocks_name_file_line_column_and_field)
{
	static const struct {
		const char *yaml, *msg;
	} bad[] = {
	    {"generator:\n  start: gen {rate}\n  count: echo 1\n",
	     "2:10: generator.start: unknown placeholder {rate} (known: {rate_pps} {frame} "
	     "{seconds} {flows} {iface} {packets} {rate_bps} {gap_ns} {output})"},
	    {"generator:\n  start: gen\n", "2:3: generator: needs count (the command that prints "
					   "how many packets start sent)"},
	    {"generator:\n  kind: trex\n  start: a\n  count: b\n",
	     "2:9: generator.kind: unknown kind 'trex' (known: command; a TRex STL or pktgen-dpdk "
	     "script runs as a command, docs/generators.md)"},
	    {"generator:\n  start: a\n  count: b\n  speed: 3\n",
	     "4:3: generator.speed: unknown field (known: kind, name, start, count, iface, flows, "
	     "drain, rx_iface, setup, teardown)"},
	    {"generator:\n  start: a {iface}\n  count: b\n",
	     "2:10: generator.start: uses {iface}, and the block has no iface"},
	    {"generator:\n  start: a\n  count: b\n  flows: 0\n",
	     "4:10: generator.flows: expected an integer in [1, 65535], got '0'"},
	    {"generator: [a]\n", "1:12: generator: expected a mapping (kind, name, start, count, "
				 "iface, flows, drain, rx_iface, setup, teardown), got a list"},
	    {"frames: 64\n", "1:1: generator: no generator block here (a spec's `generator:` "
			     "field, or a file with start: and count:)"},
	};
	char *dir = sw_tmpdir();
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char name[32], want[700], err[SWEEP_ERR_LEN] = "";
		snprintf(name, sizeof(name), "g%zu.yaml", i);
		char *path = sw_write(dir, name, bad[i].yaml);
		struct sweep_gen g;
		cr_expect_eq(sweep_gen_load(path, &g, err, sizeof(err)), -EINVAL, "block %zu", i);
		snprintf(want, sizeof(want), "%s:%s", path, bad[i].msg);
		cr_expect_str_eq(err, want, "block %zu:\n got: %s\nwant: %s", i, err, want);
		free(path);
	}
	sw_rmtree(dir);
}

/* The worked TRex example (docs/generators.md) loads as a spec and as a
 * run's --generator file: a field renamed in the code fails here. */
Test(sweep_generator, trex_example_config_loads)
{
	char err[SWEEP_ERR_LEN] = "";
	struct sweep_spec *sp = NULL;
	const char *path = RXRAY_SRC_DIR "/examples/trex-connectx.yaml";
	cr_assert_eq(sweep_spec_load(path, &sp, err, sizeof(err)), 0, "%s", err);
	cr_expect(sp->have_gen);
	cr_expect_str_eq(sp->gen.kind, "command");
	cr_expect_str_eq(sp->gen.name, "trex-stl");
	cr_expect_eq(sp->gen.flows, 64);
	cr_expect_float_eq(sp->search.max_rate, 23e6, 1);
	struct sweep_point *pts = NULL;
	size_t n = 0;
	cr_assert_eq(sweep_matrix_expand(sp, &pts, &n, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(n, 2 * 4 * 2);
	/* a trial is `rxray run --rate R --generator <spec>` */
	struct sweep_place pl;
	memset(&pl, 0, sizeof(pl));
	struct sweep_exec x = {.runner = "rxray", .spec = sp, .point = &pts[0], .place = &pl};
	char **argv = NULL;
	cr_assert_eq(sweep_trial_argv(&x, 1e6, 2, "t.json", &argv), 0);
	bool rate = false, gen = false;
	for (size_t i = 0; argv[i]; i++) {
		rate |= !strcmp(argv[i], "--rate") && argv[i + 1] && !strcmp(argv[i + 1], "1000000");
		gen |= !strcmp(argv[i], "--generator") && argv[i + 1] && !strcmp(argv[i + 1], path);
	}
	cr_expect(rate && gen, "the trial does not hand the rate and the generator to the run");
	sweep_argv_free(argv);
	free(pts);
	sweep_spec_free(sp);
	struct sweep_gen g;
	cr_expect_eq(sweep_gen_load(path, &g, err, sizeof(err)), 0, "%s", err);
	char cmd[1024];
	struct sweep_gen_ask a = {1e6, 1064, 2, "/tmp/out"};
	cr_assert_eq(sweep_gen_expand(g.start, &g, &a, cmd, sizeof(cmd)), 0);
	cr_expect(strstr(cmd, "--pps 1000000 --frame 1064 --seconds 2 --flows 64"), "%s", cmd);
}

/* Bad input before anything runs: exit 2, one line naming --generator. */
Test(sweep_generator, run_refuses_what_a_generator_cannot_drive)
{
	char *dir = sw_tmpdir();
	char *gen = sw_write(dir, "gen.yaml", "generator:\n  start: 'true'\n  count: echo 0\n");
	char *bad = sw_write(dir, "bad.yaml", "generator:\n  start: x {nope}\n  count: echo 0\n");
	static const struct {
		const char *device, *rate, *file, *want;
	} cases[] = {
	    {"sim", "10k", NULL, "rxray run: --generator: needs a real device"},
	    {"dpdk:--vdev=net_null0", NULL, NULL, "rxray run: --generator: needs --rate"},
	    {"dpdk:--vdev=net_null0", "10k", "bad", "rxray run: --generator: "},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[20] = {RXRAY_BIN, "run", "--engine", "dpdk", "--device",
				  (char *)cases[i].device, "--seconds", "0.1",
				  "--generator", cases[i].file ? bad : gen};
		int n = 10;
		if (cases[i].rate) {
			argv[n++] = "--rate";
			argv[n++] = (char *)cases[i].rate;
		}
		argv[n] = NULL;
		char *out = NULL, *err = NULL;
		cr_expect_eq(sw_run(argv, &out, &err), 2, "case %zu: %s", i, err);
		cr_expect(err && !strncmp(err, cases[i].want, strlen(cases[i].want)) &&
			      strchr(err, '\n') == err + strlen(err) - 1,
			  "case %zu: %s", i, err ? err : "");
		if (cases[i].file)
			cr_expect(strstr(err, "bad.yaml:2:10: generator.start: unknown placeholder "
					      "{nope}"), "%s", err);
		cr_expect_str_eq(out, "", "case %zu", i);
		free(out);
		free(err);
	}
	free(gen);
	free(bad);
	sw_rmtree(dir);
}

/* A generator whose count does not add up (net_null makes its own
 * packets, the "generator" claims 5): the run fails (exit 1), and its
 * result says by how much, in a window recorded in order. Catches a
 * count never asked, or never checked. */
Test(sweep_generator, a_count_that_does_not_add_up_fails_the_run)
{
	char why[400];
#ifndef SWEEP_TEST_HAVE_DPDK
	cr_skip_test("needs the dpdk engine: this build has no DPDK");
#endif
	cr_assert(sw_run_available("dpdk", "dpdk:--vdev=net_null0", why, sizeof(why)), "%s", why);
	char *dir = sw_tmpdir(), json[600];
	char *gen = sw_write(dir, "gen.yaml",
			     "generator:\n  name: liar\n  start: echo {rate_pps} {frame} {seconds}\n"
			     "  count: echo 5\n  drain: 0\n");
	snprintf(json, sizeof(json), "%s/run.json", dir);
	char *argv[] = {RXRAY_BIN, "run", "--engine", "dpdk", "--device", "dpdk:--vdev=net_null0",
			"--rate", "10k", "--seconds", "0.1", "--generator", gen, "-o", json, NULL};
	char *out = NULL, *err = NULL;
	cr_assert_eq(sw_run(argv, &out, &err), 1, "%s", err);
	cr_expect(strstr(err, "do not conserve against the generator's count"), "%s", err);
	cr_expect(strstr(out, "generator: liar (command) sent 5 in"), "%s", out);
	cr_expect(strstr(out, "conservation vs the generator: sent 5 != "), "%s", out);
	json_error_t je;
	json_t *d = json_load_file(json, 0, &je);
	cr_assert(d, "%s: %s", json, je.text);
	json_t *g = json_object_get(d, "generator"), *c = json_object_get(g, "conservation");
	cr_expect_str_eq(json_string_value(json_object_get(g, "kind")), "command");
	cr_expect_eq(json_integer_value(json_object_get(g, "sent")), 5);
	cr_expect_str_eq(json_string_value(json_object_get(g, "output_tail")), "10000 1064 0.1");
	cr_expect(json_is_false(json_object_get(c, "conserved")));
	cr_expect_lt(json_integer_value(json_object_get(c, "unattributed")), 0);
	/* asked 0.1 s; the run's own timer was only its bound */
	cr_expect_float_eq(json_number_value(json_object_get(json_object_get(d, "config"),
							     "seconds")), 0.1, 1e-9);
	json_t *tl = json_object_get(g, "timeline");
	const char *order[] = {"port_started", "generator_started", "generator_exited", "drained",
			       "rx_stopped"};
	for (size_t i = 1; i < 5; i++)
		cr_expect_leq(json_number_value(json_object_get(tl, order[i - 1])),
			      json_number_value(json_object_get(tl, order[i])), "%s after %s",
			      order[i - 1], order[i]);
	json_decref(d);
	free(out);
	free(err);
	free(gen);
	sw_rmtree(dir);
}

/*
 * A generator's setup runs once before the sweep's first trial and its
 * teardown once after its last, whatever the trials did (here each fails
 * conservation); a setup that fails ends the sweep before any trial, and
 * its teardown still runs (a half-made set-up is undone).
 */
Test(sweep_generator, setup_runs_before_the_first_trial_and_teardown_after_the_last)
{
	char why[400];
#ifndef SWEEP_TEST_HAVE_DPDK
	cr_skip_test("needs the dpdk engine: this build has no DPDK");
#endif
	cr_assert(sw_run_available("dpdk", "dpdk:--vdev=net_null0", why, sizeof(why)), "%s", why);
	for (int fail = 0; fail < 2; fail++) {
		char *dir = sw_tmpdir(), yaml[1500], out_dir[600], mark[700];
		snprintf(out_dir, sizeof(out_dir), "%s/out", dir);
		snprintf(yaml, sizeof(yaml),
			 "engines: dpdk\ndevice: \"dpdk:--vdev=net_null0\"\nframes: [64]\n"
			 "app: inline\n"
			 "generator:\n  name: liar\n  start: echo {rate_pps}\n  count: echo 5\n"
			 "  drain: 0\n"
			 "  setup: echo set > %s/setup; exit %d\n"
			 "  teardown: cat %s/out/results.jsonl 2>/dev/null | wc -l > %s/teardown\n"
			 "search:\n  max_rate: 10k\n  min_rate: 1k\n  initial_seconds: 0.1\n"
			 "  trial_seconds: 0.1\n  max_trials: 2\n",
			 dir, fail ? 4 : 0, dir, dir);
		char *spec = sw_write(dir, "spec.yaml", yaml);
		char *argv[] = {RXRAY_BIN, "sweep", spec, "-o", out_dir, NULL};
		char *out = NULL, *err = NULL;
		int rc = sw_run(argv, &out, &err);
		snprintf(mark, sizeof(mark), "%s/setup", dir);
		cr_assert_eq(access(mark, F_OK), 0, "the setup never ran: %s", err);
		snprintf(mark, sizeof(mark), "%s/teardown", dir);
		char *td = sw_read(mark);
		cr_assert_not_null(td, "the teardown never ran (fail %d): %s", fail, err);
		if (fail) {
			cr_expect_neq(rc, 0, "a failed setup ends the sweep: %s", err);
			cr_expect(strstr(err, "generator.setup:"), "%s", err);
			/* no trial ran: no result line when the teardown looked */
			cr_expect_eq(atoi(td), 0, "%s", td);
		} else {
			/* the teardown came after the trials: their lines were there */
			cr_expect_gt(atoi(td), 0, "%s", td);
		}
		free(td);
		free(out);
		free(err);
		free(spec);
		sw_rmtree(dir);
	}
}

/* ------------------------------------------ trafgen over a veth pair */

static char ns[24], rxif[16], txif[16];

static int sh(const char *cmd)
{
	char *argv[] = {"/bin/sh", "-c", (char *)cmd, NULL};
	char *err = NULL;
	int rc = sw_run(argv, NULL, &err);
	free(err);
	return rc;
}

static void veth_down(void)
{
	if (ns[0]) {
		char cmd[256];
		snprintf(cmd, sizeof(cmd), RXRAY_SRC_DIR "/examples/veth-setup.sh down %s %s %s", ns,
			 rxif, txif);
		sh(cmd);
		ns[0] = '\0';
	}
}

static const char *trafgen_missing(void)
{
	static const char *const pmds[] = {"/usr/lib/*/dpdk/pmds-*/librte_net_af_packet.so",
					   "/usr/local/lib/*/dpdk/pmds-*/librte_net_af_packet.so"};
	if (geteuid())
		return "needs root (a network namespace, a veth pair, raw sockets)";
	if (sh("command -v trafgen >/dev/null || test -x /usr/sbin/trafgen"))
		return "needs trafgen (Debian package netsniff-ng; tools/setup.sh)";
	if (sh("command -v ip >/dev/null && command -v tc >/dev/null"))
		return "needs ip and tc (iproute2)";
	bool found = false;
	for (size_t i = 0; i < 2 && !found; i++) {
		glob_t g;
		found = !glob(pmds[i], 0, NULL, &g) && g.gl_pathc > 0;
		globfree(&g);
	}
	return found ? NULL : "needs the net_af_packet PMD (librte_net_af_packet.so)";
}

Test(sweep_generator, trafgen_over_veth_finds_an_ndr_and_conserves, .timeout = 240,
     .fini = veth_down)
{
#ifndef SWEEP_TEST_HAVE_DPDK
	cr_skip_test("needs the dpdk engine: this build has no DPDK");
#endif
	if (getenv("RXRAY_EMULATOR")) /* set by ctest in a cross build (tools/test.sh arm64) */
		cr_skip_test("under %s, AF_PACKET's socket options (PACKET_VERSION) are not "
			     "emulated: the net_af_packet port cannot open",
			     getenv("RXRAY_EMULATOR"));
	const char *why = trafgen_missing();
	if (why)
		cr_skip_test("%s", why);
	int id = (int)getpid() % 100000;
	snprintf(ns, sizeof(ns), "rxg%d", id);
	snprintf(rxif, sizeof(rxif), "rxr%d", id);
	snprintf(txif, sizeof(txif), "rxt%d", id);
	char cmd[512];
	snprintf(cmd, sizeof(cmd), RXRAY_SRC_DIR "/examples/veth-setup.sh up %s %s %s", ns, rxif,
		 txif);
	if (sh(cmd)) {
		veth_down();
		cr_skip_test("no network namespace or veth pair here (%s failed)", cmd);
	}
	char dev[80], why2[400];
	snprintf(dev, sizeof(dev), "dpdk:--vdev=net_af_packet0,iface=%s", rxif);
	cr_assert(sw_run_available("dpdk", dev, why2, sizeof(why2)), "%s", why2);
	char *dir = sw_tmpdir(), yaml[2000], res[600];
	/* tiny trials: the structure is the point, not the figures (a
	 * shared 2-core host); disturbed trials are not re-run */
	snprintf(yaml, sizeof(yaml),
		 "engines: dpdk\ndevice: \"%s\"\nframes: [64, 1024]\napp: inline\n"
		 "cores: [%d]\n"
		 "generator:\n  name: trafgen\n  iface: %s\n"
		 "  start: %s/examples/trafgen-send.sh %s {iface} {rate_bps} {packets} {frame} %d\n"
		 "  count: %s/examples/trafgen-count.sh {output}\n"
		 "search:\n  max_rate: 250k\n  min_rate: 5k\n  initial_seconds: 0.2\n"
		 "  trial_seconds: 0.3\n  precision: 0.25\n  max_trials: 6\n  max_retries: 0\n"
		 "  exceed_ratio: 0.5\n",
		 dev, sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 1 : 0, txif, RXRAY_SRC_DIR, ns, 0,
		 RXRAY_SRC_DIR);
	char *spec = sw_write(dir, "spec.yaml", yaml);
	char *argv[] = {RXRAY_BIN, "sweep", spec, "-o", dir, NULL};
	char *out = NULL, *err = NULL;
	cr_assert_eq(sw_run(argv, &out, &err), 0, "%s", err);
	cr_expect(strstr(out, "load: generator trafgen (command)"), "%s", out);
	snprintf(res, sizeof(res), "%s/results.jsonl", dir);
	FILE *f = fopen(res, "r");
	cr_assert(f, "%s", res);
	char *line = NULL;
	size_t cap = 0, points = 0, trials = 0, intervals = 0, broken = 0;
	while (getline(&line, &cap, f) > 0) {
		json_t *d = json_loads(line, 0, NULL);
		cr_assert(d, "%s", line);
		const char *schema = json_string_value(json_object_get(d, "schema"));
		if (!strcmp(schema, SWEEP_POINT_SCHEMA)) {
			points++;
			cr_expect_str_eq(json_string_value(json_object_get(d, "status")), "ok", "%s",
					 line);
			cr_expect_str_eq(json_string_value(json_object_get(
					     json_object_get(d, "generator"), "name")),
					 "trafgen");
			double lo = json_number_value(json_object_get(d, "ndr_mpps"));
			double hi = json_number_value(json_object_get(d, "ndr_upper_mpps"));
			bool interval = lo > 0 && hi > lo;
			bool flagged = json_is_true(json_object_get(d, "generator_limited")) ||
				       json_is_false(json_object_get(d, "resolved"));
			const char *reason = json_string_value(json_object_get(d, "reason"));
			intervals += interval;
			/* resolved, or honestly flagged with the reason why not */
			cr_expect(interval || (flagged && reason && *reason), "%s", line);
			json_decref(d);
			continue;
		}
		json_t *t = json_object_get(d, "trial");
		if (!strcmp(schema, SWEEP_TRIAL_SCHEMA)) {
			/* a trial without a result (the host stalled a generator
			 * past its bound) is recorded with its reason; the point's
			 * search goes on, and more than one is a failure below */
			broken++;
			cr_expect(json_string_value(json_object_get(t, "reason")), "%s", line);
			cr_log_warn("a trial without a result: %s", line);
			json_decref(d);
			continue;
		}
		json_t *g = json_object_get(d, "generator"), *c = json_object_get(g, "conservation");
		cr_assert(json_is_object(g), "a trial without the generator's account: %s", line);
		trials++;
		cr_expect_gt(json_integer_value(json_object_get(g, "sent")), 0);
		cr_expect_float_eq(json_number_value(json_object_get(json_object_get(g, "asked"),
								     "rate_pps")),
				   json_number_value(json_object_get(t, "target_pps")), 1);
		cr_expect(json_is_true(json_object_get(c, "conserved")), "%s", json_dumps(c, 0));
		cr_expect_leq(json_number_value(json_object_get(c, "unattributed_ratio")),
			      SWEEP_GEN_UNATTRIBUTED_MAX);
		/* lost before the port came from counters that measured it */
		char key[64];
		snprintf(key, sizeof(key), "%s rx_dropped", rxif);
		json_t *by = json_object_get(c, "lost_before_port_by");
		cr_expect(json_object_get(by, key) && json_object_get(by, "af_packet socket drops"),
			  "%s", json_dumps(by, 0));
		json_t *tl = json_object_get(g, "timeline");
		const char *order[] = {"port_started", "generator_started", "generator_exited",
				       "drained", "rx_stopped"};
		for (size_t i = 1; i < 5; i++)
			cr_expect_leq(json_number_value(json_object_get(tl, order[i - 1])),
				      json_number_value(json_object_get(tl, order[i])));
		json_decref(d);
	}
	free(line);
	fclose(f);
	cr_expect_eq(points, 2);
	cr_expect_geq(trials, 4, "%zu trials with the generator's account", trials);
	cr_expect_leq(broken, 1, "%zu trials without a result", broken);
	/* the NDR itself is the host's: printed, never asserted */
	cr_log_info("points with an NDR interval: %zu of %zu", intervals, points);
	free(out);
	free(err);
	free(spec);
	sw_rmtree(dir);
}
