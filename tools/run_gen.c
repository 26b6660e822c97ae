/* SPDX-License-Identifier: MIT */
/* rxray run --generator (run_gen.h): the sweep library's generator runner. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "run_gen.h"
#include "rxray/util.h"
#ifdef RXRAY_VERB_SWEEP
#include "rxray/generator.h"
#endif

#define VERB "run"

#ifdef RXRAY_VERB_SWEEP
struct run_gen {
	struct sweep_gen_run *gr;
};

int rxt_run_gen_open(const char *file, struct rx_config *c, const struct rx_run_watch *inner,
		 volatile sig_atomic_t *user_stop, struct run_gen **out, struct rx_run_watch *w,
		 volatile sig_atomic_t **stop)
{
	struct sweep_gen g;
	char err[640];
	*out = NULL;
	int rc = sweep_gen_load(file, &g, err, sizeof(err));
	if (rc < 0) {
		rxu_err(VERB, "--generator: %s", err);
		return rc == -ENOMEM ? RXU_EXIT_RUNTIME : RXU_EXIT_USAGE;
	}
	struct run_gen *rg = calloc(1, sizeof(*rg));
	if (!rg) {
		rxu_err(VERB, "out of memory");
		return RXU_EXIT_RUNTIME;
	}
	rc = sweep_gen_run_open(&g, c, inner, user_stop, &rg->gr, w, stop, err, sizeof(err));
	if (rc < 0) {
		free(rg);
		/* "generator: <what>" -> "--generator: <what>" */
		rxu_err(VERB, "--%s", err);
		return rc == -EINVAL ? RXU_EXIT_USAGE : RXU_EXIT_RUNTIME;
	}
	c->seconds = sweep_gen_run_seconds(c->seconds);
	*out = rg;
	return 0;
}

int rxt_run_gen_finish(struct run_gen *g, struct rxr_result *r, bool *conserved)
{
	char err[640];
	if (sweep_gen_run_finish(g->gr, r, conserved, err, sizeof(err)) < 0) {
		rxu_err(VERB, "%s", err);
		return RXU_EXIT_RUNTIME;
	}
	return 0;
}

void rxt_run_gen_close(struct run_gen *g)
{
	if (!g)
		return;
	sweep_gen_run_close(g->gr);
	free(g);
}

void rxt_run_gen_print(FILE *f, const struct rxr_result *r)
{
	sweep_gen_print(f, r->extra ? json_object_get(r->extra, "generator") : NULL);
}
#else
int rxt_run_gen_open(const char *file, struct rx_config *c, const struct rx_run_watch *inner,
		 volatile sig_atomic_t *user_stop, struct run_gen **out, struct rx_run_watch *w,
		 volatile sig_atomic_t **stop)
{
	(void)file, (void)c, (void)inner, (void)user_stop, (void)w, (void)stop;
	*out = NULL;
	rxu_err(VERB, "--generator: not available in this build (it needs libyaml)");
	return RXU_EXIT_USAGE;
}

int rxt_run_gen_finish(struct run_gen *g, struct rxr_result *r, bool *conserved)
{
	(void)g, (void)r;
	*conserved = false;
	return RXU_EXIT_RUNTIME;
}

void rxt_run_gen_close(struct run_gen *g)
{
	(void)g;
}

void rxt_run_gen_print(FILE *f, const struct rxr_result *r)
{
	(void)f, (void)r;
}
#endif

void rxt_run_gen_help(FILE *f)
{
	fprintf(f, "  %-28s %s\n", "--generator FILE",
		"traffic from an external generator: FILE's `generator:` block (a sweep spec or "
		"the block alone; docs/generators.md), started at --rate, --frame, --seconds once "
		"the port receives; offered = what it sent, checked for conservation");
}
