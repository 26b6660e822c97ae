/* SPDX-License-Identifier: MIT */
/* The engines this build can drive (rxray/engines.h). One line each. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rxray/engines.h"
#include "rxray/util.h"

extern const struct rx_engine_ops rx_engine_verbs;
extern const struct rx_engine_ops rx_engine_dpdk;
extern const struct rx_engine_ops rx_engine_null;

static const struct rx_engine_ops *const engines[] = {
#ifdef RXRAY_ENGINE_VERBS
	&rx_engine_verbs,
#endif
#ifdef RXRAY_ENGINE_DPDK
	&rx_engine_dpdk,
#endif
#ifdef RXRAY_ENGINE_NULL
	&rx_engine_null,
#endif
	NULL,
};

size_t rxe_count(void)
{
	return sizeof(engines) / sizeof(engines[0]) - 1;
}

const struct rx_engine_ops *rxe_at(size_t i)
{
	return i < rxe_count() ? engines[i] : NULL;
}

const struct rx_engine_ops *rxe_find(const char *name)
{
	for (size_t i = 0; name && i < rxe_count(); i++)
		if (!strcmp(engines[i]->name, name))
			return engines[i];
	return NULL;
}

const char *rxe_list(char *buf, size_t len, const char *sep)
{
	size_t off = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < rxe_count() && off < len; i++)
		if (!engines[i]->test_only)
			off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? sep : "",
						engines[i]->name);
	if (!off)
		snprintf(buf, len, "none in this build");
	return buf;
}

int rxe_check(const struct rx_config *c, unsigned flags, struct rx_caps *caps,
		    struct rx_placement *pl, char *err, size_t errlen)
{
	const struct rx_engine_ops *ops = rxe_find(c->engine);
	if (!ops) {
		char list[128];
		return rxu_errf(err, errlen, -EINVAL, "engine: '%s' is not an engine of this build (%s)",
				c->engine, rxe_list(list, sizeof(list), ", "));
	}
	return rx_run_check(ops, c, flags, caps, pl, err, errlen);
}
