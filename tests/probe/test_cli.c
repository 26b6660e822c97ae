/* The rxray binary: --help, --version, exit codes, doctor. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* Run a command, capture stdout (and stderr when merge), return exit code. */
static int run(const char *cmd, char *out, size_t outlen)
{
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	size_t n = fread(out, 1, outlen - 1, p);
	out[n] = '\0';
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static char buf[1 << 16];

Test(cli, help_lists_every_verb)
{
	cr_assert_eq(run(RXRAY_BIN " --help", buf, sizeof(buf)), 0);
	const char *verbs[] = {"run", "sweep", "ceiling", "diff", "flame", "report", "attach", "caps",
			       "doctor"};
	for (size_t i = 0; i < 9; i++) {
		char needle[32];
		snprintf(needle, sizeof(needle), "\n  %s ", verbs[i]);
		cr_expect(strstr(buf, needle) != NULL, "--help lacks %s", verbs[i]);
	}
	cr_assert(strstr(buf, "USAGE") && strstr(buf, "EXAMPLES"));
	cr_assert_eq(run(RXRAY_BIN " --version", buf, sizeof(buf)), 0);
	cr_assert(strncmp(buf, "rxray ", 6) == 0);
}

Test(cli, exit_codes)
{
	cr_assert_eq(run(RXRAY_BIN " 2>&1", buf, sizeof(buf)), 2);
	cr_assert_eq(run(RXRAY_BIN " frobnicate 2>&1", buf, sizeof(buf)), 2);
	cr_assert(strstr(buf, "unknown verb 'frobnicate'"), "%s", buf);
	cr_assert_eq(run(RXRAY_BIN " doctor --bogus 2>&1", buf, sizeof(buf)), 2);
	/* one wording for every verb (tools/cli_io.c), naming the option */
	cr_assert(strstr(buf, "rxray doctor: --bogus: unknown option"), "%s", buf);
	cr_assert_eq(run(RXRAY_BIN " doctor --calib-ms 1 2>&1", buf, sizeof(buf)), 2);
	cr_assert(strstr(buf, "--calib-ms"), "%s", buf);
	/* exactly one line on stderr */
	cr_assert_eq(strchr(buf, '\n'), buf + strlen(buf) - 1, "%s", buf);
}

Test(cli, every_verb_answers_help_or_not_available)
{
	const char *verbs[] = {"run", "sweep", "ceiling", "diff", "flame", "report", "attach", "caps",
			       "doctor"};
	for (size_t i = 0; i < 9; i++) {
		char cmd[512];
		snprintf(cmd, sizeof(cmd), RXRAY_BIN " %s --help 2>&1", verbs[i]);
		int rc = run(cmd, buf, sizeof(buf));
		if (rc == 1) {
			cr_expect(strstr(buf, "not available in this build"), "%s: %s", verbs[i], buf);
			continue;
		}
		cr_expect_eq(rc, 0, "%s --help exit %d", verbs[i], rc);
		cr_expect(strstr(buf, "USAGE") && strstr(buf, "EXAMPLES"), "%s --help: %s", verbs[i],
			  buf);
	}
}

Test(cli, doctor_reports_every_check)
{
	cr_assert_eq(run(RXRAY_BIN " doctor --calib-ms 50", buf, sizeof(buf)), 0);
	const char *checks[] = {"cores", "clock", "hugepages", "pmu", "bpf", "dpdk", "rdma-core",
				"cuda", "gpu"};
	for (size_t i = 0; i < 9; i++) {
		char *line = strstr(buf, checks[i]);
		cr_expect_not_null(line, "doctor lacks %s", checks[i]);
	}
	for (char *l = buf; *l; l = strchr(l, '\n') + 1) {
		cr_expect(!strncmp(l, "OK ", 3) || !strncmp(l, "WARN", 4) || !strncmp(l, "FAIL", 4) ||
				  !strncmp(l, "     ", 5) || !strncmp(l, "doctor:", 7),
			  "unexpected line: %.60s", l);
		if (!strchr(l, '\n'))
			break;
	}
	/* the dpdk line agrees with the engines `rxray run --help` lists */
	char line[512] = "", help[16384];
	for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		char lv[8], name[16];
		if (sscanf(l, "%7s %15s", lv, name) == 2 && !strcmp(name, "dpdk")) {
			size_t n = strcspn(l, "\n");
			snprintf(line, sizeof(line), "%.*s", (int)(n < 511 ? n : 511), l);
			break;
		}
	}
	cr_assert(line[0], "doctor has no dpdk line");
	cr_assert_eq(run(RXRAY_BIN " run --help", help, sizeof(help)), 0);
	char *el = strstr(help, "--engine NAME");
	cr_assert_not_null(el);
	el[strcspn(el, "\n")] = '\0';
	if (strstr(line, "built with DPDK"))
		cr_assert_eq(strstr(line, "dpdk engine available") != NULL, strstr(el, "dpdk") != NULL,
			     "doctor: '%s'; run: '%s'", line, el);
	cr_assert_eq(run(RXRAY_BIN " doctor --json --calib-ms 50", buf, sizeof(buf)), 0);
	json_error_t je;
	json_t *doc = json_loads(buf, 0, &je);
	cr_assert_not_null(doc, "%s", je.text);
	cr_assert_str_eq(json_string_value(json_object_get(doc, "schema")), "rxray.doctor/1");
	json_t *arr = json_object_get(doc, "checks");
	cr_assert_geq(json_array_size(arr), 9);
	size_t i;
	json_t *c;
	json_array_foreach(arr, i, c) {
		const char *lv = json_string_value(json_object_get(c, "level"));
		cr_assert(lv && (!strcmp(lv, "OK") || !strcmp(lv, "WARN") || !strcmp(lv, "FAIL")));
		if (strcmp(lv, "OK"))
			cr_assert_not_null(json_object_get(c, "fix"), "a non-OK check names its fix");
		if (!strcmp(json_string_value(json_object_get(c, "check")), "clock"))
			cr_assert(strstr(json_string_value(json_object_get(c, "detail")), "MHz"));
	}
	json_decref(doc);
}
