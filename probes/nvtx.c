/* SPDX-License-Identifier: MIT */
/*
 * NVTX ranges (see rxray/probe.h): domain "rxray", one registered string
 * per stage so a push costs a pointer store when a tool listens and a
 * branch on a null function pointer when none does (nvtx3 is header-only
 * and finds a tool through NVTX_INJECTION64_PATH at its first call).
 *
 * Full mode: in a sampled burst each stage's range opens where the engine
 * announces the stage (rxp_stage_begin) and closes at the lap that ends
 * it, so a range is named by what the lap will say, never by a guess. The
 * burst's own range opens with its first stage range: a burst that only
 * polled empty (its lap is idle) shows nothing, and since a poll announces
 * cqe_poll only once it found a completion (rxray/probe.h), empty polls
 * cannot flood a tool however fast a thread polls. A stage nobody
 * announced falls back to a first-order chain: its range is guessed at the
 * previous lap from what followed that stage last time on this thread,
 * only after stages that were never followed by an announcement and never
 * after idle, and a transition seen to vary is guessed no more (a wrong
 * name at most once per stage).
 */
#include "rxray/probe.h"

#ifdef RXRAY_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <string.h>

static nvtxDomainHandle_t domain;
static nvtxStringHandle_t names[RXP_ST_COUNT];
static nvtxStringHandle_t burst_name;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void nvtx_setup(void)
{
	domain = nvtxDomainCreateA("rxray");
	for (int s = 0; s < RXP_ST_COUNT; s++)
		names[s] = nvtxDomainRegisterStringA(domain, rxp_stage_name((enum rxp_stage)s));
	burst_name = nvtxDomainRegisterStringA(domain, "burst");
}

void rxp_nvtx_init(void)
{
	pthread_once(&once, nvtx_setup);
}

/* Event attributes naming a range by a registered string... */
static void attr_registered(nvtxEventAttributes_t *a, nvtxStringHandle_t h)
{
	*a = (nvtxEventAttributes_t){0};
	a->version = NVTX_VERSION;
	a->size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a->messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	a->message.registered = h;
}

/* ... or by any text. */
static void attr_ascii(nvtxEventAttributes_t *a, const char *name)
{
	attr_registered(a, NULL);
	a->messageType = NVTX_MESSAGE_TYPE_ASCII;
	a->message.ascii = name;
}

static void push_registered(nvtxStringHandle_t h)
{
	nvtxEventAttributes_t a;
	attr_registered(&a, h);
	nvtxDomainRangePushEx(domain, &a);
}

void rxp_nvtx_push(enum rxp_stage s)
{
	rxp_nvtx_init();
	push_registered((unsigned)s < RXP_ST_COUNT ? names[s] : NULL);
}

void rxp_nvtx_pop(void)
{
	nvtxDomainRangePop(domain);
}

void rxp_nvtx_range_push(const char *name)
{
	rxp_nvtx_init();
	nvtxEventAttributes_t a;
	attr_ascii(&a, name);
	nvtxDomainRangePushEx(domain, &a);
}

void rxp_nvtx_range_pop(void)
{
	nvtxDomainRangePop(domain);
}

uint64_t rxp_nvtx_range_start(const char *name)
{
	rxp_nvtx_init();
	nvtxEventAttributes_t a;
	attr_ascii(&a, name);
	return nvtxDomainRangeStartEx(domain, &a);
}

void rxp_nvtx_range_end(uint64_t id)
{
	if (id)
		nvtxDomainRangeEnd(domain, id);
}

/*
 * Per-thread state of the sampled burst in progress. next[prev] is the
 * stage that followed prev (the burst's start is state RXP_ST_COUNT),
 * NEXT_UNKNOWN before any lap, NEXT_END when the burst ended there,
 * NEXT_VARIES once it differed; announced has bit prev set once an
 * announcement followed prev (no guess after prev from then on).
 */
enum { NEXT_UNKNOWN = 0xff, NEXT_VARIES = 0xfe, NEXT_END = 0xfd, OPEN_NONE = 0xff };
enum { BURST_NONE = 0, BURST_PENDING, BURST_OPEN };

static _Thread_local struct {
	const struct rxp_probe *owner;
	uint8_t next[RXP_ST_COUNT + 1];
	uint32_t announced; /* bit per state, as next[] */
	uint8_t prev;
	uint8_t open;  /* stage of the open stage range, or OPEN_NONE */
	uint8_t burst; /* BURST_NONE, _PENDING (sampled, no range yet), _OPEN */
	uint64_t seq;  /* the burst's number */
} ch;

