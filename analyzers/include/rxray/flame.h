/* SPDX-License-Identifier: MIT */
/*
 * Flame graphs: a set of weighted stacks ("a;b;c 123" folded lines, or
 * frames pushed from memory), merged into a tree, written as a
 * self-contained interactive SVG, a differential SVG, folded text or
 * speedscope JSON.
 *
 * Weights are doubles: sample counts from a stack sampler, or cycles per
 * packet when a run result is turned into frames (role;stage), so a
 * frame's width reads as its cycles/packet.
 *
 * Error rule (rxray/util.h): functions that can fail return 0 or a
 * negative errno; the constructor is rxa_flame_open(struct rxa_flame
 * **out). Free functions accept NULL.
 * Nothing here prints; parse errors come back as one line in err.
 *
 * Typical use (rxray attach):
 *     struct rxa_flame *f;
 *     if (rxa_flame_open(&f) < 0) return -ENOMEM;
 *     const char *st[] = {"rx_lcore", "mlx5_rx_burst", "rte_mbuf_raw_alloc"};
 *     rxa_flame_add(f, st, 3, 17);            // one sampled stack, weight 17
 *     struct rxa_flame_svg_opts o = {.title = "pid 1234 lcore 3",
 *                                    .units = "samples"};
 *     rxa_flame_svg_write_file(f, "flame.svg", &o);
 *     rxa_flame_free(f);
 */
#ifndef RXRAY_FLAME_H
#define RXRAY_FLAME_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rxa_flame; /* opaque: interned names + a tree of frames */
struct rxr_result;

/* Empty set into *out (the caller owns it: rxa_flame_free). 0, or -ENOMEM
 * with *out NULL (nothing the caller passes can make it fail: no err). */
int rxa_flame_open(struct rxa_flame **out);
void rxa_flame_free(struct rxa_flame *f);

/*
 * Add one stack, frames[0] the root (outermost) ... frames[n-1] the leaf,
 * with weight w (>= 0, finite). Frame names are copied; empty names and
 * names containing ';' or a newline are rejected. 0, -EINVAL, -ENOMEM.
 */
int rxa_flame_add(struct rxa_flame *f, const char *const *frames, size_t n, double w);

/*
 * Add one folded line "a;b;c N" (len bytes, no trailing newline needed;
 * N a non-negative number, integer or decimal). Empty lines and lines
 * starting with '#' are ignored (return 0). -EINVAL on a malformed line
 * with a short reason in err (e.g. "missing count"), -ENOMEM.
 */
int rxa_flame_add_folded(struct rxa_flame *f, const char *line, size_t len, char *err,
			 size_t errlen);

/*
 * Read folded lines from in. On a malformed line returns -EINVAL and
 * writes "<src>:<line>: <what>" into err; the set then holds the lines
 * before it (callers normally discard it). Malformed: no count, a count
 * that is not a number in [0, 2^63), an empty frame, a NUL byte, a line
 * over RXR_IN_MAX_LINE (rxray/input.h). Frame names that are not UTF-8
 * are kept as bytes; every writer replaces what its format cannot hold.
 * -EIO on a read error, -ENOMEM (never taken for the end of the input).
 */
int rxa_flame_read_folded(struct rxa_flame *f, FILE *in, const char *src, char *err,
			  size_t errlen);
/* Same from a path ("-" = stdin), checked first (rxray/input.h): -ENOENT
 * etc. with "<path>: <strerror>", -EISDIR, -EINVAL for a FIFO or device. */
int rxa_flame_read_folded_file(struct rxa_flame *f, const char *path, char *err, size_t errlen);

/*
 * Add a run result: one frame per (thread, stage) under
 * [prefix;]<role>[#i];<stage>, weight = stage cycles / thread packets
 * (cycles per packet of that thread; idle is left out, nic threads
 * included). prefix may be NULL. Returns 0, -EINVAL (no threads), -ENOMEM.
 */
int rxa_flame_add_result(struct rxa_flame *f, const struct rxr_result *r, const char *prefix);

/* Sum of all weights added (the root frame's width). */
double rxa_flame_total(const struct rxa_flame *f);
/* Number of distinct frames (tree nodes, root excluded). */
size_t rxa_flame_frames(const struct rxa_flame *f);
/* Multiply every weight by k (k > 0): e.g. samples -> per packet. */
void rxa_flame_scale(struct rxa_flame *f, double k);

struct rxa_flame_svg_opts {
	const char *title;    /* heading; NULL = "Flame graph" */
	const char *subtitle; /* second line; NULL = none */
	const char *units;    /* weight unit in hover text; NULL = "samples" */
	int width;            /* pixels; 0 = 1200 */
	/*
	 * Frames narrower than this many pixels are merged, per parent, into
	 * one "[N small frames]" frame so a 1,000,000-frame set stays
	 * readable and small; widths still sum to the parent. 0 = 0.3 px.
	 */
	double min_px;
	/* Differential mode only: NULL = "A", "B". */
	const char *label_a, *label_b;
};

/*
 * Write the flame graph of f as one self-contained SVG document: frames
 * coloured by a hash of their name (same name -> same colour in every
 * graph), hover details, click to zoom, Ctrl-F/button search with
 * highlighted matches and their total. The embedded script finds its own
 * <svg> element, so the SVG can also be inlined into an HTML page.
 * o may be NULL. 0, -EIO (write error), -ENOMEM, -EINVAL (empty set).
 */
int rxa_flame_svg_write(const struct rxa_flame *f, FILE *out, const struct rxa_flame_svg_opts *o);
/* Same to a file, written atomically (temp + rename). 0 or -errno. */
int rxa_flame_svg_write_file(const struct rxa_flame *f, const char *path,
			     const struct rxa_flame_svg_opts *o);

/*
 * Differential flame graph: the shape (widths) of b, each frame coloured
 * by its change from a to b: red grows, blue shrinks, white unchanged;
 * hover shows both values and the delta. Callers normalise first (run
 * results are already per packet; folded samples: rxa_flame_scale).
 * 0, -EIO, -ENOMEM, -EINVAL (b empty).
 */
int rxa_flame_diff_svg_write(const struct rxa_flame *a, const struct rxa_flame *b, FILE *out,
			     const struct rxa_flame_svg_opts *o);

/* Folded text, one line per leaf-or-self stack, sorted by stack. 0/-EIO. */
int rxa_flame_folded_write(const struct rxa_flame *f, FILE *out);
/*
 * speedscope file format (https://www.speedscope.app/file-format-schema.json):
 * one "sampled" profile named name whose samples are the stacks and whose
 * weights are their self weights. 0, -EIO, -ENOMEM.
 */
int rxa_flame_speedscope_write(const struct rxa_flame *f, FILE *out, const char *name,
			       const char *unit);

#ifdef __cplusplus
}
#endif
#endif /* RXRAY_FLAME_H */
