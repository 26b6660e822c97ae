/*
 * The README's "How to read the output" against what rxray prints. The
 * words come from the code, not from a list kept here: the sweep table
 * printed from summaries that set every flag and status the summary has
 * (its flags column, its note, its column heads and its legend's list),
 * every point status, and every mark the analyzers attach. A word the
 * README does not explain as a row or a `quoted` term fails the test.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/analyze.h"
#include "rxray/sweep.h"
#include "sweep_test_util.h"

__attribute__((noinline)) static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n = getdelim(&buf, &cap, '\0', f);
	fclose(f);
	cr_assert_gt(n, 0, "%s is empty", path);
	return buf;
}

/* The README's section "## How to read the output", up to the next "## ". */
static char *how_to_read(void)
{
	char *all = slurp(RXRAY_SRC_DIR "/README.md");
	char *s = strstr(all, "\n## How to read the output\n");
	cr_assert_not_null(s, "README.md has no \"## How to read the output\" section");
	s++;
	char *end = strstr(s + 3, "\n## ");
	size_t n = end ? (size_t)(end - s) : strlen(s);
	char *out = strndup(s, n);
	free(all);
	return out;
}

/* word explained: a table row of the text whose first cell starts with it
 * (not a row of an indented example), or a `quoted` term */
static void expect_explained(const char *sec, const char *word, const char *from)
{
	char a[160], b[160], c[160], d[160];
	snprintf(a, sizeof(a), "\n| %s", word);
	snprintf(d, sizeof(d), "\n| `%s", word);
	snprintf(b, sizeof(b), "`%s", word);
	snprintf(c, sizeof(c), "`N %s", word); /* a count before it: `N disturbed trials` */
	cr_expect(strstr(sec, a) || strstr(sec, b) || strstr(sec, c) || strstr(sec, d),
		  "README.md, \"How to read the output\": nothing explains '%s' (%s)", word, from);
}

static json_t *summary(const char *frame, const char *status, const char *reason)
{
	json_t *s = json_pack("{s:s, s:s, s:{s:s, s:s}, s:f, s:f, s:f, s:f, s:f, s:i, s:s, s:[]}",
			      "schema", SWEEP_POINT_SCHEMA, "key", frame, "knobs", "engine", "verbs",
			      "frame", frame, "ndr_mpps", 5.0, "ndr_upper_mpps", 5.1, "pdr_mpps",
			      5.5, "pdr_upper_mpps", 5.6, "nic_max_mpps", 20.0, "trials", 8,
			      "status", status, "flags");
	cr_assert_not_null(s);
	if (reason)
		json_object_set_new(s, "reason", json_string(reason));
	return s;
}

/* The table printed from rows that together set every flag a summary has. */
static char *table(void)
{
	json_t *rows[8];
	size_t n = 0;
	rows[n++] = summary("1064", "ok", NULL);
	json_t *f = summary("2064", "ok", NULL);
	json_t *fl = json_object_get(f, "flags");
	json_array_append_new(fl, json_string("oversubscribed"));
	json_array_append_new(fl, json_string("unresolved"));
	json_array_append_new(fl, json_string("disturbed"));
	json_object_set_new(f, "disturbed_trials", json_integer(2));
	json_object_set_new(f, "ndr_resolved", json_false());
	rows[n++] = f;
	f = summary("4064", "ok", NULL);
	json_object_set_new(f, "generator_limited", json_true());
	json_object_set_new(f, "ndr_upper_mpps", json_null());
	rows[n++] = f;
	f = summary("8064", "ok", NULL);
	json_object_set_new(f, "generator_limited", json_true());
	json_object_set_new(f, "line_limited", json_true());
	rows[n++] = f;
	/* every status a point can end in: the enum's names, until they repeat */
	for (int i = 1; i < 16 && n < 8; i++) {
		const char *st = sweep_point_status_name((enum sweep_point_status)i);
		if (i > 1 && !strcmp(st, sweep_point_status_name((enum sweep_point_status)(i - 1))))
			break;
		char fr[16];
		snprintf(fr, sizeof(fr), "%d", 9000 + i);
		rows[n++] = summary(fr, st, "why it did not run");
	}
	char *out = sw_table_of(rows, n);
	for (size_t i = 0; i < n; i++)
		json_decref(rows[i]);
	return out;
}

