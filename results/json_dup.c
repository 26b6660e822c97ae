/* SPDX-License-Identifier: MIT */
/*
 * A key given twice anywhere in a JSON text, found without building the
 * tree (rxray/result.h, rxr_json_dup_find). The sweep loader reads only
 * the "trial" object of most trial lines; the rest of such a line must
 * still be a record that json_loadb(..., JSON_REJECT_DUPLICATES) takes,
 * and this scan is what says so at a fraction of jansson's cost.
 *
 * It checks the grammar as it goes and answers only where the answer is
 * certain. jansson compares keys after decoding them, so a key with an
 * escape, a number that might overflow strtoll or strtod, a string jansson
 * refuses (a byte that is not UTF-8 as jansson checks it, \u0000, a lone
 * surrogate), or nesting deeper than DUP_MAX_DEPTH make it give up, as
 * does anything that is not JSON: the caller then parses the text with
 * jansson, which names what is wrong.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "rxray/result.h"

#define DUP_MAX_DEPTH 64 /* levels of nesting; deeper: leave it to jansson */
#define DUP_MAX_KEYS 512 /* keys of all the objects open at once */

struct dspan {
	const char *s;
	size_t n;
};

struct dscan {
	const char *p, *end;
	struct dspan keys[DUP_MAX_KEYS]; /* the open objects' keys, innermost last */
	size_t nkeys;
	/* where the scan is at each depth: the member's key, or the element's index */
	struct {
		bool in_obj;
		struct dspan key;
		size_t idx;
	} at[DUP_MAX_DEPTH];
	int dup_depth; /* the depth of the repeated key, once found */
};

enum { D_OK = 0, D_DUP = 1, D_MORE = 2, D_UNSURE = -1 }; /* D_MORE: between members only */

static void dws(struct dscan *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
		c->p++;
}

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* \uXXXX at p (after the backslash and 'u'): its code unit, or -1. */
static long unit4(const char *p, const char *end)
{
	if (end - p < 4)
		return -1;
	long u = 0;
	for (int i = 0; i < 4; i++) {
		int h = hexval(p[i]);
		if (h < 0)
			return -1;
		u = u * 16 + h;
	}
	return u;
}

/*
 * Bytes of the UTF-8 sequence at p (its first byte >= 0x80), or 0 where
 * jansson refuses it: a stray continuation byte, an overlong form, a
 * surrogate, above U+10FFFF, cut short.
 */
static size_t utf8_seq(const unsigned char *p, const unsigned char *end)
{
	unsigned char c = p[0], lo = 0x80, hi = 0xBF;
	size_t n;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4;
	else
		return 0;
	/* the second byte's range rules out overlong forms, surrogates and > U+10FFFF */
	if (c == 0xE0)
		lo = 0xA0;
	else if (c == 0xED)
		hi = 0x9F;
	else if (c == 0xF0)
		lo = 0x90;
	else if (c == 0xF4)
		hi = 0x8F;
	if ((size_t)(end - p) < n || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xBF)
			return 0;
	return n;
}

/*
 * A string at c->p ('"'); c->p then just past its closing quote. D_OK,
 * or D_UNSURE for what jansson might read otherwise (or refuse): a
 * control character, bad UTF-8, a \u0000 or an unpaired surrogate. *plain:
 * no escape in it (a key with one is D_UNSURE to the caller). The caller
 * takes the string's span from c->p around the call, not through memory
 * written here: reading back two stores as one load stalls the scan.
 */
static int dstring(struct dscan *c, bool *plain)
{
	c->p++;
	*plain = true;
	while (c->p < c->end) {
		unsigned char ch = (unsigned char)*c->p;
		/* the plain run: printable ASCII but '"' and '\\' */
		if ((unsigned char)(ch - 0x20) < 0x60 && ch != '"' && ch != '\\') {
			c->p++;
			continue;
		}
		if (ch == '"') {
			c->p++;
			return D_OK;
		}
		if (ch >= 0x80) {
			size_t n = utf8_seq((const unsigned char *)c->p, (const unsigned char *)c->end);
			if (!n)
				return D_UNSURE;
			c->p += n;
			continue;
		}
		if (ch != '\\')
			return D_UNSURE;
		*plain = false;
		if (c->end - c->p < 2)
			return D_UNSURE;
		char e = c->p[1];
		c->p += 2;
		if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' ||
		    e == 't')
			continue;
		if (e != 'u')
			return D_UNSURE;
		long u = unit4(c->p, c->end);
		if (u <= 0 || (u >= 0xDC00 && u <= 0xDFFF))
			return D_UNSURE;
		c->p += 4;
		if (u >= 0xD800 && u <= 0xDBFF) {
			/* a high surrogate: a low one must follow */
			if (c->end - c->p < 6 || c->p[0] != '\\' || c->p[1] != 'u')
				return D_UNSURE;
			long lo = unit4(c->p + 2, c->end);
			if (lo < 0xDC00 || lo > 0xDFFF)
				return D_UNSURE;
			c->p += 6;
		}
	}
	return D_UNSURE;
}

static bool ddigit(const struct dscan *c, const char *q)
{
	return q < c->end && *q >= '0' && *q <= '9';
}

/*
 * A number, with jansson's grammar. Sure only where jansson cannot
 * overflow: an integer of at most 18 digits, a real whose magnitude is
 * below 1e300 by its digits and exponent alone.
 */
