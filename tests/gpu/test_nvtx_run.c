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

/* The load of the sampled-burst checks: one burst in four sampled. */
#define LOAD_SAMPLED "--rate 1M --seconds 0.3 --sample-shift 2"

/* rxray run LOAD ARGS under the listener (and CUPTI when cupti != NULL). */
static void capture_load(struct cap *c, const char *load, const char *args, const char *cupti)
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
		 "%sNVTX_INJECTION64_PATH=%s RXRAY_NVTX_OUT=%s %s run --device sim %s "
		 "--allow-oversubscribe %s -o %s > %s/stdout 2>&1",
		 inj, path_of("RXRAY_NVTX_LIB", NVTX_LIB), c->nvtx, path_of("RXRAY_BIN", RXRAY_BIN),
		 load, args, c->run, c->dir);
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

static void capture(struct cap *c, const char *args, const char *cupti)
{
	capture_load(c, LOAD_SAMPLED, args, cupti);
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

/* ---------------------------------------------------- every lap, a range */

/*
 * Every lap, not only the sampled ones. With every burst sampled
 * (--sample-shift 0) and no warm-up (one phase, whose threads reset their
 * probes as they start: the result's laps are all the laps the listener
 * saw), each lap other than idle is one range named by its stage, on its
 * own thread. So, per thread and per stage, the stage ranges count the
 * run result's laps (threads[].stages[].count) exactly, wherever a lap
 * sits: inside a run's burst, in a drain after it, in a flush at the end.
 *
 * Excepted: idle laps, which have no range by design, and with them empty
 * polls, which every engine laps as idle with 0 packets (dpdk's
 * sim_scalar.c and sim_vector.c, verbs' dp_rx_loop; the software NIC's
 * claim that found no WQE), so they are in no count here. A poll after a
 * burst's first that comes back empty is a cqe_poll lap, announced, with
 * its range. The GPU thread (role "gpu") has no CPU laps: its gpu_kernel
 * laps are the batches retired, each a range gpu_kernel started at submit
 * and ended at retire on the consumer's thread (kind "start"); counted
 * over all GPU threads together (one queue here: the same thing).
 *
 * Which check catches what:
 *  - dpdk's drain ended the burst before rx_collect, and handed the last
 *    partial batch off outside any burst (engines/dpdk/worker.c): on the
 *    rx thread, more handoff laps than ranges (the flush's, each drain
 *    burst's collection), and with the app inline the flush's hdr_read,
 *    app and free laps without theirs ("94 laps, 93 ranges"). Certain in
 *    every_lap_dpdk_one_batch, whose packets are all one partial batch;
 *    in the other dpdk cases whenever the drain finds packets.
 *  - simnic's wr_dma_kick_lap lapped payload_dma between bursts: on the
 *    nic thread, more payload_dma laps than ranges (GPU cases; with
 *    launched copies, pieces stay staged until that kick sends them).
 *  - the GPU batch's range named gpu_batch: a range named by no stage (the
 *    names check), and gpu_kernel laps with no gpu_kernel range.
 */
#define LOAD_EVERY "--rate 200k --seconds 0.2 --sample-shift 0 --warmup off"
#define EL_MAX_THREADS 64
#define EL_MAX_TIDS 64
#define EL_SEARCH_MAX 6 /* threads left to an exhaustive search */

struct el_match {
	size_t nt, ntid;
	const char *role[EL_MAX_THREADS];
	uint64_t laps[EL_MAX_THREADS][RXP_ST_COUNT];	/* CPU threads' laps, idle 0 */
	json_int_t tid[EL_MAX_TIDS];			/* threads with stage ranges */
	uint64_t ranges[EL_MAX_TIDS][RXP_ST_COUNT];	/* their pushed stage ranges */
	int pick[EL_MAX_THREADS], best[EL_MAX_THREADS]; /* thread -> tid index or -1 */
	bool used[EL_MAX_TIDS];
	size_t left[EL_MAX_THREADS], nleft; /* threads the search assigns */
	uint64_t best_cost;
};

/* Sum over stages of |a - b| (b NULL: of a). */
static uint64_t el_dist(const uint64_t *a, const uint64_t *b)
{
	uint64_t d = 0;
	for (int s = 0; s < RXP_ST_COUNT; s++) {
		uint64_t y = b ? b[s] : 0;
		d += a[s] > y ? a[s] - y : y - a[s];
	}
	return d;
}

/* The assignment of the threads left to the tids left (one each, or
 * none) whose counts disagree least, tids left over counted whole. */
static void el_search(struct el_match *m, size_t k, uint64_t cost)
{
	if (cost >= m->best_cost)
		return;
	if (k == m->nleft) {
		for (size_t t = 0; t < m->ntid; t++)
			if (!m->used[t])
				cost += el_dist(m->ranges[t], NULL);
		if (cost < m->best_cost) {
			m->best_cost = cost;
			memcpy(m->best, m->pick, sizeof(m->best));
		}
		return;
	}
	size_t i = m->left[k];
	m->pick[i] = -1;
	el_search(m, k + 1, cost + el_dist(m->laps[i], NULL));
	for (size_t t = 0; t < m->ntid; t++) {
		if (m->used[t])
			continue;
		m->used[t] = true;
		m->pick[i] = (int)t;
		el_search(m, k + 1, cost + el_dist(m->laps[i], m->ranges[t]));
		m->used[t] = false;
	}
}

/*
 * Which tid is which thread: threads with no laps have none, a thread
 * whose counts some tid's equal takes it (in L1, an exact pair is in some
 * best assignment), and the few left are searched through (many left:
 * each takes its nearest). A code under test that is right has an exact
 * assignment, found here, so whatever differs afterwards is a lap without
 * its range or a range without its lap.
 */
static void el_assign(struct el_match *m)
{
	m->nleft = 0;
	for (size_t i = 0; i < m->nt; i++) {
		m->pick[i] = -1;
		if (!el_dist(m->laps[i], NULL))
			continue;
		for (size_t t = 0; t < m->ntid && m->pick[i] < 0; t++)
			if (!m->used[t] && !el_dist(m->laps[i], m->ranges[t])) {
				m->used[t] = true;
				m->pick[i] = (int)t;
			}
		if (m->pick[i] < 0)
			m->left[m->nleft++] = i;
	}
	memcpy(m->best, m->pick, sizeof(m->best));
	if (m->nleft <= EL_SEARCH_MAX) {
		m->best_cost = UINT64_MAX;
		el_search(m, 0, 0);
		return;
	}
	for (size_t k = 0; k < m->nleft; k++) {
		size_t i = m->left[k];
		uint64_t d = el_dist(m->laps[i], NULL);
		for (size_t t = 0; t < m->ntid; t++)
			if (!m->used[t] && el_dist(m->laps[i], m->ranges[t]) < d) {
				d = el_dist(m->laps[i], m->ranges[t]);
				m->best[i] = (int)t;
			}
		if (m->best[i] >= 0)
			m->used[m->best[i]] = true;
	}
}

/* need[k].role NULL: any thread. */
static void check_every_lap(const struct cap *c, const char *what, const struct need *need,
			    size_t nneed)
{
	struct el_match m;
	memset(&m, 0, sizeof(m));
	uint64_t gpu_laps[RXP_ST_COUNT] = {0}, started[RXP_ST_COUNT] = {0};
	size_t i, unnamed = 0;
	const char *unnamed_first = NULL;
	json_t *r;
	json_array_foreach(c->ranges, i, r) {
		const char *name = rname(r);
		if (strcmp(json_string_value(json_object_get(r, "domain")), "rxray"))
			continue;
		int s = rxp_stage_from_name(name);
		if (s < 0) {
			/* range names are stage names (or the run, a burst) */
			if (strcmp(name, "run") && strcmp(name, "burst") && !unnamed++)
				unnamed_first = name;
			continue;
		}
		if (strcmp(json_string_value(json_object_get(r, "kind")), "push")) {
			started[s] += jint(r, "end_ns") > 0; /* a GPU batch, retired */
			continue;
		}
		size_t t = 0;
		while (t < m.ntid && m.tid[t] != jint(r, "tid"))
			t++;
		if (t == m.ntid) {
			cr_assert_lt(m.ntid, EL_MAX_TIDS, "%s: too many threads with ranges", what);
			m.tid[m.ntid++] = jint(r, "tid");
		}
		m.ranges[t][s]++;
	}
	cr_expect_eq(unnamed, 0, "%s: %zu ranges named by no stage (the first: %s)", what, unnamed,
		     unnamed_first ? unnamed_first : "");

	json_t *threads = json_object_get(c->result, "threads");
	uint64_t any_laps[RXP_ST_COUNT] = {0};
	bool needed[16] = {false};
	cr_assert_leq(nneed, 16);
	json_array_foreach(threads, i, r) {
		const char *role = json_string_value(json_object_get(r, "role"));
		json_t *stages = json_object_get(r, "stages");
		bool gpu = !strcmp(role, "gpu");
		uint64_t *laps = gpu_laps;
		if (!gpu) {
			cr_assert_lt(m.nt, EL_MAX_THREADS, "%s: too many threads", what);
			m.role[m.nt] = role;
			laps = m.laps[m.nt++];
		}
		const char *k;
		json_t *st;
		json_object_foreach(stages, k, st) {
			int s = rxp_stage_from_name(k);
			cr_assert_geq(s, 0, "%s: unknown stage %s in the result", what, k);
			if (s == RXP_ST_IDLE) /* idle laps (empty polls among them): no range */
				continue;
			uint64_t n = (uint64_t)jint(st, "count");
			laps[s] += n;
			any_laps[s] += n;
			for (size_t q = 0; q < nneed; q++)
				needed[q] |= n && (int)need[q].stage == s &&
					     (!need[q].role || !strcmp(need[q].role, role));
		}
	}
	for (size_t q = 0; q < nneed; q++)
		cr_expect(needed[q], "%s: no %s thread lapped %s: the case proves nothing of it",
			  what, need[q].role ? need[q].role : "", rxp_stage_name(need[q].stage));

	el_assign(&m);
	uint64_t nr = 0, nl = 0;
	for (size_t t = 0; t < m.nt; t++) {
		const uint64_t *got = m.best[t] >= 0 ? m.ranges[m.best[t]] : NULL;
		json_int_t tid = m.best[t] >= 0 ? m.tid[m.best[t]] : -1;
		for (int s = 0; s < RXP_ST_COUNT; s++) {
			uint64_t g = got ? got[s] : 0;
			nr += g;
			nl += m.laps[t][s];
			cr_expect_eq(g, m.laps[t][s],
				     "%s: %s thread (tid %lld): %s: %llu ranges for %llu laps",
				     what, m.role[t], (long long)tid,
				     rxp_stage_name((enum rxp_stage)s), (unsigned long long)g,
				     (unsigned long long)m.laps[t][s]);
		}
	}
	for (size_t t = 0; t < m.ntid; t++) {
		bool taken = false;
		for (size_t k = 0; k < m.nt; k++)
			taken |= m.best[k] == (int)t;
		cr_expect(taken, "%s: %llu stage ranges on tid %lld, a thread with no laps", what,
			  (unsigned long long)el_dist(m.ranges[t], NULL), (long long)m.tid[t]);
	}
	for (int s = 0; s < RXP_ST_COUNT; s++) {
		nr += started[s];
		nl += gpu_laps[s];
		cr_expect_eq(started[s], gpu_laps[s], "%s: gpu thread: %s: %llu ranges for %llu laps",
			     what, rxp_stage_name((enum rxp_stage)s),
			     (unsigned long long)started[s], (unsigned long long)gpu_laps[s]);
	}
	cr_log_info("nvtx %s: every lap: %llu ranges, %llu laps", what, (unsigned long long)nr,
		    (unsigned long long)nl);
}

/* One engine and mode under the listener, every burst sampled. */
__attribute__((unused)) static void every_case(const char *engine, const char *args,
					       const struct need *need, size_t nneed)
{
	if (!rxe_find(engine))
		cr_skip_test("needs the %s engine in this build", engine);
	char full[256], what[256];
	snprintf(full, sizeof(full), "--engine %s %s", engine, args);
	snprintf(what, sizeof(what), "%s %s (every lap)", engine, args);
	struct cap c;
	capture_load(&c, LOAD_EVERY, full, NULL);
	check_run_range(&c);
	check_every_lap(&c, what, need, nneed);
	cap_free(&c);
}

#if RXRAY_PROBE_MODE != RXP_MODE_FULL || !defined(RXRAY_HAVE_NVTX)
#define EVERY_CASE(engine, args, ...) NEEDS_FULL()
#else
#define EVERY_CASE(engine, args, ...)                                                              \
	do {                                                                                       \
		const struct need need_[] = {__VA_ARGS__};                                         \
		every_case(engine, args, need_, sizeof(need_) / sizeof(need_[0]));                 \
	} while (0)
#endif

Test(nvtx_run, every_lap_verbs_single)
{
	EVERY_CASE("verbs", "--mode single --app inline --dma-writers 2", NEED_NIC, NEED_INLINE,
		   {"rx", RXP_ST_CQE_POLL});
}

Test(nvtx_run, every_lap_verbs_hds)
{
	EVERY_CASE("verbs", "--mode hds --app thread", NEED_NIC, NEED_APP, {"rx", RXP_ST_CQE_POLL},
		   {"rx", RXP_ST_HANDOFF});
}

Test(nvtx_run, every_lap_dpdk_single)
{
	EVERY_CASE("dpdk", "--mode single --app inline --dma-writers 2", NEED_NIC, NEED_INLINE,
		   {"rx", RXP_ST_CQE_POLL}, {"rx", RXP_ST_HANDOFF});
}

Test(nvtx_run, every_lap_dpdk_hds)
{
	EVERY_CASE("dpdk", "--mode hds --app thread", NEED_NIC, NEED_APP, {"rx", RXP_ST_CQE_POLL},
		   {"rx", RXP_ST_HANDOFF});
}

/* DPDK with a batch larger than the run (4,000 packets at 20 kpps for
 * 0.2 s): no batch fills, so every packet is in the one partial batch
 * the drain hands off at the end, with the app inline: its handoff,
 * hdr_read, app and free laps are the drain's, whatever the timing. */
Test(nvtx_run, every_lap_dpdk_one_batch)
{
	EVERY_CASE("dpdk", "--mode hds --app inline --rate 20k --batch 4096", NEED_NIC, NEED_INLINE,
		   {"rx", RXP_ST_HANDOFF});
}

/* With a GPU: the NIC's copies into GPU memory (payload_dma) and the
 * consumer's kernels (the gpu thread's gpu_kernel). Launched copies
 * (sim:gpu_dma=launch) stage pieces until the writer kicks them between
 * bursts (wr_dma_kick_lap); resident copies go with each run. */
static void every_gpu_case(const char *engine, const char *args)
{
#if !defined(RXRAY_HAVE_GPU_TEST)
	(void)engine;
	(void)args;
	cr_skip_test("needs a build with the CUDA toolkit (rxray_gpu)");
#else
	char why[160];
	if (!rxg_available(why, sizeof(why)))
		cr_skip_test("needs a CUDA GPU: %s", why);
	EVERY_CASE(engine, args, {"nic", RXP_ST_PAYLOAD_DMA}, {"gpu", RXP_ST_GPU_KERNEL},
		   {NULL, RXP_ST_GPU_LAUNCH});
#endif
}

Test(nvtx_run, every_lap_gpu_verbs_launched_copies, .timeout = 120)
{
	every_gpu_case("verbs", "--device sim:gpu_dma=launch --mode hds --payload-mem gpu "
				"--payload full --gpu-work reorder");
}

Test(nvtx_run, every_lap_gpu_dpdk, .timeout = 120)
{
	every_gpu_case("dpdk", "--mode hds --payload-mem gpu --payload full --gpu-work reorder");
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
Test(nvtx_run, gpu_batches_and_kernels, .timeout = 120)
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
		if (strcmp(rname(r), "gpu_kernel"))
			continue;
		batches += json_integer_value(json_object_get(r, "end_ns")) > 0;
	}
	cr_expect_gt(batches, 0, "no gpu_kernel range");
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
	cr_expect_eq(kernels, batches, "consumer kernels %zu, gpu_kernel ranges %zu", kernels,
		     batches);
	json_decref(doc);
	cap_free(&c);
#endif
}
