/* SPDX-License-Identifier: MIT */
/*
 * Spec parsing: a table of bad specs, each with the exact one-line error
 * (file:line:column: field: what), the same line through `rxray sweep`
 * with exit 2, and good specs expanding into the expected points.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/sweep.h"
#include "sweep_test_util.h"

#define KNOWN                                                                                \
	"engine, mode, frame, split, queues, ring, batch, burst, buffers, mempool_cache, free, "  \
	"app, discipline, dma, payload, inject, payload_mem, gpu_work, device, "               \
	"cores, "                                                                            \
	"allow_oversubscribe, output, traffic_cmd, generator, search"
#define SEARCH_KNOWN                                                                               \
	"ndr_loss, pdr_loss, precision, trial_seconds, initial_seconds, max_trials, "              \
	"min_rate, max_rate, timeout, exceed_ratio, budget, total_budget, max_retries, "           \
	"calibration_frac"

static const struct bad_spec {
	const char *yaml;
	const char *msg; /* after "<file>:" */
} bad_specs[] = {
    {"engines: verbs\ncolour: red\n", "2:1: colour: unknown field (known: " KNOWN ")"},
    {"frames: [1064, big]\n", "1:16: frame: expected an integer, got 'big'"},
    {"rings: []\n", "1:8: ring: empty list (an axis needs at least one value)"},
    {"rings: [8192, 1000]\n", "1:15: ring: 1000 is not a power of two"},
    {"queues: 65\n", "1:9: queues: 65 is out of range [1, 64]"},
    {"engines: [verbs, xdp]\n", "1:18: engine: unknown value 'xdp' (expected verbs | dpdk)"},
    {"frames: {a: 1}\n", "1:9: frame: expected a value or a list, got a mapping"},
    {"frames: [1064, [2064]]\n", "1:16: frame: expected a value, got a list"},
    {"frames:\n", "1:8: frame: expected a value, got nothing"},
    {"frame: 1064\nframes: 2064\n", "2:1: frame: given twice (as frame and frames)"},
    {"frames: [1064, 1064]\n", "1:16: frame: '1064' is listed twice"},
    {"modes: hds\nframes: [4064, 1064]\nsplit: 2000\n",
     "3:8: split: 2000 must be smaller than frame 1064 (nothing left for the payload segment)"},
    {"rings: 64\nbatches: [32, 128]\n",
     "2:15: batch: 128 exceeds the ring's 64 slots (the worker would wait forever for a full "
     "batch)"},
    {"rings: 64\nbursts: 65\n", "2:9: burst: 65 exceeds the ring's 64 slots"},
    {"engines: dpdk\nmodes: [single, hds]\ndiscipline: vector\n",
     "3:13: discipline: vector needs a single segment per WQE; buffer split (--mode hds) "
     "forces scalar, as in the mlx5 PMD"},
    {"engines: dpdk\nrings: 1024\nbuffers: 1000\n",
     "3:10: buffers: 1000 is below the floor ring 1024 + batch 64 = 1088 (the pool would run "
     "dry with every buffer posted or in flight)"},
    {"engines: dpdk\nrings: 512\nbuffers: 700\nmempool_cache: 512\n",
     "4:16: mempool_cache: 512 exceeds buffers 700 / 1.5"},
    {"device: dpdk:--vdev=net_null0\n",
     "1:9: device: 'dpdk:--vdev=net_null0' is not a verbs device (sim[:opts] or "
     "mlx5:<ibdev|pci>)"},
    {"device: [sim, eth0]\n",
     "1:15: device: 'eth0' is not a verbs device (sim[:opts] or mlx5:<ibdev|pci>)"},
    /* what the device's caps reject (the software NIC's limits), at the node */
    {"engines: verbs\nmodes: hds\nsplit: [64, 40]\n",
     "3:13: split: 40 is below the device minimum 54"},
    {"app: eal\n", "1:6: app: eal is a dpdk placement; verbs takes thread or inline"},
    {"inject: foo=10\n", "1:9: inject: 'foo=10' is not STAGE=CYCLES with a known stage"},
    /* an empty entry ran as if it were not there (issue 43: key inject=+) */
    {"inject: \",\"\n", "1:9: inject: entry 1 of ',' is empty (STAGE=CYCLES entries joined by "
			   "',', or none)"},
    {"inject: [app=10, \"free=5,\"]\n",
     "1:18: inject: entry 2 of 'free=5,' is empty (STAGE=CYCLES entries joined by ',', or "
     "none)"},
    {"inject: app=10,,free=5\n", "1:9: inject: entry 2 of 'app=10,,free=5' is empty "
				  "(STAGE=CYCLES entries joined by ',', or none)"},
    {"inject: \"\"\n", "1:9: inject: entry 1 of '' is empty (STAGE=CYCLES entries joined by "
			  "',', or none)"},
    {"cores: 0-x\n", "1:8: cores: expected a core list like \"0-3,6\", got '0-x'"},
    {"cores: [0, 1, 1]\n", "1:15: cores: core 1 is listed twice"},
    {"allow_oversubscribe: maybe\n",
     "1:22: allow_oversubscribe: expected true or false, got 'maybe'"},
    {"output: [a, b]\n", "1:9: output: expected a non-empty string, got a list"},
    {"search:\n  trials: 5\n", "2:3: search.trials: unknown field (known: " SEARCH_KNOWN ")"},
    {"search:\n  precision: high\n",
     "2:14: search.precision: expected a number in [0.0001, 0.5], got 'high'"},
    {"search:\n  trial_seconds: fast\n",
     "2:18: search.trial_seconds: expected a duration in [10ms, 1h] like 0.25, 250ms or 2s, "
     "got 'fast'"},
    {"search:\n  max_trials: 0\n",
     "2:15: search.max_trials: expected an integer in [1, 1000], got '0'"},
    {"search:\n  pdr_loss: 0.001\n  ndr_loss: 0.01\n",
     "3:13: search.ndr_loss: 0.01 is above pdr_loss 0.001"},
    {"search:\n  min_rate: fast\n",
     "2:13: search.min_rate: expected a rate in packets/s like 500k or 12M, got 'fast'"},
    {"search:\n  total_budget: soon\n",
     "2:17: search.total_budget: expected a duration in [0, 7 days] like 170s or 3600, got "
     "'soon'"},
    {"search: 5\n", "1:9: search: expected a mapping, got a scalar"},
    {"search:\n  calibration_frac: 0.5\n",
     "2:21: search.calibration_frac: expected a number in [0, 0.45], got '0.5'"},
    {"traffic_cmd: echo {rate_pps}\n",
     "1:14: traffic_cmd: needs a real device (mlx5:... or dpdk:...); the default device sim "
     "generates its own traffic"},
    {"engines: dpdk\ndevice: dpdk:--vdev=net_null0\ntraffic_cmd: gen {rate}\n",
     "3:14: traffic_cmd: unknown placeholder {rate} (known: {rate_pps} {frame} {seconds})"},
    {"engines: dpdk\ndevice: dpdk:--vdev=net_null0\ntraffic_cmd: gen {rate_pps}\n",
     "3:14: traffic_cmd: needs search.max_rate (the rate the first trial asks of the traffic "
     "source)"},
    {"generator:\n  start: gen {rate_pps}\n  count: echo 0\n",
     "1:1: generator: needs a real device (mlx5:... or dpdk:...); the default device sim "
     "generates its own traffic"},
    {"engines: dpdk\ndevice: dpdk:--vdev=net_null0\n"
     "generator:\n  start: gen\n  count: echo 0\n",
     "3:1: generator: needs search.max_rate (the rate the first trial asks of the traffic "
     "source)"},
    {"engines: dpdk\ndevice: dpdk:--vdev=net_null0\ntraffic_cmd: a\n"
     "generator:\n  start: gen\n  count: echo 0\nsearch: {max_rate: 1M}\n",
     "4:1: generator: traffic_cmd and generator are two ways to send a trial's traffic: keep "
     "one (generator counts what it sent)"},
    {"engines: dpdk\ndevice: dpdk:--vdev=net_null0\n"
     "generator:\n  start: gen {speed}\n  count: echo 0\n",
     "4:10: generator.start: unknown placeholder {speed} (known: {rate_pps} {frame} {seconds} "
     "{flows} {iface} {packets} {rate_bps} {gap_ns} {output})"},
    {"- a\n- b\n", "1:1: spec: expected a mapping of fields, got a list"},
    {"", "1:1: spec: empty document (expected a mapping)"},
    {"# only a comment\n", "1:1: spec: empty document (expected a mapping)"},
    {"frames: [1064\n", "2:1: yaml: did not find expected ',' or ']' while parsing a flow "
			"sequence"},
    /* the whole stream: a second document, or garbage after the first */
    {"frames: [1064]\n---\nframes: [2064]\n",
     "2:1: yaml: a second document: a spec is one document (drop the '---' and what follows)"},
    {"frames: [1064]\n---\n: [\n", "2:1: yaml: a second document: a spec is one document "
				       "(drop the '---' and what follows)"},
    {"frames: [1064]\n]]\n", "2:1: yaml: did not find expected key while parsing a block mapping"},
    /* a device string as `rxray run --device` takes it */
    {"device: \"mlx5:\"\n",
     "1:9: device: 'mlx5:' has nothing after ':' (name the device, or drop the ':')"},
};

