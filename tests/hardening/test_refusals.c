/* SPDX-License-Identifier: MIT */
/*
 * Inputs accepted that mean nothing (issue 43): an option the chosen
 * engine does not read is refused (exit 2, one line naming it, nothing
 * written), and each env field has one type whichever engine wrote the
 * result (env.dpdk an object), checked by every reader.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../analyze/testutil.h"
#include "rxray/result.h"

static char dir[64];

static void setup(void)
{
	cr_assert_not_null(tu_tmpdir(dir, sizeof(dir)));
}

static void teardown(void)
{
	tu_rmrf(dir);
}

TestSuite(refusals, .init = setup, .fini = teardown, .timeout = 120);

/* Whether this build has engine (rxray caps knows it). */
static bool have_engine(const char *engine)
{
	char cmd[512], *out = NULL;
	snprintf(cmd, sizeof(cmd), "%s caps --engine %s --device sim", RXRAY_BIN, engine);
	int rc = tu_run(cmd, &out);
	bool ok = !(rc == 2 && out && strstr(out, "not an engine of this build"));
	free(out);
	return ok;
}

/*
 * rxray run --engine ENGINE OPT VALUE: exit 2, one line that names --OPT
 * and says the engine does not read it, and no result file. Catches a
 * dpdk-only option accepted by verbs (and recorded as if it changed the run).
 */
static void expect_refused(const char *engine, const char *opt, const char *val)
{
	char cmd[768], out_path[128], *out = NULL;
	snprintf(out_path, sizeof(out_path), "%s/%s.json", dir, opt);
	snprintf(cmd, sizeof(cmd), "%s run --engine %s --%s %s --seconds 0.05 -q -o %s 2>&1 >/dev/null",
		 RXRAY_BIN, engine, opt, val, out_path);
	int rc = tu_run(cmd, &out);
	cr_expect_eq(rc, 2, "--engine %s --%s %s exited %d: %s", engine, opt, val, rc, out);
	char want[128];
	snprintf(want, sizeof(want), "--%s: the %s engine does not read it", opt, engine);
	cr_expect(out && strstr(out, want), "want '%s' in: %s", want, out);
	/* one line */
	cr_expect(out && strchr(out, '\n') == strrchr(out, '\n'), "more than one line: %s", out);
	struct stat st;
	cr_expect_neq(stat(out_path, &st), 0, "%s written although refused", out_path);
	free(out);
}

Test(refusals, dpdk_options_refused_by_verbs)
{
	if (!have_engine("verbs"))
		cr_skip_test("needs the verbs engine in this build");
	expect_refused("verbs", "discipline", "scalar");
	expect_refused("verbs", "free", "per-pool");
	expect_refused("verbs", "mempool-cache", "0");
	expect_refused("verbs", "buffers", "20000");
	/* the default engine is verbs: the same without --engine */
	char cmd[512], *out = NULL;
	snprintf(cmd, sizeof(cmd), "%s run --mempool-cache 0 --seconds 0.05 -q -o %s/d.json", RXRAY_BIN,
		 dir);
	cr_expect_eq(tu_run(cmd, &out), 2, "%s", out);
	cr_expect(out && strstr(out, "--mempool-cache: the verbs engine does not read it"), "%s", out);
	free(out);
}

Test(refusals, verbs_options_refused_by_dpdk)
{
	if (!have_engine("dpdk"))
		cr_skip_test("needs the dpdk engine in this build");
	expect_refused("dpdk", "consumer", "rdma-core");
}

/*
 * A dpdk option at its default (what a script passes for every engine)
 * changes nothing and is accepted; the result's env.dpdk is an object or
 * absent, never a string. Catches the verbs result's env.dpdk string.
 */