/* cells of a markdown row "| a | b |" into cells[]; their count */
static int cells_of(char *row, char **cells, int max)
{
	int n = 0;
	char *save = NULL;
	for (char *c = strtok_r(row, "|", &save); c && n < max; c = strtok_r(NULL, "|", &save)) {
		while (*c == ' ')
			c++;
		size_t l = strlen(c);
		while (l && (c[l - 1] == ' ' || c[l - 1] == '\n'))
			c[--l] = '\0';
		cells[n++] = c;
	}
	return n;
}

Test(readme, explains_every_mark_status_and_column_the_sweep_table_prints)
{
	char *sec = how_to_read();
	char *t = table();
	char *save = NULL, *heads[32], *cells[32];
	int nh = 0, flags_col = -1, note_col = -1, rows = 0;
	bool seen_gl = false, seen_line = false, seen_trials = false;
	for (char *line = strtok_r(t, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] != '|' || strstr(line, "---"))
			continue;
		if (!nh) {
			nh = cells_of(line, heads, 32);
			for (int i = 0; i < nh; i++) {
				if (!strcmp(heads[i], "flags"))
					flags_col = i;
				if (!strcmp(heads[i], "note"))
					note_col = i;
				if (strcmp(heads[i], "engine") && strcmp(heads[i], "frame"))
					expect_explained(sec, heads[i], "a column of the sweep table");
			}
			cr_assert_geq(flags_col, 0, "the table has no flags column");
			cr_assert_geq(note_col, 0, "the table has no note column");
			continue;
		}
		int nc = cells_of(line, cells, 32);
		cr_assert_eq(nc, nh, "row of %d cells under %d heads: %s", nc, nh, line);
		rows++;
		/* "a, b; 2 disturbed trials" */
		char *fs = NULL;
		for (char *w = strtok_r(cells[flags_col], ",;", &fs); w; w = strtok_r(NULL, ",;", &fs)) {
			while (*w == ' ' || (*w >= '0' && *w <= '9'))
				w++;
			if (!*w || !strcmp(w, "-"))
				continue;
			seen_gl |= !strcmp(w, "generator-limited");
			seen_line |= !strcmp(w, "line-rate-limited");
			seen_trials |= !strcmp(w, "disturbed trials");
			expect_explained(sec, w, "a flag of the sweep table");
		}
		/* a point that did not run: "status: reason" */
		char *colon = strchr(cells[note_col], ':');
		if (colon && strstr(cells[note_col], "why it did not run")) {
			*colon = '\0';
			expect_explained(sec, cells[note_col], "a point's status in the note");
		}
	}
	cr_expect_geq(rows, 6, "%s", t);
	/* the rows really set them: a flag that stopped printing fails here */
	cr_expect(seen_gl && seen_line && seen_trials, "flags not all printed");
	free(t);
	free(sec);
}

/* The legend under the table lists its flags: each is explained. */
Test(readme, explains_every_flag_the_legend_lists)
{
	char *sec = how_to_read();
	char *t = table();
	char *l = strstr(t, "Flags: ");
	cr_assert_not_null(l, "%s", t);
	l += strlen("Flags: ");
	char *end = strstr(l, ". NIC flat-out");
	cr_assert_not_null(end, "%s", l);
	*end = '\0';
	int n = 0;
	/* "a (why), b (why, more), c (why)": the words before each " (" at depth 0 */
	int depth = 0;
	char word[64];
	size_t w = 0;
	for (char *p = l; *p; p++) {
		if (*p == '(') {
			if (!depth++ && w) {
				while (w && word[w - 1] == ' ')
					w--;
				word[w] = '\0';
				expect_explained(sec, word, "a flag in the sweep table's legend");
				n++;
			}
			w = 0;
		} else if (*p == ')') {
			depth--;
		} else if (!depth && *p != ',' && !(*p == ' ' && !w) && w < sizeof(word) - 1) {
			word[w++] = *p;
		}
	}
	cr_expect_geq(n, 5, "legend: %s", l);
	free(t);
	free(sec);
}

/* ceiling, diff, flame and report carry the analyzers' marks: each is explained. */
Test(readme, explains_every_mark_the_analyzers_attach)
{
	char *sec = how_to_read();
	for (unsigned b = 0; b < RXA_MARK_COUNT; b++) {
		const char *w = rxa_mark_word(1u << b);
		cr_assert(w && strcmp(w, "?"), "mark bit %u has no word", b);
		expect_explained(sec, w, "an analyzers' mark");
	}
	free(sec);
}
