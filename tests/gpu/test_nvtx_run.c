/* SPDX-License-Identifier: MIT */
/*
 * A real `rxray run` on the software NIC under an NVTX listener
 * (librxray_nvtx.so through NVTX_INJECTION64_PATH; no GPU needed): the run
 * is one range; in a full-probe build every sampled burst that did work is
 * a range "burst" holding exactly one range per lap it made other than
 * idle, in lap order, named by the lap's stage, on every thread (the
 * software NIC's, rx, app), for both engines and modes, checked burst by
 * burst against the sampled laps of the run result; a burst that only
 * polled empty shows nothing. A counters build opens no burst range at all
 * (its lap path does no NVTX work). With a GPU, each GPU batch is a range
 * and, under the CUPTI injection library, the reorder kernels are
 * recorded, one per batch.
 * Paths come from the build, or from the environment when run from a
 * bundle (tools/device-bundle.sh): RXRAY_BIN, RXRAY_NVTX_LIB,
 * RXRAY_CUPTI_LIB.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rxray/engines.h"
#include "rxray/probe.h"
#ifdef RXRAY_HAVE_GPU_TEST
#include "rxray/gpu.h"
#endif

static const char *path_of(const char *env, const char *built)
{
	const char *v = getenv(env);
	return v && *v ? v : built;
}

struct cap {
	char dir[64];
	char nvtx[96], run[96], cupti[96];
	json_t *ranges; /* borrowed from doc */
	json_t *doc;
	json_t *result;
};

/* rxray run ARGS under the listener (and CUPTI when cupti != NULL). */
static void capture(struct cap *c, const char *args, const char *cupti)
{
	snprintf(c->dir, sizeof(c->dir), "/tmp/rxray-nvtx-XXXXXX");
	cr_assert_not_null(mkdtemp(c->dir));
	snprintf(c->nvtx, sizeof(c->nvtx), "%s/nvtx.json", c->dir);
	snprintf(c->run, sizeof(c->run), "%s/run.json", c->dir);
	snprintf(c->cupti, sizeof(c->cupti), "%s/cupti.json", c->dir);
	char cmd[2048], inj[512] = "";
	if (cupti)
		snprintf(inj, sizeof(inj), "CUDA_INJECTION64_PATH=%s RXRAY_CUPTI_OUT=%s ", cupti,
			 c->cupti);
	snprintf(cmd, sizeof(cmd),
		 "%sNVTX_INJECTION64_PATH=%s RXRAY_NVTX_OUT=%s %s run --device sim --rate 1M "
		 "--seconds 0.3 --sample-shift 2 --allow-oversubscribe %s -o %s > %s/stdout 2>&1",
		 inj, path_of("RXRAY_NVTX_LIB", NVTX_LIB), c->nvtx, path_of("RXRAY_BIN", RXRAY_BIN),
		 args, c->run, c->dir);
	int st = system(cmd);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		char path[128], said[1024] = "";
		snprintf(path, sizeof(path), "%s/stdout", c->dir);
		FILE *f = fopen(path, "r");
		if (f) {
			said[fread(said, 1, sizeof(said) - 1, f)] = 0;
			fclose(f);
		}
		cr_assert_fail("rxray run failed (%d): %s\n%s", st, cmd, said);
	}
	json_error_t je;
	c->doc = json_load_file(c->nvtx, 0, &je);
	cr_assert_not_null(c->doc, "the listener wrote nothing: %s", je.text);
	cr_assert_str_eq(json_string_value(json_object_get(c->doc, "schema")), "rxray.nvtx/1");
	cr_assert_eq(json_integer_value(json_object_get(c->doc, "dropped")), 0);
	c->ranges = json_object_get(c->doc, "ranges");
	cr_assert(json_is_array(c->ranges));
	c->result = json_load_file(c->run, 0, &je);
	cr_assert_not_null(c->result, "no run result: %s", je.text);
}

static void cap_free(struct cap *c)
{
	json_decref(c->doc);
	json_decref(c->result);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", c->dir);
	cr_expect_eq(system(cmd), 0);
}

static const char *rname(json_t *r)
{
	return json_string_value(json_object_get(r, "name"));
}

__attribute__((unused)) static size_t count_named(const struct cap *c, const char *name)
{
	size_t i, n = 0;
	json_t *r;
	json_array_foreach(c->ranges, i, r) n += !strcmp(rname(r), name);
	return n;
}