Test(refusals, default_values_accepted_and_env_dpdk_is_an_object)
{
	if (!have_engine("verbs"))
		cr_skip_test("needs the verbs engine in this build");
	char cmd[512], path[128], *out = NULL;
	snprintf(path, sizeof(path), "%s/v.json", dir);
	snprintf(cmd, sizeof(cmd),
		 "%s run --engine verbs --discipline auto --mempool-cache 256 --free mixed --buffers 0 "
		 "--rate 200k --ring 1024 --seconds 0.05 -q -o %s",
		 RXRAY_BIN, path);
	cr_assert_eq(tu_run(cmd, &out), 0, "%s", out);
	free(out);
	json_t *j = json_load_file(path, 0, NULL);
	cr_assert(j);
	json_t *d = json_object_get(json_object_get(j, "env"), "dpdk");
	cr_expect(!d || json_is_object(d), "env.dpdk is a %s", json_is_string(d) ? "string" : "?");
	if (d)
		cr_expect(json_is_string(json_object_get(d, "version")));
	json_decref(j);
}

/* The fixture run with env.<key> replaced by v (stolen), as compact text
 * the fast scanner reads too (owned). */
static char *with_env(const char *key, json_t *v)
{
	json_t *j = json_load_file(FIXTURES "/run_dpdk_hds.json", 0, NULL);
	cr_assert(j);
	json_object_set_new(json_object_get(j, "env"), key, v);
	/* no per-packet samples: the fast scanner leaves those to the checked path */
	size_t i;
	json_t *t;
	json_array_foreach(json_object_get(j, "threads"), i, t)
		json_object_del(t, "samples");
	char *s = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	cr_assert(s);
	return s;
}

/*
 * One type per env field, checked by the reader and the fast scanner
 * alike. Catches a string env.dpdk (or a wrong-typed env member) read as
 * if it were fine.
 */
Test(refusals, the_reader_rejects_a_string_env_dpdk)
{
	char err[512] = "";
	struct rxr_result *r = NULL;
	/* the fixture itself reads */
	char *ok = with_env("dpdk", json_pack("{s:s}", "version", "22.11.5"));
	cr_assert_eq(rxr_result_parse(ok, "ok.json", 0, &r, err, sizeof(err)), 0, "%s", err);
	rxr_result_free(r);
	r = NULL;
	cr_expect_eq(rxr_result_scan(ok, strlen(ok), NULL, &r), 0);
	rxr_result_free(r);
	r = NULL;
	free(ok);
	char *bad = with_env("dpdk", json_string("22.11.5"));
	cr_expect_eq(rxr_result_parse(bad, "bad.jsonl", 7, &r, err, sizeof(err)), -EINVAL);
	cr_expect_null(r);
	cr_expect(strstr(err, "bad.jsonl:7: env.dpdk: expected object, got string"), "%s", err);
	cr_expect_neq(rxr_result_scan(bad, strlen(bad), NULL, &r), 0, "the scanner accepted it");
	cr_expect_null(r);
	free(bad);
	/* another member: gpu is an array */
	bad = with_env("gpu", json_string("H200"));
	cr_expect_eq(rxr_result_parse(bad, "g.json", 0, &r, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "env.gpu: expected array, got string"), "%s", err);
	free(bad);
	/* a member rxray does not write stays free */
	bad = with_env("site_note", json_integer(3));
	cr_expect_eq(rxr_result_parse(bad, "n.json", 0, &r, err, sizeof(err)), 0, "%s", err);
	rxr_result_free(r);
	free(bad);
}

/* Through the CLI: exit 2, one line naming the file, the line and the field. */
Test(refusals, analysis_verbs_refuse_a_string_env_dpdk)
{
	char path[128], cmd[512], *out = NULL;
	snprintf(path, sizeof(path), "%s/old.jsonl", dir);
	FILE *f = fopen(path, "w");
	cr_assert(f);
	char *good = with_env("dpdk", json_pack("{s:s}", "version", "22.11.5"));
	char *bad = with_env("dpdk", json_string("22.11.5"));
	fprintf(f, "%s\n%s\n", good, bad);
	fclose(f);
	free(good);
	free(bad);
	snprintf(cmd, sizeof(cmd), "%s ceiling %s", RXRAY_BIN, path);
	cr_expect_eq(tu_run(cmd, &out), 2, "%s", out);
	char want[256];
	snprintf(want, sizeof(want), "%s:2: env.dpdk: expected object, got string", path);
	cr_expect(out && strstr(out, want), "want '%s' in: %s", want, out);
	free(out);
}
