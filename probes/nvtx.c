/* SPDX-License-Identifier: MIT */
/*
 * NVTX ranges for full probe mode: domain "rxray", one registered string
 * per stage so a push costs a pointer store when a tool listens and a
 * branch on a null function pointer when none does (nvtx3 is header-only
 * and finds a tool through NVTX_INJECTION64_PATH).
 */
#include "rxray/probe.h"

#ifdef RXRAY_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>

static nvtxDomainHandle_t domain;
static nvtxStringHandle_t names[RXR_ST_COUNT];

void rxr_nvtx_init(void)
{
	if (domain)
		return;
	domain = nvtxDomainCreateA("rxray");
	for (int s = 0; s < RXR_ST_COUNT; s++)
		names[s] = nvtxDomainRegisterStringA(domain, rxr_stage_name((enum rxr_stage)s));
}

void rxr_nvtx_push(enum rxr_stage s)
{
	nvtxEventAttributes_t a = {0};
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	a.message.registered = (unsigned)s < RXR_ST_COUNT ? names[s] : NULL;
	nvtxDomainRangePushEx(domain, &a);
}

void rxr_nvtx_pop(void)
{
	nvtxDomainRangePop(domain);
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
#endif