static void chain_learn(uint8_t to)
{
	uint8_t *n = &ch.next[ch.prev];
	if (*n == NEXT_UNKNOWN)
		*n = to;
	else if (*n != to)
		*n = NEXT_VARIES;
}

/* The burst's range, once it has something to hold. */
static void burst_open(void)
{
	if (ch.burst != BURST_PENDING)
		return;
	nvtxEventAttributes_t a;
	attr_registered(&a, burst_name);
	a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
	a.payload.ullValue = ch.seq;
	nvtxDomainRangePushEx(domain, &a);
	ch.burst = BURST_OPEN;
}

static void stage_open(uint8_t s)
{
	burst_open();
	push_registered(names[s]);
	ch.open = s;
}

static void stage_close(void)
{
	if (ch.open != OPEN_NONE)
		nvtxDomainRangePop(domain);
	ch.open = OPEN_NONE;
}

void rxp_nvtx_burst_begin(const struct rxp_probe *p)
{
	rxp_nvtx_init();
	/* a new probe, or one reset: a new chain (a probe freed on this
	 * thread may leave its address to the next one) */
	if (ch.owner != p || p->sample_seq == 1) {
		ch.owner = p;
		memset(ch.next, NEXT_UNKNOWN, sizeof(ch.next));
		ch.announced = 0;
	}
	ch.burst = BURST_PENDING;
	ch.seq = p->sample_seq - 1;
	ch.prev = RXP_ST_COUNT;
	ch.open = OPEN_NONE;
}

void rxp_nvtx_stage_begin(const struct rxp_probe *p, enum rxp_stage s)
{
	if (ch.owner != p || ch.burst == BURST_NONE || (unsigned)s >= RXP_ST_COUNT)
		return;
	ch.announced |= 1u << ch.prev;
	if (ch.open == s) /* the chain guessed it, or a repeat */
		return;
	stage_close(); /* a guess (or an announcement) that no lap closed */
	if (s != RXP_ST_IDLE) /* a wait has no range */
		stage_open((uint8_t)s);
}

void rxp_nvtx_lap(const struct rxp_probe *p, enum rxp_stage s)
{
	if (ch.owner != p || ch.burst == BURST_NONE) /* a lap outside a sampled burst */
		return;
	stage_close();
	chain_learn((uint8_t)s);
	ch.prev = (uint8_t)s;
	/* the chain, only where nothing is announced after s, and never after
	 * a wait: what follows an empty poll is not known before it happens
	 * (a guess there would be a range per empty poll) */
	if (s == RXP_ST_IDLE || (ch.announced & (1u << s)))
		return;
	uint8_t n = ch.next[s];
	if (n < RXP_ST_COUNT && n != RXP_ST_IDLE)
		stage_open(n);
}

void rxp_nvtx_burst_end(const struct rxp_probe *p)
{
	if (ch.owner != p)
		return;
	if (ch.burst != BURST_NONE) {
		stage_close();
		chain_learn(NEXT_END);
	}
	if (ch.burst == BURST_OPEN)
		nvtxDomainRangePop(domain); /* the burst */
	ch.burst = BURST_NONE;
}
#else
void rxp_nvtx_init(void)
{
}

void rxp_nvtx_push(enum rxp_stage s)
{
	(void)s;
}

void rxp_nvtx_pop(void)
{
}

void rxp_nvtx_range_push(const char *name)
{
	(void)name;
}

void rxp_nvtx_range_pop(void)
{
}

uint64_t rxp_nvtx_range_start(const char *name)
{
	(void)name;
	return 0;
}

void rxp_nvtx_range_end(uint64_t id)
{
	(void)id;
}

void rxp_nvtx_burst_begin(const struct rxp_probe *p)
{
	(void)p;
}

void rxp_nvtx_lap(const struct rxp_probe *p, enum rxp_stage s)
{
	(void)p;
	(void)s;
}

void rxp_nvtx_burst_end(const struct rxp_probe *p)
{
	(void)p;
}

void rxp_nvtx_stage_begin(const struct rxp_probe *p, enum rxp_stage s)
{
	(void)p;
	(void)s;
}
#endif
