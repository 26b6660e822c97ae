/* SPDX-License-Identifier: MIT */
/*
 * What rxray attach's profile means: findings in words and the per-packet
 * flame graph. The profile itself (samples, names, telemetry deltas) is
 * measured by attach/ (rxray/attach.h); this layer only reads it, so
 * probes never reach up into analyzers. tools/cmd_attach.c calls, in
 * order: rxb_profile_fold, rxb_profile_finish, rxa_attach_findings,
 * rxa_attach_flame_write, rxb_profile_write (attach.json last).
 */
#ifndef RXRAY_ATTACH_FINDINGS_H
#define RXRAY_ATTACH_FINDINGS_H

#include <stddef.h>

#include "rxray/attach.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Fill p->findings (replacing any) from a finished profile
 * (rxb_profile_finish): per port, rx_nombuf or imissed rising during the
 * window; a pktmbuf pool with cache_size 0 while ports receive, with the
 * mempool share split into get (dequeue) and put (enqueue) and the frames
 * that call it; the PMD's receive function and its share; warnings (no
 * samples, dropped samples, uprobes attached). At most
 * RXB_ATTACH_MAX_FINDINGS; never fails.
 */
void rxa_attach_findings(struct rxb_profile *p);

/*
 * Write dir/flame.svg (dir created if needed) from p's folded stacks: cycles
 * per packet when packets and cycles/packet are known, else samples.
 * Written to a temp name and renamed. 0 (also when there is no stack:
 * nothing written), or -errno with err naming the file.
 */
int rxa_attach_flame_write(const struct rxb_profile *p, const char *dir, char *err,
			   size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* RXRAY_ATTACH_FINDINGS_H */