/* The run itself is one range of domain rxray, at depth 0, closed. */
static void check_run_range(const struct cap *c)
{
	size_t i, n = 0;
	json_t *r;
	json_array_foreach(c->ranges, i, r) {
		if (strcmp(rname(r), "run"))
			continue;
		n++;
		cr_expect_str_eq(json_string_value(json_object_get(r, "domain")), "rxray");
		cr_expect_eq(json_integer_value(json_object_get(r, "depth")), 0);
		cr_expect_gt(json_integer_value(json_object_get(r, "end_ns")),
			     json_integer_value(json_object_get(r, "start_ns")));
	}
	cr_expect_eq(n, 1, "run ranges: %zu", n);
}

/* --------------------------------------------- stage ranges against laps */

/*
 * What a full-probe run must show (rxray/probe.h, rxp_stage_begin): each
 * sampled burst that lapped work is one range "burst" (payload: the burst
 * number) on its thread, holding, in lap order, one range per lap of that
 * burst other than idle, named by the lap's stage, and nothing else; a
 * sampled burst that lapped nothing but idle (an empty poll) opens no
 * range. The run result's sampled laps (rows [start, cycles, stage, seq],
 * idle left out) say which laps each sampled burst made: a ring holding a
 * thread's last sampled laps, so its oldest burst may be cut (left out),
 * and its newest too (left out as well).
 */

/* One burst range of the listener's output and its stage children. */
struct nv_burst {
	json_int_t tid;
	json_int_t seq;
	size_t range;	 /* index in the ranges */
	size_t first, n; /* its children: kids[first .. first + n) */
};

struct nv_view {
	struct nv_burst *b;
	size_t nb;
	size_t *kids;	     /* range indices of the bursts' children, per burst in push order */
	json_int_t tids[64]; /* threads with bursts */
	bool measured[64];   /* ... some inside the run's range (not the warm-up's) */
	size_t ntids;
};

