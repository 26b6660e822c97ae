/* SPDX-License-Identifier: MIT */
/*
 * The engine registry (testpmd's forwarding-engine table): every engine of
 * this build, by name. engines/registry/registry.c holds the table, one
 * line per engine; an engine whose library is not in the build is left
 * out (RXRAY_ENGINE_<NAME>, set by this folder's CMakeLists.txt for every
 * rxray_<name> target it finds). Tools and sweeps look engines up here and
 * never name one.
 */
#ifndef RXRAY_ENGINES_H
#define RXRAY_ENGINES_H

#include <stddef.h>

#include "rxray/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Engine by name, or NULL when unknown or not in this build. */
const struct rx_engine_ops *rxe_find(const char *name);
/* Number of engines in this build, and the i-th (NULL past the end). */
size_t rxe_count(void);
const struct rx_engine_ops *rxe_at(size_t i);
/* The names of the engines (test-only ones left out) joined by sep,
 * "verbs, dpdk" (or "none in this build"), into buf. Returns buf. */
const char *rxe_list(char *buf, size_t len, const char *sep);

/*
 * A config checked as `rxray run` would check it before starting: the
 * engine named in c->engine exists, then rx_run_check (caps, validation,
 * placement; flags RX_CHECK_*). 0; -EINVAL with "<field>: <what>" in err (bad config or
 * unknown engine); another -errno from caps (device absent: runtime).
 */
int rxe_check(const struct rx_config *c, unsigned flags, struct rx_caps *caps,
		    struct rx_placement *pl, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* RXRAY_ENGINES_H */
