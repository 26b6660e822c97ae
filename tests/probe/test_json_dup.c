/*
 * The duplicate-key scan (rxr_json_dup_find) against jansson with
 * JSON_REJECT_DUPLICATES: where it answers, jansson agrees (0: jansson
 * takes the text; 1: jansson refuses it for a key given twice), and it
 * names the repeated key by its path. Where it cannot tell (-1) the
 * loader parses the line with jansson, so a wrong 0 is the bug that
 * matters: a record with a repeated key, or not JSON at all, taken unread.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/result.h"

/* rxr_json_dup_find, and jansson's verdict on the same text checked against it */
static int dup_find(const char *text, size_t len, char *path, size_t plen)
{
	int rc = rxr_json_dup_find(text, len, path, plen);
	json_error_t je;
	json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (rc == 0)
		cr_expect_not_null(j, "said clean, jansson refuses (%s): %.*s", je.text, (int)len, text);
	if (rc == 1)
		cr_expect(!j && json_error_code(&je) == json_error_duplicate_key,
			  "said repeated (%s), jansson %s: %.*s", path ? path : "", j ? "takes it" : je.text,
			  (int)len, text);
	json_decref(j);
	return rc;
}

Test(json_dup, names_the_repeated_key_by_its_path)
{
	static const struct {
		const char *text, *path;
	} cases[] = {
		{"{\"a\":1,\"a\":2}", "a"},
		{"{\"a\":{\"b\":1,\"c\":2,\"b\":3}}", "a.b"},
		{"{\"t\":[{\"x\":1},{\"y\":1,\"y\":[]}]}", "t[1].y"},
		{"[{\"k\":1},[{\"k\":1,\"k\":1}]]", "[1][0].k"},
		/* p50, p90, p99: alike but for their last byte */
		{"{\"p50\":1,\"p90\":2,\"p99\":3,\"p90\":4}", "p90"},
		{"{\"\":1,\"\":2}", ""},
		/* after a sibling object closed, its keys are no longer the outer one's */
		{"{\"x\":{\"a\":1},\"a\":{\"a\":2},\"y\":1,\"x\":null}", "x"},
		/* found before the text ends: jansson refuses there too */
		{"{\"a\":1,\"a\":", "a"},
		{" \t\r\n{ \"a\" : 1 , \"a\" : 2 } ", "a"},
		/* UTF-8 keys: jansson compares their bytes as they are */
		{"{\"\xc3\xa9t\xc3\xa9\":1,\"\xc3\xa9t\xc3\xa9\":2}", "\xc3\xa9t\xc3\xa9"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char path[64] = "unset";
		cr_expect_eq(dup_find(cases[i].text, strlen(cases[i].text), path, sizeof(path)), 1,
			     "%s", cases[i].text);
		cr_expect_str_eq(path, cases[i].path, "%s", cases[i].text);
	}
	/* a short buffer gets the path cut, never overrun */
	char small[4];
	cr_expect_eq(dup_find("{\"abcdef\":{\"g\":1,\"g\":2}}", 24, small, sizeof(small)), 1);
	cr_expect_str_eq(small, "abc");
}

Test(json_dup, clean_texts_are_clean)
{
	static const char *const ok[] = {
		"{}",
		"[]",
		"{\"a\":1,\"b\":{\"a\":1},\"c\":[{\"a\":1},{\"a\":1}]}",
		"{\"x\":{\"a\":1},\"y\":{\"a\":1}}",
		"{\"ab\":1,\"a\":2,\"b\":3,\"ba\":4}",
		"{\"n\":[-0,0.5,-1.25e-3,1E+2,123456789012345678,1e299,0.000001e-400]}",
		"{\"s\":\"q\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0041\\ud83d\\ude00~\\u007f\"}",
		"{\"t\":true,\"f\":false,\"n\":null}",
		/* UTF-8 of 2, 3 and 4 bytes, at the edges jansson checks */
		"{\"cpu\":\"Intel\xc2\xae \xe2\x84\xa2 \xf0\x9f\x98\x80\",\"\xc3\xa9\":1,\"e\":2}",
		"{\"s\":\"\xc2\x80\xdf\xbf\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xf0\x90\x80\x80\xf4\x8f\xbf\xbf\"}",
		"[1, 2 ,[ ] , { } ]\n",
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char path[64];
		cr_expect_eq(dup_find(ok[i], strlen(ok[i]), path, sizeof(path)), 0, "%s", ok[i]);
	}
}

/* What jansson would decide otherwise, or refuse for another reason: left to it. */
Test(json_dup, gives_up_where_it_cannot_tell)
{
	static const char *const unsure[] = {
		/* escaped keys: jansson compares them decoded ("\u0061" is "a") */
		"{\"a\":1,\"\\u0061\":2}",
		"{\"\\n\":1}",
		/* bytes that are not UTF-8 as jansson checks it */
		"{\"k\":\"\xff\"}",
		"{\"k\":\"\x80\"}",
		"{\"k\":\"\xc0\xaf\"}",		/* overlong '/' */
		"{\"k\":\"\xe0\x9f\xbf\"}",	/* overlong */
		"{\"k\":\"\xed\xa0\x80\"}",	/* a surrogate */
		"{\"k\":\"\xf4\x90\x80\x80\"}", /* above U+10FFFF */
		"{\"k\":\"\xe2\x84\"}",		/* cut short */
		"{\"k\":\"\xc3\"",
		/* numbers that may overflow */
		"{\"a\":1234567890123456789}",
		"{\"a\":1e301}",
		"{\"a\":1.5e1000000}",
		/* strings jansson refuses */
		"{\"a\":\"\\u0000\"}",
		"{\"a\":\"\\udc00\"}",
		"{\"a\":\"\\ud800x\"}",
		"{\"a\":\"\\x\"}",
		"{\"a\":\"tab\there\"}",
		/* not JSON */
		"",
		"   ",
		"\"s\"",
		"1",
		"{\"a\":}",
		"{\"a\":1,}",
		"{\"a\" 1}",
		"{a:1}",
		"[1,2",
		"{} x",
		"{}{}",
		"{\"a\":01}",
		"{\"a\":-}",
		"{\"a\":1.}",
		"{\"a\":.5}",
		"{\"a\":1e}",
		"{\"a\":tru}",
		"{\"a\":truex}",
		"{\"a\":1x}",
		"{\"a\":\"open",
	};
	for (size_t i = 0; i < sizeof(unsure) / sizeof(unsure[0]); i++) {
		char path[64];
		cr_expect_eq(dup_find(unsure[i], strlen(unsure[i]), path, sizeof(path)), -1, "%s",
			     unsure[i]);
	}
	/* nesting: 64 levels are scanned, deeper is jansson's */
	char deep[300];
	for (int depth = 63; depth <= 66; depth++) {
		memset(deep, '[', (size_t)depth);
		memset(deep + depth, ']', (size_t)depth);
		cr_expect_eq(dup_find(deep, 2 * (size_t)depth, NULL, 0), depth <= 64 ? 0 : -1,
			     "depth %d", depth);
	}
}

/*
 * Every two bytes from 0x80 in a string (all 32,768): the scan takes
 * exactly the ones jansson takes, the 1,920 two-byte UTF-8 sequences, and
 * gives up on the rest (a scan that took bad UTF-8 would let the loader
 * keep a line jansson refuses; one that gave up on good UTF-8 would only
 * be slow, but the count says so).
 */
Test(json_dup, utf8_in_strings_as_jansson_reads_it)
{
	int taken = 0, jansson = 0;
	for (int a = 0x80; a < 0x100; a++)
		for (int b = 0; b < 0x100; b++) {
			char t[] = "{\"s\":\"..\"}";
			t[6] = (char)a;
			t[7] = (char)b;
			json_t *j = json_loadb(t, sizeof(t) - 1, JSON_REJECT_DUPLICATES, NULL);
			jansson += j != NULL;
			json_decref(j);
			int rc = dup_find(t, sizeof(t) - 1, NULL, 0);
			cr_expect(rc == 0 || rc == -1, "%02x %02x: %d", a, b, rc);
			taken += rc == 0;
		}
	cr_expect_eq(jansson, 1920);
	cr_expect_eq(taken, 1920);
}

/*
 * A whole trial line of the fixture sweep: clean; every key in it given
 * twice (a copy inserted before it) is found and named; and no cut of
 * it is taken for whole (each is read to its end, in bounds under ASan).
 */
Test(json_dup, every_key_of_a_trial_line)
{
	FILE *f = fopen(RXRAY_SRC_DIR "/tests/analyze/data/sweep/results.jsonl", "r");
	cr_assert_not_null(f);
	char *line = NULL;
	size_t cap = 0;
	ssize_t n = getline(&line, &cap, f);
	fclose(f);
	cr_assert_gt(n, 100);
	size_t len = (size_t)n - 1; /* without its newline */
	cr_assert(strstr(line, "\"trial\":{"), "the first line is a trial line");
	char path[160];
	cr_expect_eq(dup_find(line, len, path, sizeof(path)), 0);
	int keys = 0;
	char *edit = malloc(len + 300);
	cr_assert_not_null(edit);
	for (size_t at = 0; at < len; at++) {
		if (line[at] != '"' || (line[at - 1] != '{' && line[at - 1] != ','))
			continue;
		const char *q = memchr(line + at + 1, '"', len - at - 1);
		cr_assert(q && q[1] == ':');
		size_t kn = (size_t)(q - line - at - 1);
		/* before the key: "key":0, */
		memcpy(edit, line, at);
		int w = snprintf(edit + at, 200, "\"%.*s\":0,", (int)kn, line + at + 1);
		memcpy(edit + at + (size_t)w, line + at, len - at);
		size_t elen = len + (size_t)w;
		path[0] = '\0';
		cr_expect_eq(dup_find(edit, elen, path, sizeof(path)), 1, "key %.*s at %zu", (int)kn,
			     line + at + 1, at);
		size_t pl = strlen(path);
		cr_expect(pl >= kn && !memcmp(path + pl - kn, line + at + 1, kn),
			  "key %.*s named as '%s'", (int)kn, line + at + 1, path);
		keys++;
	}
	cr_expect_gt(keys, 100, "only %d keys found in a trial line", keys);
	for (size_t cut = 0; cut < len; cut++)
		cr_expect_eq(rxr_json_dup_find(line, cut, NULL, 0), -1, "a cut at %zu taken", cut);
	free(edit);
	free(line);
}