Test(sweep_spec, bad_specs_name_file_line_column_and_field)
{
	char *dir = sw_tmpdir();
	for (size_t i = 0; i < sizeof(bad_specs) / sizeof(bad_specs[0]); i++) {
		char name[32], want[1024], err[SWEEP_ERR_LEN] = "";
		snprintf(name, sizeof(name), "bad%zu.yaml", i);
		char *path = sw_write(dir, name, bad_specs[i].yaml);
		snprintf(want, sizeof(want), "%s:%s", path, bad_specs[i].msg);
		struct sweep_spec *sp = NULL;
		int rc = sweep_spec_load(path, &sp, err, sizeof(err));
		cr_expect_eq(rc, -EINVAL, "spec %zu: rc %d", i, rc);
		cr_expect_str_eq(err, want, "spec %zu:\n got: %s\nwant: %s", i, err, want);
		cr_expect_null(sp);
		free(path);
	}
	sw_rmtree(dir);
}

Test(sweep_spec, cli_prints_one_line_and_exits_2)
{
	char *dir = sw_tmpdir();
	char *path = sw_write(dir, "bad.yaml", "engines: verbs\nrings: [8192, 1000]\n");
	char *out = NULL, *err = NULL, want[700];
	char *argv[] = {RXRAY_BIN, "sweep", path, "-o", dir, NULL};
	cr_expect_eq(sw_run(argv, &out, &err), 2);
	snprintf(want, sizeof(want), "rxray sweep: %s:2:15: ring: 1000 is not a power of two\n",
		 path);
	cr_expect_str_eq(err, want);
	cr_expect_str_eq(out, "");
	/* nothing half written */
	char res[700];
	snprintf(res, sizeof(res), "%s/results.jsonl", dir);
	cr_expect_null(sw_read(res));
	free(out);
	free(err);
	char *argv3[] = {RXRAY_BIN, "sweep", "--bogus", NULL};
	cr_expect_eq(sw_run(argv3, NULL, &err), 2);
	cr_expect_str_eq(err, "rxray sweep: --bogus: unknown option or missing value (rxray sweep "
			      "--help)\n");
	free(err);
	char *argv2[] = {RXRAY_BIN, "sweep", "/nonexistent/spec.yaml", NULL};
	cr_expect_eq(sw_run(argv2, NULL, &err), 2);
	cr_expect_str_eq(err, "rxray sweep: /nonexistent/spec.yaml: No such file or directory\n");
	free(err);
	free(path);
	sw_rmtree(dir);
}

