/* SPDX-License-Identifier: MIT */
/*
 * NVTX ranges (see rxray/probe.h): domain "rxray", one registered string
 * per stage so a push costs a pointer store when a tool listens and a
 * branch on a null function pointer when none does (nvtx3 is header-only
 * and finds a tool through NVTX_INJECTION64_PATH at its first call).
 *
 * Full mode names a stage's range when it opens, one lap before the lap
 * that says which stage it was: the name comes from what followed the
 * previous stage last time on this thread (a first-order chain learned in
 * sampled bursts only). A transition that turns out to vary is marked and
 * opens no range again, so a wrong name can occur at most once per state
 * and a thread's steady loop (handoff after cqe_poll, sge_setup after
 * buf_alloc) is named exactly.
 */
#include "rxray/probe.h"

#ifdef RXRAY_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <string.h>

static nvtxDomainHandle_t domain;
static nvtxStringHandle_t names[RXR_ST_COUNT];
static nvtxStringHandle_t burst_name;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void nvtx_setup(void)
{
	domain = nvtxDomainCreateA("rxray");
	for (int s = 0; s < RXR_ST_COUNT; s++)
		names[s] = nvtxDomainRegisterStringA(domain, rxr_stage_name((enum rxr_stage)s));
	burst_name = nvtxDomainRegisterStringA(domain, "burst");
}

void rxr_nvtx_init(void)
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

void rxr_nvtx_push(enum rxr_stage s)
{
	rxr_nvtx_init();
	push_registered((unsigned)s < RXR_ST_COUNT ? names[s] : NULL);
}

void rxr_nvtx_pop(void)
{
	nvtxDomainRangePop(domain);
}

void rxr_nvtx_range_push(const char *name)
{
	rxr_nvtx_init();
	nvtxEventAttributes_t a;
	attr_ascii(&a, name);
	nvtxDomainRangePushEx(domain, &a);
}

void rxr_nvtx_range_pop(void)
{
	nvtxDomainRangePop(domain);
}

uint64_t rxr_nvtx_range_start(const char *name)
{
	rxr_nvtx_init();
	nvtxEventAttributes_t a;
	attr_ascii(&a, name);
	return nvtxDomainRangeStartEx(domain, &a);
}

void rxr_nvtx_range_end(uint64_t id)
{
	if (id)
		nvtxDomainRangeEnd(domain, id);
}

/*
 * Per-thread chain state: next[prev] is the stage that followed prev (the
 * burst's start is state RXR_ST_COUNT), NEXT_UNKNOWN before any lap,
 * NEXT_END when the burst ended there, NEXT_VARIES once it differed.
 */
enum { NEXT_UNKNOWN = 0xff, NEXT_VARIES = 0xfe, NEXT_END = 0xfd };

static _Thread_local struct {
	const struct rxr_probe *owner;
	uint8_t next[RXR_ST_COUNT + 1];
	uint8_t prev;
	uint8_t open;  /* a stage range is open */
	uint8_t burst; /* BURST_NONE, _PENDING (sampled, no work lapped yet), _OPEN */
	uint64_t seq;  /* the pending burst's number */
} ch;

enum { BURST_NONE = 0, BURST_PENDING, BURST_OPEN };

static void chain_learn(uint8_t to)
{
	uint8_t *n = &ch.next[ch.prev];
	if (*n == NEXT_UNKNOWN)
		*n = to;
	else if (*n != to)
		*n = NEXT_VARIES;
}

/* Open the range of the stage expected after ch.prev, when it is known. */
static void chain_open(void)
{
	uint8_t n = ch.next[ch.prev];
	ch.open = n < RXR_ST_COUNT;
	if (ch.open)
		push_registered(names[n]);
}

/*
 * A sampled burst's range opens at its first lap of work, not at the
 * poll: an empty poll (one idle lap) opens nothing. A polling thread on an
 * idle or fast host makes millions of empty polls a second, and a range
 * each would flood the tool (Nsight, our listener) with ranges that hold
 * nothing; on the 16-core H200 host they overran the listener's 1M ranges
 * in 0.3 s. The first work stage (cqe_poll with packets) therefore ends
 * just before its burst's range begins: it had no range of its own anyway
 * (the transition from a burst's start varies).
 */
void rxr_nvtx_burst_begin(const struct rxr_probe *p)
{
	rxr_nvtx_init();
	if (ch.owner != p) {
		ch.owner = p;
		memset(ch.next, NEXT_UNKNOWN, sizeof(ch.next));
	}
	ch.burst = BURST_PENDING;
	ch.seq = p->sample_seq - 1;
	ch.prev = RXR_ST_COUNT;
	ch.open = 0;
}

void rxr_nvtx_lap(const struct rxr_probe *p, enum rxr_stage s)
{
	if (ch.owner != p || ch.burst == BURST_NONE) /* a lap outside a sampled burst */
		return;
	if (ch.burst == BURST_PENDING) {
		if (s == RXR_ST_IDLE)
			return; /* an empty poll so far: nothing to show */
		nvtxEventAttributes_t a;
		attr_registered(&a, burst_name);
		a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
		a.payload.ullValue = ch.seq;
		nvtxDomainRangePushEx(domain, &a);
		ch.burst = BURST_OPEN;
		ch.prev = (uint8_t)s;
		chain_open();
		return;
	}
	if (ch.open)
		nvtxDomainRangePop(domain);
	chain_learn((uint8_t)s);
	ch.prev = (uint8_t)s;
	chain_open();
}

void rxr_nvtx_burst_end(const struct rxr_probe *p)
{
	if (ch.owner != p)
		return;
	if (ch.burst == BURST_OPEN) {
		if (ch.open)
			nvtxDomainRangePop(domain);
		chain_learn(NEXT_END);
		nvtxDomainRangePop(domain); /* the burst */
	}
	ch.open = 0;
	ch.burst = BURST_NONE;
}
#else
void rxr_nvtx_init(void)
{
}

void rxr_nvtx_push(enum rxr_stage s)
{
	(void)s;
}

void rxr_nvtx_pop(void)
{
}

void rxr_nvtx_range_push(const char *name)
{
	(void)name;
}

void rxr_nvtx_range_pop(void)
{
}

uint64_t rxr_nvtx_range_start(const char *name)
{
	(void)name;
	return 0;
}

void rxr_nvtx_range_end(uint64_t id)
{
	(void)id;
}

void rxr_nvtx_burst_begin(const struct rxr_probe *p)
{
	(void)p;
}

void rxr_nvtx_lap(const struct rxr_probe *p, enum rxr_stage s)
{
	(void)p;
	(void)s;
}

void rxr_nvtx_burst_end(const struct rxr_probe *p)
{
	(void)p;
}
#endif
