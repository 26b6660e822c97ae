/* SPDX-License-Identifier: MIT */
/*
 * Point pairing: which points of a loaded set compare with which (rxray
 * diff, the report's mode and engine diffs). Two points pair when every
 * knob both carry, the named ones aside, is equal; a knob only one side
 * has (split on hds, not on single) does not keep them apart.
 */
#ifndef RXRAY_PAIR_H
#define RXRAY_PAIR_H

#include <stdbool.h>
#include <stddef.h>

#include "rxray/analyze.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Whether a and b agree on every knob both carry, the names in skip
 * aside. rest gets the shared knobs as "k=v,..." in a's order (cut at a
 * character when it does not fit n bytes); its content is unspecified
 * when they do not agree.
 */
bool rxa_pair_agrees(const struct rxa_point *a, const struct rxa_point *b,
		     const char *const *skip, size_t nskip, char *rest, size_t n);

/* rxa_pair_candidates flags */
#define RXA_PAIR_UNORDERED 0x1u /* (i, j) with i < j only: each pair once */
#define RXA_PAIR_ANY       0x2u /* every measured point may pair with every other */

/*
 * Candidate pairs (i, j), i != j, of measured points of s: i matches sa,
 * j matches sb (NULL matches every point), both in one group of
 * rxa_set_group(s, skip, nskip) unless RXA_PAIR_ANY. Without
 * RXA_PAIR_ANY a pair that rxa_pair_agrees accepts is always among them,
 * and the pass costs points x knobs, not points^2. The pairs come back
 * sorted by i then j, as a plain double loop visits them.
 *
 * @param out   set to an array of 2 * *nout indices (i0, j0, i1, j1, ...),
 *              owned by the caller (free); NULL when *nout is 0
 * @param nout  number of pairs
 * @return 0, or -ENOMEM (*out NULL, *nout 0)
 */
int rxa_pair_candidates(const struct rxa_set *s, const char *const *skip, size_t nskip,
			const struct rxa_sel *sa, const struct rxa_sel *sb, unsigned flags,
			size_t **out, size_t *nout);

#ifdef __cplusplus
}
#endif

#endif