static struct sweep_spec *parse(const char *yaml)
{
	char err[SWEEP_ERR_LEN] = "";
	struct sweep_spec *sp = NULL;
	int rc = sweep_spec_parse(yaml, strlen(yaml), "t.yaml", &sp, err, sizeof(err));
	cr_assert_eq(rc, 0, "%s", err);
	return sp;
}

Test(sweep_spec, default_spec_is_the_seed_matrix)
{
	char err[SWEEP_ERR_LEN] = "";
	struct sweep_spec *sp = NULL;
	cr_assert_eq(sweep_spec_load(RXRAY_SRC_DIR "/sweeps/default.yaml", &sp, err, sizeof(err)),
		     0, "%s", err);
	struct sweep_point *pts = NULL;
	size_t n = 0;
	cr_assert_eq(sweep_matrix_expand(sp, &pts, &n, err, sizeof(err)), 0);
	cr_expect_eq(n, 16);
	cr_expect_str_eq(pts[0].key, "engine=verbs,mode=single,frame=1064,queues=1,ring=8192,"
				     "device=sim");
	cr_expect_str_eq(pts[7].key, "engine=verbs,mode=hds,frame=8064,split=64,queues=1,"
				     "ring=8192,device=sim");
	cr_expect_str_eq(pts[8].key, "engine=dpdk,mode=single,frame=1064,queues=1,ring=8192,"
				     "device=sim");
	cr_expect_lt(sp->search.pdr_loss - 0.005, 1e-12);
	cr_expect_eq(sp->search.ndr_loss, 0);
	free(pts);
	sweep_spec_free(sp);
}

