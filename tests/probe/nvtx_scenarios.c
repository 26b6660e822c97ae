/*
 * Scripted laps and stage announcements in full mode, for test_nvtx_hints
 * (run under the NVTX listener, which records the ranges they open). Each
 * scenario runs inside a range of its own name, on a fresh probe (a fresh
 * chain), every burst sampled unless it says otherwise. No timing: only
 * the order of calls matters.
 */
#undef RXRAY_PROBE_MODE
#define RXRAY_PROBE_MODE 2
#include "rxray/probe.h"

enum { A = RXP_ST_BUF_ALLOC, B = RXP_ST_SGE_SETUP, C = RXP_ST_CHAIN, I = RXP_ST_IDLE };

/* One burst: laps[] in order, each announced first as ann[k] says
 * (ann NULL or ann[k] < 0: not announced). */
static void burst(struct rxp_probe *p, const int *ann, const int *laps, int n)
{
	rxp_burst_begin(p);
	for (int k = 0; k < n; k++) {
		if (ann && ann[k] >= 0)
			rxp_stage_begin(p, (enum rxp_stage)ann[k]);
		rxp_lap(p, (enum rxp_stage)laps[k], 1);
	}
	rxp_burst_end(p, 1);
}

static struct rxp_probe *fresh(unsigned shift)
{
	struct rxp_probe *p = NULL;
	if (rxp_probe_open("rx", -1, shift, 64, &p, NULL, 0))
		return NULL;
	rxp_lap_start(p);
	return p;
}

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

int main(void)
{
	struct rxp_probe *p;
	rxp_nvtx_init();

	/* empty polls: a sampled burst that laps only idle shows nothing */
	rxp_nvtx_range_push("empty");
	p = fresh(0);
	for (int k = 0; k < 3; k++) {
		const int laps[] = {I};
		burst(p, NULL, laps, N(laps));
	}
	rxp_probe_free(p); /* the next probe may take its address */
	rxp_nvtx_range_pop();

	/* announced: each range is its lap; an announced idle opens nothing;
	 * work after an empty poll (a refill) opens the burst then */
	rxp_nvtx_range_push("announced");
	p = fresh(0);
	{
		const int ann[] = {RXP_ST_CQE_POLL, RXP_ST_HANDOFF, I};
		const int laps[] = {RXP_ST_CQE_POLL, RXP_ST_HANDOFF, I};
		burst(p, ann, laps, N(laps));
		const int ann2[] = {-1, B, RXP_ST_DOORBELL};
		const int laps2[] = {I, B, RXP_ST_DOORBELL};
		burst(p, ann2, laps2, N(laps2));
		/* announced twice before its lap: one range */
		rxp_burst_begin(p);
		rxp_lap(p, RXP_ST_IDLE, 0);
		rxp_stage_begin(p, RXP_ST_BUF_ALLOC);
		rxp_stage_begin(p, RXP_ST_BUF_ALLOC);
		rxp_lap(p, RXP_ST_BUF_ALLOC, 1);
		rxp_burst_end(p, 1);
	}
	rxp_probe_free(p); /* the next probe may take its address */
	rxp_nvtx_range_pop();

	/* unsampled bursts (1 in 2 sampled): the second shows nothing */
	rxp_nvtx_range_push("unsampled");
	p = fresh(1);
	for (int k = 0; k < 2; k++) {
		const int ann[] = {A, B};
		const int laps[] = {A, B};
		burst(p, ann, laps, N(laps));
	}
	rxp_probe_free(p); /* the next probe may take its address */
	rxp_nvtx_range_pop();

	/* the chain where nothing is announced: the first burst teaches it,
	 * the next ones show what followed A and B (A itself, the first lap,
	 * cannot be guessed: nothing precedes it but the burst's start) */
	rxp_nvtx_range_push("guessed");
	p = fresh(0);
	for (int k = 0; k < 2; k++) {
		const int laps[] = {A, B, C};
		burst(p, NULL, laps, N(laps));
	}
	rxp_probe_free(p); /* the next probe may take its address */
	rxp_nvtx_range_pop();

	/* a transition that varies is guessed wrong once, then no more */
	rxp_nvtx_range_push("varies");
	p = fresh(0);
	{
		const int l1[] = {A, B}, l2[] = {A, C}, l3[] = {A, B};
		burst(p, NULL, l1, N(l1));
		burst(p, NULL, l2, N(l2));
		burst(p, NULL, l3, N(l3));
	}
	rxp_probe_free(p); /* the next probe may take its address */
	rxp_nvtx_range_pop();

	/* a reset probe (warm-up over) learns a new chain */
	rxp_nvtx_range_push("reset");
	p = fresh(0);
	{
		const int l1[] = {A, B}, l2[] = {A, C};
		burst(p, NULL, l1, N(l1));
		burst(p, NULL, l1, N(l1)); /* guessed: B */
		rxp_probe_reset(p);
		rxp_lap_start(p);
		burst(p, NULL, l2, N(l2)); /* nothing learnt yet: no guess */
	}
	rxp_probe_free(p); /* the next probe may take its address */
	rxp_nvtx_range_pop();

	/* never a guess after idle: what follows an empty poll is unknown */
	rxp_nvtx_range_push("after_idle");
	p = fresh(0);
	for (int k = 0; k < 3; k++) {
		const int laps[] = {I, A};
		burst(p, NULL, laps, N(laps));
	}
	rxp_probe_free(p); /* the next probe may take its address */
	rxp_nvtx_range_pop();

	/* an announcement after a stage ends the chain's guesses there: a
	 * guess made before it was seen is closed where it comes */
	rxp_nvtx_range_push("announce_beats_chain");
	p = fresh(0);
	{
		const int l1[] = {A, B};
		burst(p, NULL, l1, N(l1));
		const int ann[] = {-1, C}, l2[] = {A, C};
		burst(p, ann, l2, N(l2)); /* guessed B, then C announced */
		burst(p, ann, l2, N(l2)); /* no guess: C as announced */
	}
	rxp_probe_free(p); /* the next probe may take its address */
	rxp_nvtx_range_pop();

	/* once an announcement followed A, nothing is guessed after A, even
	 * where the chain has not seen A's successor vary yet: here the
	 * engine announces idle (an empty poll), then B */
	rxp_nvtx_range_push("announced_after");
	p = fresh(0);
	{
		const int a1[] = {-1, B}, l1[] = {A, B};
		burst(p, a1, l1, N(l1));
		const int a2[] = {-1, I, B}, l2[] = {A, I, B};
		burst(p, a2, l2, N(l2));
	}
	rxp_probe_free(p); /* the next probe may take its address */
	rxp_nvtx_range_pop();
	return 0;
}
