/* SPDX-License-Identifier: MIT */
/*
 * The `generator:` block (rxray/generator.h), as a sweep spec holds it and
 * as `rxray run --generator FILE` reads it: one parser, so a block the
 * spec accepts is one the run accepts. Errors name file:line:column.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "rxray/util.h"
#include "spec_int.h"

#define GEN_FIELDS "kind, name, start, count, iface, flows, drain, rx_iface, setup, teardown"
#define GEN_PLACEHOLDERS                                                                           \
	"{rate_pps} {frame} {seconds} {flows} {iface} {packets} {rate_bps} {gap_ns} {output}"

static int gfail(const char *file, const yaml_node_t *n, const char *field, char *err,
		 size_t errlen, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static int gfail(const char *file, const yaml_node_t *n, const char *field, char *err,
		 size_t errlen, const char *fmt, ...)
{
	char what[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "%s:%zu:%zu: %s: %s", file, n->start_mark.line + 1,
		 n->start_mark.column + 1, field, what);
	return -EINVAL;
}

static const char *gscalar(const yaml_node_t *n)
{
	if (n->type != YAML_SCALAR_NODE)
		return NULL;
	const char *s = (const char *)n->data.scalar.value;
	/* a plain empty, ~ or null is no value */
	if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	    (!*s || !strcmp(s, "~") || !strcmp(s, "null")))
		return NULL;
	return s;
}

static int gstring(const char *file, const yaml_node_t *v, const char *field, char *out,
		   size_t outlen, char *err, size_t errlen)
{
	const char *s = gscalar(v);
	if (!s || !*s)
		return gfail(file, v, field, err, errlen, "expected a non-empty string, got %s",
			     v->type == YAML_SCALAR_NODE ? "nothing"
			     : v->type == YAML_SEQUENCE_NODE ? "a list"
							     : "a mapping");
	if (strlen(s) >= outlen)
		return gfail(file, v, field, err, errlen, "too long (at most %zu characters)",
			     outlen - 1);
	snprintf(out, outlen, "%s", s);
	return 0;
}

/* A template expands with every placeholder known. */
static int gtemplate(const char *file, const yaml_node_t *v, const char *field,
		     const struct sweep_gen *g, const char *tmpl, char *err, size_t errlen)
{
	char probe[4096];
	struct sweep_gen_ask a = {1000, 64, 1, "/tmp/x"};
	int rc = sweep_gen_expand(tmpl, g, &a, probe, sizeof(probe));
	if (rc == -EINVAL)
		return gfail(file, v, field, err, errlen,
			     "unknown placeholder {%s} (known: " GEN_PLACEHOLDERS ")", probe);
	return 0;
}