Test(sweep_spec, queues_spec_parses)
{
	char err[SWEEP_ERR_LEN] = "";
	struct sweep_spec *sp = NULL;
	cr_assert_eq(sweep_spec_load(RXRAY_SRC_DIR "/sweeps/queues.yaml", &sp, err, sizeof(err)),
		     0, "%s", err);
	struct sweep_point *pts = NULL;
	size_t n = 0;
	cr_assert_eq(sweep_matrix_expand(sp, &pts, &n, err, sizeof(err)), 0);
	cr_expect_eq(n, 48);
	free(pts);
	sweep_spec_free(sp);
}

Test(sweep_spec, axes_aliases_defaults_and_dedup)
{
	struct sweep_spec *sp = parse("engine: [verbs, dpdk]\nmempool_caches: [0, 256]\n"
				      "frames: 2064\nmode: single\nsplit: [64, 128]\n"
				      "app: non-eal\ninject: free=100,app=20\n"
				      "search: {trial_seconds: 250ms, max_rate: 12M}\n");
	struct sweep_point *pts = NULL;
	size_t n = 0;
	char err[SWEEP_ERR_LEN];
	cr_assert_eq(sweep_matrix_expand(sp, &pts, &n, err, sizeof(err)), 0, "%s", err);
	/* verbs drops the dpdk-only cache, single drops split: 1 + 2 points */
	cr_assert_eq(n, 3);
	cr_expect_str_eq(pts[0].key, "engine=verbs,mode=single,frame=2064,queues=1,ring=8192,"
				     "app=thread,inject=free=100+app=20,device=sim");
	cr_expect_str_eq(pts[1].key, "engine=dpdk,mode=single,frame=2064,queues=1,ring=8192,"
				     "mempool_cache=0,app=thread,inject=free=100+app=20,device=sim");
	cr_expect_eq(sweep_point_knob(&pts[2], "mempool_cache")->num, 256);
	cr_expect_float_eq(sp->search.trial_seconds, 0.25, 1e-9);
	cr_expect_float_eq(sp->search.initial_seconds, 0.25, 1e-9);
	cr_expect_float_eq(sp->search.max_rate, 12e6, 1e-3);
	json_t *k = sweep_point_knobs(&pts[1]);
	cr_expect_eq(json_integer_value(json_object_get(k, "frame")), 2064);
	cr_expect_eq(json_integer_value(json_object_get(k, "mempool_cache")), 0);
	cr_expect_str_eq(json_string_value(json_object_get(k, "engine")), "dpdk");
	cr_expect_null(json_object_get(k, "split"));
	json_decref(k);
	free(pts);
	sweep_spec_free(sp);
}

