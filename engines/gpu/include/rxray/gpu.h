/* SPDX-License-Identifier: MIT */
/*
 * The GPU consumer stage (DESIGN.md "GPU stage"): what a GPUDirect receiver
 * does with payloads that landed in GPU memory. The app side hands batches
 * of payload addresses to a CUDA kernel on the consumer's own stream and
 * gives the buffers back only once the kernel that read them completed
 * (CUDA events), as a real receiver must.
 *
 * Work kinds (--gpu-work):
 *   none      no kernel: the batch completes at once (the stage's floor)
 *   reorder   each payload copied into a contiguous buffer at the slot its
 *             sequence number names (seq mod window), as daqiri's reorder
 *             benchmark does; gaps and duplicates counted per batch
 *   checksum  a 16-bit ones' complement sum over each payload
 *
 * Timing: GPU time per batch from CUDA events around the kernel (copy of
 * the batch's address list included), summed into rxg_stats.
 *
 * Built only with the CUDA toolkit (RXRAY_HAVE_CUDA); rxray links
 * libcudart. Prefix rxg_. Error rule: 0 / -errno with one line in err.
 * Not thread-safe: one consumer per app thread.
 */
#ifndef RXRAY_GPU_H
#define RXRAY_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum rxg_work { RXG_WORK_NONE = 0, RXG_WORK_REORDER, RXG_WORK_CHECKSUM };

/* "none" | "reorder" | "checksum"; NULL for an unknown value. */
const char *rxg_work_name(enum rxg_work w);

struct rxg_params {
	enum rxg_work work;
	uint32_t max_batch;     /* packets per batch, 1..65536 */
	uint32_t depth;         /* batches in flight at most, 1..64 */
	uint32_t payload_bytes; /* bytes of each payload the kernel reads (> 0) */
	uint32_t window;        /* reorder: slots in the output buffer, power of two */
	int device;             /* CUDA device ordinal */
};

struct rxg_stats {
	uint64_t batches, packets;
	double kernel_ms;       /* GPU time, summed over retired batches */
	double max_batch_ms;    /* slowest batch */
	uint64_t gaps;          /* reorder: sequence numbers missing (within and
				 * between batches) */
	uint64_t dups;          /* reorder: repeated or backward sequence numbers */
	uint64_t checksum;      /* checksum: sum of every payload's 16-bit sum */
};

struct rxg_consumer;

/*
 * 1 when a CUDA device can be used (runtime present, a device visible),
 * else 0 with the reason in why (may be NULL).
 */
int rxg_available(char *why, size_t whylen);

/* Consumer on its own stream. 0, -EINVAL (bad params), -ENODEV (no GPU),
 * -ENOMEM, -EIO (a CUDA call failed); *out owned by the caller. */
int rxg_consumer_open(const struct rxg_params *p, struct rxg_consumer **out, char *err,
		      size_t errlen);
/* Waits for work in flight, frees everything. NULL ok. */
void rxg_consumer_close(struct rxg_consumer *g);

/*
 * Launch the work on a batch of n payloads (device addresses, their
 * sequence numbers). The arrays are copied: they may be reused at once.
 * 0, -EBUSY (depth batches in flight: retire one first), -EINVAL
 * (n == 0 or > max_batch), -EIO.
 */
int rxg_submit(struct rxg_consumer *g, void *const *payloads, const uint64_t *seqs, uint32_t n);

/*
 * Retire the oldest batch in flight once its kernel completed: returns its
 * packet count (its buffers may go back now), 0 when it has not completed
 * (block == false) or nothing is in flight, -EIO on a CUDA error. With
 * block, waits for it.
 */
int rxg_retire(struct rxg_consumer *g, bool block);

/* Batches in flight. */
uint32_t rxg_inflight(const struct rxg_consumer *g);

void rxg_consumer_stats(const struct rxg_consumer *g, struct rxg_stats *s);
/* Start the stats again (after a warm-up; nothing may be in flight). */
void rxg_consumer_stats_reset(struct rxg_consumer *g);

/* The reorder output buffer (device memory, window x payload_bytes) and
 * the last checksums (device, max_batch x uint32): for tests. */
const void *rxg_consumer_output(const struct rxg_consumer *g);

/* ------------------------------------------------------------ DMA engine */

/*
 * How the software NIC writes into GPU memory, as a NIC's DMA engine would:
 * it stages the bytes in pinned host memory (rxg_dma_stage hands out the
 * space) and rxg_dma_flush copies every staged piece to its GPU address
 * with one scatter kernel on the engine's own stream, returning once the
 * copies landed (the NIC writes the completions after that). One per NIC
 * thread; not thread-safe.
 */
struct rxg_dma;

/* Room for max_pieces pieces and staging_bytes bytes between flushes.
 * 0, -ENODEV, -ENOMEM, -EIO; *out owned by the caller. */
int rxg_dma_open(uint32_t max_pieces, size_t staging_bytes, struct rxg_dma **out, char *err,
		 size_t errlen);
void rxg_dma_close(struct rxg_dma *d);
/* Staging space for len bytes bound for dst (GPU memory): write them
 * there before the next flush. NULL when the batch is full (flush first). */
void *rxg_dma_stage(struct rxg_dma *d, void *dst, uint32_t len);
/* Pieces staged since the last flush. */
uint32_t rxg_dma_pending(const struct rxg_dma *d);
/* Copy every staged piece to its destination and wait for it. 0 / -EIO. */
int rxg_dma_flush(struct rxg_dma *d);

#ifdef __cplusplus
}
#endif
#endif /* RXRAY_GPU_H */