static int dnumber(struct dscan *c)
{
	const char *q = c->p;
	if (q < c->end && *q == '-')
		q++;
	const char *ip = q;
	if (q < c->end && *q == '0')
		q++;
	else if (ddigit(c, q))
		while (ddigit(c, q))
			q++;
	else
		return D_UNSURE;
	size_t idigits = (size_t)(q - ip);
	bool real = false;
	if (q < c->end && *q == '.') {
		real = true;
		if (!ddigit(c, ++q))
			return D_UNSURE;
		while (ddigit(c, q))
			q++;
	}
	long exp = 0;
	if (q < c->end && (*q == 'e' || *q == 'E')) {
		real = true;
		q++;
		bool neg = q < c->end && *q == '-';
		if (q < c->end && (*q == '+' || *q == '-'))
			q++;
		if (!ddigit(c, q))
			return D_UNSURE;
		for (int n = 0; ddigit(c, q); n++, q++) {
			if (n == 6)
				return D_UNSURE;
			exp = exp * 10 + (*q - '0');
		}
		if (neg)
			exp = -exp;
	}
	if (real ? (long)idigits + exp > 300 : idigits > 18)
		return D_UNSURE;
	c->p = q;
	return D_OK;
}

static int dvalue(struct dscan *c, int depth);

/* Steps past '{' or '[' and white space; true when close follows (empty). */
static bool dopen(struct dscan *c, char close)
{
	c->p++;
	dws(c);
	if (c->p < c->end && *c->p == close) {
		c->p++;
		return true;
	}
	return false;
}

/* After a member: D_MORE past ',', D_OK past close, else D_UNSURE. */
static int dnext(struct dscan *c, char close)
{
	dws(c);
	if (c->p < c->end && *c->p == ',') {
		c->p++;
		return D_MORE;
	}
	if (c->p < c->end && *c->p == close) {
		c->p++;
		return D_OK;
	}
	return D_UNSURE;
}

static int dobject(struct dscan *c, int depth)
{
	size_t base = c->nkeys;
	if (dopen(c, '}'))
		return D_OK;
	c->at[depth].in_obj = true;
	for (;;) {
		bool plain;
		dws(c);
		const char *ks = c->p + 1;
		if (c->p >= c->end || *c->p != '"' || dstring(c, &plain) || !plain)
			return D_UNSURE;
		struct dspan k = {ks, (size_t)(c->p - 1 - ks)};
		c->at[depth].key = k;
		for (size_t i = base; i < c->nkeys; i++)
			/* first and last bytes first (p50, p90, p99 differ only there);
			 * an empty key's [0] is its closing quote, still in text */
			if (c->keys[i].n == k.n && c->keys[i].s[0] == k.s[0] &&
			    c->keys[i].s[k.n ? k.n - 1 : 0] == k.s[k.n ? k.n - 1 : 0] &&
			    !memcmp(c->keys[i].s, k.s, k.n)) {
				c->dup_depth = depth;
				return D_DUP;
			}
		if (c->nkeys == DUP_MAX_KEYS)
			return D_UNSURE;
		c->keys[c->nkeys++] = k;
		dws(c);
		if (c->p >= c->end || *c->p != ':')
			return D_UNSURE;
		c->p++;
		int rc = dvalue(c, depth + 1);
		if (rc)
			return rc;
		rc = dnext(c, '}');
		if (rc == D_MORE)
			continue;
		if (rc == D_OK)
			c->nkeys = base;
		return rc;
	}
}

static int darray(struct dscan *c, int depth)
{
	if (dopen(c, ']'))
		return D_OK;
	c->at[depth].in_obj = false;
	for (size_t i = 0;; i++) {
		c->at[depth].idx = i;
		int rc = dvalue(c, depth + 1);
		if (rc)
			return rc;
		rc = dnext(c, ']');
		if (rc != D_MORE)
			return rc;
	}
}

static int dvalue(struct dscan *c, int depth)
{
	dws(c);
	if (c->p >= c->end || depth >= DUP_MAX_DEPTH)
		return D_UNSURE;
	switch (*c->p) {
	case '{':
		return dobject(c, depth);
	case '[':
		return darray(c, depth);
	case '"': {
		bool plain;
		return dstring(c, &plain);
	}
	case 't':
	case 'f':
	case 'n': {
		static const char *const lits[] = {"true", "false", "null"};
		for (int i = 0; i < 3; i++) {
			size_t n = strlen(lits[i]);
			if ((size_t)(c->end - c->p) >= n && !memcmp(c->p, lits[i], n)) {
				c->p += n;
				return D_OK;
			}
		}
		return D_UNSURE;
	}
	default:
		return dnumber(c);
	}
}

int rxr_json_dup_find(const char *text, size_t len, char *path, size_t pathlen)
{
	/* on the stack (~10 KB): a malloc per line would cost more than the scan */
	struct dscan c;
	c.p = text;
	c.end = text + len;
	c.nkeys = 0;
	c.dup_depth = -1;
	dws(&c);
	/* jansson takes an object or an array at the top, nothing else */
	if (c.p >= c.end || (*c.p != '{' && *c.p != '['))
		return D_UNSURE;
	int rc = dvalue(&c, 0);
	if (rc == D_OK) {
		dws(&c);
		return c.p == c.end ? D_OK : D_UNSURE;
	}
	if (rc == D_DUP && path && pathlen) {
		size_t o = 0;
		path[0] = '\0';
		for (int d = 0; d <= c.dup_depth && o < pathlen; d++) {
			int n = c.at[d].in_obj ? snprintf(path + o, pathlen - o, "%s%.*s", d ? "." : "",
							  (int)(c.at[d].key.n > 64 ? 64 : c.at[d].key.n),
							  c.at[d].key.s)
					       : snprintf(path + o, pathlen - o, "[%zu]", c.at[d].idx);
			if (n < 0)
				break;
			o += (size_t)n;
		}
	}
	return rc;
}