Test(sweep_spec, units_and_search_settings)
{
	struct sweep_spec *sp =
	    parse("rings: [1Ki, 8Ki]\ncores: \"0-3,6\"\n"
		  "allow_oversubscribe: yes\noutput: out/x\n"
		  "search:\n  ndr_loss: 0\n  pdr_loss: 0.002\n  precision: 0.05\n"
		  "  initial_seconds: 100ms\n  trial_seconds: 0.5\n"
		  "  max_trials: 7\n  min_rate: 50k\n  max_rate: max\n"
		  "  timeout: 5s\n  exceed_ratio: 0.5\n  calibration_frac: 0.45\n");
	cr_expect_eq(sp->axis[sweep_knob_find("ring")].v[0].num, 1024);
	cr_expect_eq(sp->axis[sweep_knob_find("ring")].v[1].num, 8192);
	cr_expect_eq(sp->ncores, 5);
	cr_expect_eq(sp->cores[4], 6);
	cr_expect(sp->allow_oversubscribe);
	cr_expect_str_eq(sp->output, "out/x");
	const struct sweep_search_cfg *c = &sp->search;
	cr_expect_float_eq(c->pdr_loss, 0.002, 1e-12);
	cr_expect_float_eq(c->precision, 0.05, 1e-12);
	cr_expect_float_eq(c->initial_seconds, 0.1, 1e-12);
	cr_expect_float_eq(c->trial_seconds, 0.5, 1e-12);
	cr_expect_eq(c->max_trials, 7);
	cr_expect_float_eq(c->min_rate, 50e3, 1e-6);
	cr_expect_eq(c->max_rate, 0);
	cr_expect_float_eq(c->timeout, 5, 1e-12);
	cr_expect_float_eq(c->exceed_ratio, 0.5, 1e-12);
	cr_expect_float_eq(c->calibration_frac, 0.45, 1e-12);
	sweep_spec_free(sp);
	/* unset: a quarter of the NDR */
	sp = parse("engines: verbs\n");
	cr_expect_float_eq(sp->search.calibration_frac, 0.25, 1e-12);
	sweep_spec_free(sp);
}

/*
 * One knob table: `rxray run` and a sweep spec accept and reject the same
 * values with the same message (the spec adds file:line:column). Catches
 * a range, a power-of-two rule or a caps check living in one place only.
 */
Test(sweep_spec, run_and_spec_reject_with_the_same_message)
{
	static const struct {
		const char *spec;         /* the spec's YAML */
		const char *args[8];      /* the same config for rxray run */
	} cases[] = {
		{"rings: 1000\n", {"--ring", "1000"}},
		{"queues: 65\n", {"--queues", "65"}},
		{"frames: big\n", {"--frame", "big"}},
		{"modes: hds\nsplit: 40\n", {"--mode", "hds", "--split", "40"}},
		{"frames: 9217\n", {"--frame", "9217"}},
		{"rings: 2\n", {"--ring", "2"}},
		{"app: eal\n", {"--app", "eal"}},
		{"engines: dpdk\nrings: 1024\nbuffers: 1000\n",
		 {"--engine", "dpdk", "--ring", "1024", "--buffers", "1000"}},
	};
	char *dir = sw_tmpdir();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char name[32], err[SWEEP_ERR_LEN] = "";
		snprintf(name, sizeof(name), "same%zu.yaml", i);
		char *path = sw_write(dir, name, cases[i].spec);
		struct sweep_spec *sp = NULL;
		cr_expect_eq(sweep_spec_load(path, &sp, err, sizeof(err)), -EINVAL, "case %zu", i);
		sweep_spec_free(sp);
		char *argv[16] = {RXRAY_BIN, "run"};
		int n = 2;
		for (int a = 0; cases[i].args[a]; a++)
			argv[n++] = (char *)cases[i].args[a];
		argv[n++] = "--seconds";
		argv[n++] = "0.01";
		argv[n] = NULL;
		char *rerr = NULL;
		cr_expect_eq(sw_run(argv, NULL, &rerr), 2, "case %zu: %s", i, rerr);
		/* spec: "<path>:L:C: <field>: <what>"; run: "rxray run: --<knob>: <what>" */
		const char *sw = strstr(err + strlen(path), ": ");
		sw = sw ? strstr(sw + 2, ": ") : NULL;
		const char *rw = rerr ? strstr(rerr + strlen("rxray run: "), ": ") : NULL;
		cr_assert(sw && rw, "case %zu: spec '%s' run '%s'", i, err, rerr ? rerr : "");
		size_t rl = strcspn(rw, "\n");
		cr_expect(strlen(sw) == rl && !strncmp(sw, rw, rl), "case %zu:\n spec: %s\n  run: %s",
			  i, err, rerr);
		free(rerr);
		free(path);
	}
	sw_rmtree(dir);
}