static json_int_t jint(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

static int nv_burst_cmp(const void *x, const void *y)
{
	const struct nv_burst *a = x, *b = y;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static struct nv_burst *nv_find(const struct nv_view *v, json_int_t tid, json_int_t seq)
{
	struct nv_burst key = {.tid = tid, .seq = seq};
	return bsearch(&key, v->b, v->nb, sizeof(key), nv_burst_cmp);
}

/* The bursts and their children; checks what needs no run result: every
 * burst holds at least one range, all of them stages, one after the
 * other on the burst's thread and inside it in time. */
static void nv_view_build(const struct cap *c, struct nv_view *v)
{
	size_t n = json_array_size(c->ranges);
	long *bidx = malloc((n ? n : 1) * sizeof(*bidx)); /* range -> burst, or -1 */
	cr_assert_not_null(bidx);
	memset(v, 0, sizeof(*v));
	v->b = calloc(n ? n : 1, sizeof(*v->b));
	v->kids = calloc(n ? n : 1, sizeof(*v->kids));
	cr_assert(v->b && v->kids);
	json_int_t run_start = 0;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(rname(json_array_get(c->ranges, i)), "run"))
			run_start = jint(json_array_get(c->ranges, i), "start_ns");
	for (size_t i = 0; i < n; i++) {
		json_t *r = json_array_get(c->ranges, i);
		bidx[i] = -1;
		if (strcmp(rname(r), "burst"))
			continue;
		cr_expect(json_is_integer(json_object_get(r, "payload")),
			  "burst range %zu has no burst number", i);
		json_int_t parent = jint(r, "parent");
		/* bursts sit on worker threads, never inside another burst */
		if (parent >= 0)
			cr_expect_str_neq(rname(json_array_get(c->ranges, parent)), "burst");
		bidx[i] = (long)v->nb;
		v->b[v->nb++] = (struct nv_burst){jint(r, "tid"), jint(r, "payload"), i, 0, 0};
		size_t t = 0;
		while (t < v->ntids && v->tids[t] != jint(r, "tid"))
			t++;
		if (t == v->ntids && v->ntids < sizeof(v->tids) / sizeof(v->tids[0]))
			v->tids[v->ntids++] = jint(r, "tid");
		if (t < v->ntids)
			v->measured[t] |= jint(r, "start_ns") >= run_start;
	}
	/* children per burst, in push order (the listener's record order) */
	for (size_t i = 0; i < n; i++) {
		json_int_t parent = jint(json_array_get(c->ranges, i), "parent");
		if (parent >= 0 && bidx[parent] >= 0)
			v->b[bidx[parent]].n++;
	}
	for (size_t k = 0, at = 0; k < v->nb; k++) {
		v->b[k].first = at;
		at += v->b[k].n;
		v->b[k].n = 0;
	}
	for (size_t i = 0; i < n; i++) {
		json_int_t parent = jint(json_array_get(c->ranges, i), "parent");
		if (parent >= 0 && bidx[parent] >= 0) {
			struct nv_burst *b = &v->b[bidx[parent]];
			v->kids[b->first + b->n++] = i;
		}
	}
	size_t empty = 0, strays = 0, disorder = 0;
	for (size_t k = 0; k < v->nb; k++) {
		const struct nv_burst *b = &v->b[k];
		json_t *br = json_array_get(c->ranges, b->range);
		/* an empty poll opens nothing (at light load most sampled polls
		 * are empty: a range each flooded the listener on a fast host) */
		empty += b->n == 0;
		json_int_t prev_end = jint(br, "start_ns");
		for (size_t j = 0; j < b->n; j++) {
			json_t *r = json_array_get(c->ranges, v->kids[b->first + j]);
			strays += rxp_stage_from_name(rname(r)) < 0 || jint(r, "tid") != b->tid;
			/* one stage after the other, inside the burst */
			disorder += jint(r, "start_ns") < prev_end ||
				    jint(r, "end_ns") < jint(r, "start_ns") ||
				    jint(r, "end_ns") > jint(br, "end_ns");
			prev_end = jint(r, "end_ns");
		}
	}
	cr_expect_eq(empty, 0, "%zu of %zu burst ranges hold no stage range (an empty poll's?)",
		     empty, v->nb);
	cr_expect_eq(strays, 0, "%zu ranges in bursts are not stages of the burst's thread",
		     strays);
	cr_expect_eq(disorder, 0, "%zu stage ranges overlap the one before or leave their burst",
		     disorder);
	free(bidx);
	qsort(v->b, v->nb, sizeof(*v->b), nv_burst_cmp);
}

static void nv_view_free(struct nv_view *v)
{
	free(v->b);
	free(v->kids);
}

/* A result thread's sampled bursts: its non-idle sampled laps, grouped by
 * burst number, oldest and newest group left out. */
struct lap_group {
	json_int_t seq;
	size_t first, n; /* st[first .. first + n) */
};

struct lap_thread {
	const char *role;
	int8_t *st;
	size_t nst;
	struct lap_group *g;
	size_t ng;
};

static void lap_thread_build(json_t *t, struct lap_thread *lt)
{
	json_t *data = json_object_get(json_object_get(t, "samples"), "data");
	size_t n = json_array_size(data);
	memset(lt, 0, sizeof(*lt));
	lt->role = json_string_value(json_object_get(t, "role"));
	lt->st = calloc(n ? n : 1, sizeof(*lt->st));
	lt->g = calloc(n ? n : 1, sizeof(*lt->g));
	cr_assert(lt->st && lt->g);
	for (size_t i = 0; i < n; i++) {
		json_t *row = json_array_get(data, i);
		int s = rxp_stage_from_name(json_string_value(json_array_get(row, 2)));
		json_int_t seq = json_integer_value(json_array_get(row, 3));
		if (s < 0 || s == RXP_ST_IDLE)
			continue;
		if (!lt->ng || lt->g[lt->ng - 1].seq != seq)
			lt->g[lt->ng++] = (struct lap_group){seq, lt->nst, 0};
		lt->st[lt->nst++] = (int8_t)s;
		lt->g[lt->ng - 1].n++;
	}
	/* the ring's oldest burst may have lost its first laps */
	if (lt->ng) {
		memmove(lt->g, lt->g + 1, (lt->ng - 1) * sizeof(*lt->g));
		lt->ng--;
	}
	if (lt->ng)
		lt->ng--;
}

static int lap_group_cmp(const void *x, const void *y)
{
	const struct lap_group *a = x, *b = y;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Burst ranges on tid between lt's first and last burst checked whose
 * burst lapped no work there. */
static size_t strays(const struct nv_view *v, json_int_t tid, const struct lap_thread *lt)
{
	size_t n = 0;
	for (size_t k = 0; k < v->nb; k++) {
		const struct nv_burst *b = &v->b[k];
		if (b->tid != tid || b->seq < lt->g[0].seq || b->seq > lt->g[lt->ng - 1].seq)
			continue;
		struct lap_group key = {.seq = b->seq};
		n += !bsearch(&key, lt->g, lt->ng, sizeof(key), lap_group_cmp);
	}
	return n;
}

static bool group_matches(const struct cap *c, const struct nv_view *v, const struct lap_thread *lt,
			  const struct lap_group *g, const struct nv_burst *b)
{
	if (!b || b->n != g->n)
		return false;
	for (size_t j = 0; j < g->n; j++) {
		json_t *r = json_array_get(c->ranges, v->kids[b->first + j]);
		if (rxp_stage_from_name(rname(r)) != lt->st[g->first + j])
			return false;
	}
	return true;
}

/* Stages that a burst's laps and its ranges have in common (as many
 * times as both have them), plus one when they agree in full. */
static long group_common(const struct cap *c, const struct nv_view *v, const struct lap_thread *lt,
			 const struct lap_group *g, const struct nv_burst *b)
{
	if (!b)
		return 0;
	unsigned have[RXP_ST_COUNT + 1] = {0};
	long n = group_matches(c, v, lt, g, b);
	for (size_t j = 0; j < b->n; j++) {
		int s =
		    rxp_stage_from_name(rname(json_array_get(c->ranges, v->kids[b->first + j])));
		have[s < 0 ? RXP_ST_COUNT : s]++;
	}
	for (size_t j = 0; j < g->n; j++)
		if (have[lt->st[g->first + j]]) {
			have[lt->st[g->first + j]]--;
			n++;
		}
	return n;
}

/* "a b c" of at most 24 stages, for a failure message. */
static void stages_say(char *out, size_t len, const int8_t *st, size_t n)
{
	size_t at = 0;
	out[0] = 0;
	for (size_t j = 0; j < n && j < 24 && at < len; j++)
		at += (size_t)snprintf(out + at, len - at, "%s%s", j ? " " : "",
				       rxp_stage_name((enum rxp_stage)st[j]));
}

static void ranges_say(char *out, size_t len, const struct cap *c, const struct nv_view *v,
		       const struct nv_burst *b)
{
	int8_t st[24];
	size_t n = 0;
	for (; b && n < b->n && n < 24; n++)
		st[n] = (int8_t)rxp_stage_from_name(
		    rname(json_array_get(c->ranges, v->kids[b->first + n])));
	stages_say(out, len, st, n);
}

/* A stage a role must lap in its sampled bursts for the check to prove
 * anything about it. */
struct need {
	const char *role;
	enum rxp_stage stage;
};

/*
 * Every sampled burst of every thread that the result holds whole: its
 * burst range exists on one thread (the same for all of that thread's
 * bursts) and holds exactly its laps' stages in lap order; and no burst
 * range of that thread between them lacks a burst with work. need[]: the
 * (role, stage) pairs that must have been lapped at all.
 */
static void check_stage_ranges(const struct cap *c, const char *what, const struct need *need,
			       size_t nneed)
{
	struct nv_view v;
	nv_view_build(c, &v);
	cr_expect_gt(v.nb, 10, "%s: burst ranges: %zu", what, v.nb);
	json_t *threads = json_object_get(c->result, "threads");
	size_t nt = json_array_size(threads);
	bool tid_used[64] = {false};
	uint32_t lapped[8] = {0}; /* per result thread: stages in checked bursts */
	uint64_t laps[RXP_ST_COUNT] = {0}, ranges[RXP_ST_COUNT + 1] = {0}; /* + not a stage */
	cr_assert_leq(nt, 8);
	/*
	 * Which thread's ranges are whose: the assignment of result threads
	 * to tids that agrees best in total (stages in common, then fewer
	 * bursts the thread did not make). Thread by thread, the first
	 * thread could take another's tid: two NIC writers lap the same
	 * stages, and a writer's whole run of burst numbers covers the other
	 * one's window, so both tids scored alike for it and the other
	 * writer was left with none of its bursts (CI, once). Only tids with
	 * bursts in the run's range are candidates: each phase starts new
	 * NIC threads with reset probes, so a warm-up writer's bursts carry
	 * the same numbers and stages as a measured one's, and tied with it.
	 */
	struct lap_thread lts[8];
	long score[8][64];
	size_t stray[8][64], pick[8];
	for (size_t i = 0; i < nt; i++) {
		lap_thread_build(json_array_get(threads, i), &lts[i]);
		pick[i] = SIZE_MAX;
		for (size_t t = 0; lts[i].ng && t < v.ntids; t++) {
			score[i][t] = 0;
			stray[i][t] = strays(&v, v.tids[t], &lts[i]);
			for (size_t k = 0; k < lts[i].ng; k++)
				score[i][t] +=
				    group_common(c, &v, &lts[i], &lts[i].g[k],
						 nv_find(&v, v.tids[t], lts[i].g[k].seq));
		}
	}
	/* better(i, a, b): tid a (one of the run's) agrees with thread i
	 * better than tid b */
#define BETTER(i, a, b)                                                                            \
	(v.measured[a] && ((b) == SIZE_MAX || score[i][a] > score[i][b] ||                         \
			   (score[i][a] == score[i][b] && stray[i][a] < stray[i][b])))
	for (size_t i = 0; i < nt; i++) /* greedy start */
		for (size_t t = 0; lts[i].ng && t < v.ntids; t++)
			if (!tid_used[t] && BETTER(i, t, pick[i])) {
				if (pick[i] != SIZE_MAX)
					tid_used[pick[i]] = false;
				pick[i] = t;
				tid_used[t] = true;
			}
	/* then moves that raise the total: to a free tid, or a swap */
	for (bool moved = true; moved;) {
		moved = false;
		for (size_t i = 0; i < nt; i++) {
			if (!lts[i].ng)
				continue;
			for (size_t t = 0; t < v.ntids; t++)
				if (!tid_used[t] && BETTER(i, t, pick[i])) {
					if (pick[i] != SIZE_MAX)
						tid_used[pick[i]] = false;
					pick[i] = t;
					tid_used[t] = true;
					moved = true;
				}
			for (size_t j = i + 1; j < nt; j++) {
				if (!lts[j].ng || pick[i] == SIZE_MAX || pick[j] == SIZE_MAX)
					continue;
				size_t a = pick[i], b = pick[j];
				long now = score[i][a] + score[j][b], swapped = score[i][b] + score[j][a];
				size_t sn = stray[i][a] + stray[j][b], ss = stray[i][b] + stray[j][a];
				if (swapped > now || (swapped == now && ss < sn)) {
					pick[i] = b;
					pick[j] = a;
					moved = true;
				}
			}
		}
	}
#undef BETTER
	for (size_t i = 0; i < nt; i++) {
		struct lap_thread lt = lts[i];
		if (!lt.ng) {
			free(lt.st);
			free(lt.g);
			continue;
		}
		size_t best = pick[i];
		size_t bad = 0;
		for (size_t k = 0; k < lt.ng; k++) {
			const struct lap_group *g = &lt.g[k];
			struct nv_burst *b =
			    best == SIZE_MAX ? NULL : nv_find(&v, v.tids[best], g->seq);
			for (size_t j = 0; j < g->n; j++) {
				lapped[i] |= 1u << lt.st[g->first + j];
				laps[lt.st[g->first + j]]++;
			}
			for (size_t j = 0; b && j < b->n; j++) {
				int s = rxp_stage_from_name(
				    rname(json_array_get(c->ranges, v.kids[b->first + j])));
				ranges[s < 0 ? RXP_ST_COUNT : s]++;
			}
			if (group_matches(c, &v, &lt, g, b))
				continue;
			if (bad++ < 3) {
				char said[512], shown[512];
				stages_say(said, sizeof(said), lt.st + g->first, g->n);
				ranges_say(shown, sizeof(shown), c, &v, b);
				cr_expect_fail("%s: %s thread, sampled burst %lld lapped [%s]; its "
					       "ranges: %s[%s]",
					       what, lt.role, (long long)g->seq, said,
					       b ? "" : "no burst range ", shown);
			}
		}
		cr_expect_eq(bad, 0,
			     "%s: %s thread: %zu of %zu sampled bursts without their ranges", what,
			     lt.role, bad, lt.ng);
		if (best != SIZE_MAX) {
			/* between the first and last burst checked, a burst range
			 * for a burst that lapped no work: ranges for nothing */
			size_t n = strays(&v, v.tids[best], &lt);
			cr_expect_eq(
			    n, 0, "%s: %s thread: %zu burst ranges for bursts that lapped no work",
			    what, lt.role, n);
		}
		free(lt.st);
		free(lt.g);
	}
	/* every thread that shows bursts in the run (the warm-up's threads
	 * come before it) is a thread of the result */
	for (size_t t = 0; t < v.ntids; t++)
		cr_expect(tid_used[t] || !v.measured[t],
			  "%s: burst ranges on thread %lld match no thread's laps", what,
			  (long long)v.tids[t]);
	for (size_t k = 0; k < nneed; k++) {
		bool found = false;
		for (size_t i = 0; i < nt; i++) {
			const char *role =
			    json_string_value(json_object_get(json_array_get(threads, i), "role"));
			found |= !strcmp(role, need[k].role) && (lapped[i] & (1u << need[k].stage));
		}
		cr_expect(found, "%s: no %s thread lapped %s in a sampled burst checked", what,
			  need[k].role, rxp_stage_name(need[k].stage));
	}
	char line[1024];
	size_t at =
	    (size_t)snprintf(line, sizeof(line), "nvtx %s: ranges/laps in checked bursts:", what);
	for (int s = 0; s < RXP_ST_COUNT && at < sizeof(line); s++)
		if (laps[s] || ranges[s])
			at += (size_t)snprintf(line + at, sizeof(line) - at, " %s %llu/%llu",
					       rxp_stage_name((enum rxp_stage)s),
					       (unsigned long long)ranges[s],
					       (unsigned long long)laps[s]);
	cr_log_info("%s (%zu burst ranges)", line, v.nb);
	nv_view_free(&v);
}

#define NEED_NIC                                                                                   \
	{"nic", RXP_ST_HDR_WRITE}, {"nic", RXP_ST_PAYLOAD_WRITE},                                  \
	{                                                                                          \
		"nic", RXP_ST_CQE_WRITE                                                            \
	}
#define NEED_APP                                                                                   \
	{"app", RXP_ST_HANDOFF}, {"app", RXP_ST_HDR_READ}, {"app", RXP_ST_APP},                    \
	{                                                                                          \
		"app", RXP_ST_FREE                                                                 \
	}
#define NEED_INLINE                                                                                \
	{"rx", RXP_ST_HDR_READ}, {"rx", RXP_ST_APP},                                               \
	{                                                                                          \
		"rx", RXP_ST_FREE                                                                  \
	}

/* One engine and mode under the listener, every stage range checked. */
__attribute__((unused)) static void stage_case(const char *engine, const char *args,
					       const struct need *need, size_t nneed)
{
	if (!rxe_find(engine))
		cr_skip_test("needs the %s engine in this build", engine);
	char full[256], what[256];
	snprintf(full, sizeof(full), "--engine %s %s", engine, args);
	snprintf(what, sizeof(what), "%s %s", engine, args);
	struct cap c;
	capture(&c, full, NULL);
	check_run_range(&c);
	check_stage_ranges(&c, what, need, nneed);
	cap_free(&c);
}

#if RXRAY_PROBE_MODE != RXP_MODE_FULL || !defined(RXRAY_HAVE_NVTX)
#define NEEDS_FULL()                                                                               \
	cr_skip_test("needs a full-probe build with NVTX headers (-DRXRAY_PROBES=full)")
#define STAGE_CASE(engine, args, ...) NEEDS_FULL()
#else
#define STAGE_CASE(engine, args, ...)                                                              \
	do {                                                                                       \
		const struct need need_[] = {__VA_ARGS__};                                         \
		stage_case(engine, args, need_, sizeof(need_) / sizeof(need_[0]));                 \
	} while (0)
#endif

/*
 * Full mode: each engine and mode, one of the two with an app thread, the
 * other with the app inline on the rx thread and two DMA writers (the
 * software NIC's writer path). The verbs rx thread reposts once per batch
 * (sge_setup, doorbell), not in every burst: checked where sampled, not
 * required; likewise the vector discipline's bulk replenish.
 */
Test(nvtx_run, stage_ranges_verbs_single)
{
	STAGE_CASE("verbs", "--mode single --app inline --dma-writers 2", NEED_NIC, NEED_INLINE,
		   {"rx", RXP_ST_CQE_POLL});
}

Test(nvtx_run, stage_ranges_verbs_hds)
{
	STAGE_CASE("verbs", "--mode hds --app thread", NEED_NIC, NEED_APP, {"rx", RXP_ST_CQE_POLL},
		   {"rx", RXP_ST_HANDOFF});
}

/* DPDK single segment: the vector discipline (cqe_poll, doorbell per
 * poll; bulk replenish at a threshold) */
Test(nvtx_run, stage_ranges_dpdk_single)
{
	STAGE_CASE("dpdk", "--mode single --app inline --dma-writers 2", NEED_NIC, NEED_INLINE,
		   {"rx", RXP_ST_CQE_POLL}, {"rx", RXP_ST_DOORBELL}, {"rx", RXP_ST_HANDOFF});
}

/* DPDK buffer split: the scalar discipline, every stage in every burst */
Test(nvtx_run, stage_ranges_dpdk_hds)
{
	STAGE_CASE("dpdk", "--mode hds --app thread", NEED_NIC, NEED_APP, {"rx", RXP_ST_CQE_POLL},
		   {"rx", RXP_ST_BUF_ALLOC}, {"rx", RXP_ST_SGE_SETUP}, {"rx", RXP_ST_CHAIN},
		   {"rx", RXP_ST_DOORBELL}, {"rx", RXP_ST_HANDOFF});
}

/* Counters mode keeps its lap path free of NVTX: the run's range only. */
Test(nvtx_run, counters_build_has_run_range_only)
{
#if RXRAY_PROBE_MODE != RXP_MODE_COUNTERS || !defined(RXRAY_HAVE_NVTX)
	cr_skip_test("needs a counters-probe build with NVTX headers (the default)");
#else
	struct cap c;
	capture(&c, "--engine verbs", NULL);
	check_run_range(&c);
	cr_expect_eq(count_named(&c, "burst"), 0);
	for (int s = 0; s < RXP_ST_COUNT; s++)
		cr_expect_eq(count_named(&c, rxp_stage_name((enum rxp_stage)s)), 0, "%s",
			     rxp_stage_name((enum rxp_stage)s));
	cap_free(&c);
#endif
}

/* With a GPU: a range per GPU batch; under CUPTI, one reorder kernel each. */
Test(nvtx_run, gpu_batches_and_kernels)
{
#ifndef RXRAY_HAVE_GPU_TEST
	cr_skip_test("needs a build with the CUDA toolkit (rxray_gpu)");
#else
	char why[160];
	if (!rxg_available(why, sizeof(why)))
		cr_skip_test("needs a CUDA GPU: %s", why);
	const char *cupti = NULL;
#ifdef CUPTI_LIB
	cupti = path_of("RXRAY_CUPTI_LIB", CUPTI_LIB);
#endif
	struct cap c;
	capture(&c, "--engine verbs --mode hds --payload-mem gpu --payload full --gpu-work reorder",
		cupti);
	check_run_range(&c);
	size_t i, batches = 0;
	json_t *r;
	json_array_foreach(c.ranges, i, r) {
		if (strcmp(rname(r), "gpu_batch"))
			continue;
		batches += json_integer_value(json_object_get(r, "end_ns")) > 0;
	}
	cr_expect_gt(batches, 0, "no gpu_batch range");
	if (!cupti) {
		cap_free(&c);
		cr_skip_test("CUPTI part: librxray_cupti.so not built");
	}
	json_error_t je;
	json_t *doc = json_load_file(c.cupti, 0, &je);
	cr_assert_not_null(doc, "CUPTI wrote no trace: %s", je.text);
	size_t kernels = 0;
	json_array_foreach(json_object_get(doc, "traceEvents"), i, r) {
		const char *cat = json_string_value(json_object_get(r, "cat"));
		/* the consumer's kernels (rxg_k_param<N> in kernel mode), not the
		 * software NIC's copies into GPU memory (rxg_scatter) */
		if (cat && !strcmp(cat, "kernel") && strstr(rname(r), "rxg_k_param"))
			kernels++;
	}
	cr_expect_eq(kernels, batches, "consumer kernels %zu, gpu_batch ranges %zu", kernels,
		     batches);
	json_decref(doc);
	cap_free(&c);
#endif
}