int sweep_gen_from_node(yaml_document_t *doc, const yaml_node_t *n, const char *file,
			struct sweep_gen *g, char *err, size_t errlen)
{
	sweep_gen_defaults(g);
	if (n->type != YAML_MAPPING_NODE)
		return gfail(file, n, "generator", err, errlen,
			     "expected a mapping (" GEN_FIELDS "), got %s",
			     n->type == YAML_SCALAR_NODE ? "a scalar" : "a list");
	const yaml_node_t *start_v = NULL, *count_v = NULL, *iface_v = NULL;
	unsigned seen = 0;
	static const char *const names[] = {"kind",  "name",  "start",    "count", "iface",
					    "flows", "drain", "rx_iface", "setup", "teardown"};
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = yaml_document_get_node(doc, p->key);
		const yaml_node_t *v = yaml_document_get_node(doc, p->value);
		const char *name = gscalar(k);
		char field[48];
		if (!name)
			return gfail(file, k, "generator", err, errlen, "keys must be names");
		snprintf(field, sizeof(field), "generator.%.30s", name);
		int idx = -1;
		for (int i = 0; i < (int)(sizeof(names) / sizeof(names[0])); i++)
			if (!strcmp(name, names[i]))
				idx = i;
		if (idx < 0)
			return gfail(file, k, field, err, errlen, "unknown field (known: " GEN_FIELDS ")");
		if (seen & (1u << idx))
			return gfail(file, k, field, err, errlen, "given twice");
		seen |= 1u << idx;
		int rc = 0;
		const char *s = gscalar(v);
		switch (idx) {
		case 0:
			rc = gstring(file, v, field, g->kind, sizeof(g->kind), err, errlen);
			if (!rc && strcmp(g->kind, "command"))
				rc = gfail(file, v, field, err, errlen,
					   "unknown kind '%s' (known: command; a TRex STL or "
					   "pktgen-dpdk script runs as a command, docs/generators.md)",
					   g->kind);
			break;
		case 1:
			rc = gstring(file, v, field, g->name, sizeof(g->name), err, errlen);
			break;
		case 2:
			start_v = v;
			rc = gstring(file, v, field, g->start, sizeof(g->start), err, errlen);
			break;
		case 3:
			count_v = v;
			rc = gstring(file, v, field, g->count, sizeof(g->count), err, errlen);
			break;
		case 4:
			iface_v = v;
			rc = gstring(file, v, field, g->iface, sizeof(g->iface), err, errlen);
			break;
		case 5: {
			uint64_t f;
			if (!s || rxu_parse_u64(s, 1, 65535, &f) < 0)
				rc = gfail(file, v, field, err, errlen,
					   "expected an integer in [1, 65535], got %s%s%s",
					   s ? "'" : "", s ? s : "nothing", s ? "'" : "");
			else
				g->flows = (unsigned)f;
			break;
		}
		case 6:
			if (!s || rxu_parse_seconds(s, 0, 60, &g->drain_s) < 0)
				rc = gfail(file, v, field, err, errlen,
					   "expected a duration in [0, 60s] like 0.2 or 200ms, got "
					   "%s%s%s",
					   s ? "'" : "", s ? s : "nothing", s ? "'" : "");
			break;
		case 7:
			rc = gstring(file, v, field, g->rx_iface, sizeof(g->rx_iface), err, errlen);
			break;
		case 8:
			rc = gstring(file, v, field, g->setup, sizeof(g->setup), err, errlen);
			break;
		default:
			rc = gstring(file, v, field, g->teardown, sizeof(g->teardown), err, errlen);
			break;
		}
		if (rc < 0)
			return rc;
	}
	if (!start_v)
		return gfail(file, n, "generator", err, errlen,
			     "needs start (the command that sends the trial's traffic)");
	if (!count_v)
		return gfail(file, n, "generator", err, errlen,
			     "needs count (the command that prints how many packets start sent)");
	int rc = gtemplate(file, start_v, "generator.start", g, g->start, err, errlen);
	if (!rc)
		rc = gtemplate(file, count_v, "generator.count", g, g->count, err, errlen);
	if (!rc && !iface_v && (strstr(g->start, "{iface}") || strstr(g->count, "{iface}")))
		rc = gfail(file, start_v, "generator.start", err, errlen,
			   "uses {iface}, and the block has no iface");
	if (!rc && !g->name[0])
		snprintf(g->name, sizeof(g->name), "%s", g->kind);
	return rc;
}

int sweep_gen_load(const char *path, struct sweep_gen *g, char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	int rc = sweep_file_read(path, &buf, &len, err, errlen);
	if (!rc)
		rc = sweep_yaml_check(buf ? buf : "", len, path, err, errlen);
	yaml_parser_t parser;
	yaml_document_t doc;
	if (!rc && !yaml_parser_initialize(&parser))
		rc = -ENOMEM;
	else if (!rc) {
		yaml_parser_set_input_string(&parser, (const unsigned char *)(buf ? buf : ""), len);
		if (!yaml_parser_load(&parser, &doc)) {
			snprintf(err, errlen, "%s:%zu:%zu: yaml: %s", path,
				 parser.problem_mark.line + 1, parser.problem_mark.column + 1,
				 parser.problem ? parser.problem : "parse error");
			rc = -EINVAL;
		} else {
			const yaml_node_t *root = yaml_document_get_root_node(&doc), *blk = NULL;
			bool bare = false;
			for (yaml_node_pair_t *p = root && root->type == YAML_MAPPING_NODE
							? root->data.mapping.pairs.start
							: NULL;
			     p && p < root->data.mapping.pairs.top; p++) {
				const char *k = gscalar(yaml_document_get_node(&doc, p->key));
				if (k && !strcmp(k, "generator"))
					blk = yaml_document_get_node(&doc, p->value);
				if (k && !strcmp(k, "start"))
					bare = true;
			}
			if (!blk && bare)
				blk = root;
			if (blk)
				rc = sweep_gen_from_node(&doc, blk, path, g, err, errlen);
			else {
				snprintf(err, errlen,
					 "%s:1:1: generator: no generator block here (a spec's "
					 "`generator:` field, or a file with start: and count:)",
					 path);
				rc = -EINVAL;
			}
			yaml_document_delete(&doc);
		}
		yaml_parser_delete(&parser);
	}
	free(buf);
	return rc;
}
