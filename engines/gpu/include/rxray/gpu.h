/* SPDX-License-Identifier: MIT */
/*
 * The GPU consumer stage (docs/gpu.md "GPU stage design"): what a GPUDirect receiver
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
 * Launch modes (--gpu-launch):
 *   kernel      one launch per batch; the addresses and sequence numbers
 *               ride in the kernel's parameters (batches up to 1024)
 *   graph       a CUDA graph per slot, captured at open and replayed per
 *               batch; the batch is read from mapped pinned memory
 *   persistent  one resident kernel (half the SMs at most) waits on a
 *               doorbell in mapped memory: submitting costs no CUDA call
 * Every kernel gives a warp to a packet (16-byte accesses). The grid's
 * last block writes the batch's statistics (sequence range, checksum, GPU
 * time) and then its number into mapped host memory: rxg_retire reads
 * them there (no CUDA call, no event); the host keeps the totals.
 *
 * Timing: GPU time per batch from the GPU's global timer, from the first
 * block's start to the last block's end, summed into rxg_stats.
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
enum rxg_launch { RXG_LAUNCH_KERNEL = 0, RXG_LAUNCH_GRAPH, RXG_LAUNCH_PERSISTENT };

/* "none" | "reorder" | "checksum"; NULL for an unknown value. */
const char *rxg_work_name(enum rxg_work w);
/* "kernel" | "graph" | "persistent"; NULL for an unknown value. */
const char *rxg_launch_name(enum rxg_launch l);

struct rxg_params {
	enum rxg_work work;
	uint32_t max_batch;     /* packets per batch, 1..65536 */
	uint32_t depth;         /* batches in flight at most, 1..64 */
	uint32_t payload_bytes; /* bytes of each payload the kernel reads (> 0) */
	uint32_t window;        /* reorder: slots in the output buffer, power of two */
	int device;             /* CUDA device ordinal */
	enum rxg_launch launch; /* how a batch reaches the GPU (0: kernel) */
	uint32_t seq_at;        /* seqs NULL: each packet's sequence number is the
				 * big-endian u64 at payload + seq_at (GPU memory) */
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

struct rxg_device_info {
	char name[256];
	uint32_t sms;           /* multiprocessors */
	uint64_t l2_bytes;
	uint32_t mem_clock_khz; /* peak memory clock */
	uint32_t bus_bits;      /* global memory bus width */
	double peak_gbs;        /* 2 x clock x bus width: the device's own peak, GB/s */
};
/* What the device says of itself. 0, -EIO (err says which call). */
int rxg_device_info(int device, struct rxg_device_info *out, char *err, size_t errlen);

/* Consumer on its own stream. A persistent consumer's kernel stays
 * resident until close: close it before anything that synchronises the
 * whole device (cudaFree, cudaDeviceSynchronize) would wait for it. 0, -EINVAL (bad params; kernel mode with
 * max_batch > 1024), -ENODEV (no GPU),
 * -ENOMEM, -EIO (a CUDA call failed); *out owned by the caller. */
int rxg_consumer_open(const struct rxg_params *p, struct rxg_consumer **out, char *err,
		      size_t errlen);
/* Waits for work in flight, frees everything. NULL ok. */
void rxg_consumer_close(struct rxg_consumer *g);

/*
 * Launch the work on a batch of n payloads (device addresses, their
 * sequence numbers). The arrays are copied (into the kernel's parameters
 * or the slot's mapped memory): they may be reused at once. seqs NULL: the
 * kernel reads each sequence number from the packet (params.seq_at), as a
 * single-segment GPUDirect receiver must: its headers are in GPU memory. One CUDA call
 * (kernel, graph), none (persistent, work none).
 * 0, -EBUSY (depth batches in flight: retire one first), -EINVAL
 * (n == 0 or > max_batch), -EIO.
 */
int rxg_submit(struct rxg_consumer *g, void *const *payloads, const uint64_t *seqs, uint32_t n);

/*
 * Retire the oldest batch in flight once its kernel has read it all:
 * returns its packet count (its buffers may go back now), 0 when it has
 * not completed (block == false) or nothing is in flight, -EIO on a CUDA
 * error (a faulted kernel). Without block it reads mapped memory only;
 * with block it spins on that, asking the stream for errors now and then,
 * and gives up with -ETIMEDOUT when the batch made no progress for 2 s
 * (rxg_stall says which batch and what it waited for).
 */
int rxg_retire(struct rxg_consumer *g, bool block);

/* Batches in flight. */
uint32_t rxg_inflight(const struct rxg_consumer *g);

void rxg_consumer_stats(const struct rxg_consumer *g, struct rxg_stats *s);
/* Start the stats again (after a warm-up; nothing may be in flight). */
void rxg_consumer_stats_reset(struct rxg_consumer *g);

/* The reorder output buffer (device memory, window slots of payload_bytes
 * rounded up to 16: slot s at s x that stride) and
 * the last checksums (device, max_batch x uint32): for tests. */
const void *rxg_consumer_output(const struct rxg_consumer *g);

/* ------------------------------------------------------------ DMA engine */

/*
 * How the software NIC writes into GPU memory, as a NIC's DMA engine would:
 * it stages the bytes in pinned host memory (rxg_dma_stage hands out the
 * space, a ring), and rxg_dma_submit issues every piece staged since the
 * last submit as one ticket, without waiting. The GPU reads the ring in
 * place through mapped memory (a warp a piece, 16-byte accesses) and
 * writes the ticket into mapped host memory once every byte has landed,
 * so rxg_dma_done is a memory read, no CUDA call. Two ways to start the
 * copies (enum rxg_dma_mode):
 * - RXG_DMA_RESIDENT (the software NIC's default): a kernel that stays on
 *   the GPU while the engine is in use takes tickets from a doorbell in
 *   mapped memory, several at once; a submit is a few stores. It goes on
 *   the GPU with the first submit after open or rxg_dma_park, and leaves
 *   at rxg_dma_park: no pinned or device allocation may happen anywhere in
 *   the process while it is there (one would wait for it).
 * - RXG_DMA_LAUNCH: a submit is one scatter kernel launch on one of the
 *   engine's streams (microseconds of the caller's time a submit).
 * Tickets are reported in order (rxg_dma_done never passes one that has
 * not landed), but the copies of different tickets may land in any order:
 * a destination is written again only after its ticket is done (as a NIC
 * reuses a buffer only after its completion). A ticket's staging space is
 * reused only once it has completed. The NIC writes a burst's completions
 * only when rxg_dma_done has reached the ticket that carried its payloads
 * (a NIC completes after its DMA write is visible). One per NIC thread (or
 * DMA writer); not thread-safe.
 */
struct rxg_dma;

enum rxg_dma_mode { RXG_DMA_RESIDENT = 0, RXG_DMA_LAUNCH = 1 };
/* "resident", "launch"; NULL for anything else. */
const char *rxg_dma_mode_name(enum rxg_dma_mode m);

/* Room for max_pieces pieces and staging_bytes bytes in flight (staged or
 * submitted and not yet landed). 0, -EINVAL, -ENODEV, -ENOMEM, -EIO;
 * *out owned by the caller. */
int rxg_dma_open(uint32_t max_pieces, size_t staging_bytes, enum rxg_dma_mode mode,
		 struct rxg_dma **out, char *err, size_t errlen);
/* Drains what is in flight, frees everything. NULL ok. */
void rxg_dma_close(struct rxg_dma *d);
/* Staging space for len bytes bound for dst (GPU memory): write them there
 * before the next submit. NULL when the ring is full (pieces, bytes or
 * tickets in flight): retire completed tickets (rxg_dma_done) and retry,
 * or submit first when nothing is in flight. */
void *rxg_dma_stage(struct rxg_dma *d, void *dst, uint32_t len);
/* Pieces staged since the last submit. */
uint32_t rxg_dma_pending(const struct rxg_dma *d);
/* The ticket the next submit will return: what a run whose pieces are
 * staged but not yet submitted waits for (tickets land in order). */
uint64_t rxg_dma_next_ticket(const struct rxg_dma *d);
/* Issue every piece staged since the last submit as asynchronous copies;
 * the staging space stays reserved until its ticket completes. Returns a
 * ticket > 0, 0 when nothing was staged, or -errno (-EIO: a CUDA call
 * failed; the engine is unusable after it). */
int64_t rxg_dma_submit(struct rxg_dma *d);
/* The highest ticket whose copies have landed (polls, never waits; no
 * CUDA call). Frees the staging space of every ticket up to it. */
uint64_t rxg_dma_done(struct rxg_dma *d);
/* Wait until every submitted ticket has landed (stop, teardown). 0, -EIO,
 * or -ETIMEDOUT when a ticket made no progress for 2 s (rxg_stall says
 * which). */
int rxg_dma_drain(struct rxg_dma *d);
/* Drain, then take the resident kernel off the GPU (its writer is done
 * until the next submit). 0, -EIO, -ETIMEDOUT (rxg_stall says why). */
int rxg_dma_park(struct rxg_dma *d);
/* Submit and wait for everything (the synchronous form). 0 / -EIO /
 * -ETIMEDOUT. */
int rxg_dma_flush(struct rxg_dma *d);

/* The first GPU wait of this process that gave up (a kernel or copy that
 * made no progress for 2 s), as one line: which stage, which batch or
 * ticket, what it waited for. NULL while there was none. */
const char *rxg_stall(void);
/* Note a stall (printf-style, one line without a newline): the first one
 * of the process is kept, later ones are dropped. Thread-safe. */
void rxg_stall_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * The host <-> GPU link's own figures (engines/gpu/link.cu, printed by
 * bench_gpu_link), the ground the DMA engine and the launch modes stand
 * on. Each returns < 0 when a CUDA call failed.
 *   rxg_link_chase_us     one dependent GPU read: where 0 pinned host
 *                         memory, 1 the same write-combined, 2 device
 *                         memory; microseconds per read
 *   rxg_link_read_gbs     SM reads of pinned host memory, `blocks` blocks
 *                         of 256 threads, 16 B a load: GB/s
 *   rxg_link_h2d_us       the copy engine, pinned host to device, one
 *                         stream, `inflight` copies queued between waits:
 *                         microseconds per copy (and GB/s)
 *   rxg_link_api_ns       CPU ns per call: 0..3 a launch with 16 B, 1 KiB,
 *                         4 KiB, 16 KiB of parameters; 4 cudaGraphLaunch;
 *                         5 cudaMemcpyAsync of 4 KiB; 6 cudaEventRecord
 *   rxg_link_launch_mps   millions of launches a second from `threads`
 *                         threads, a stream each (1 KiB of parameters)
 *   rxg_link_doorbell_us  a store in mapped memory seen by a resident GPU
 *                         thread and answered: microseconds a round trip
 *   rxg_link_batch_us     a batch of n (<= 64) addresses to a kernel and
 *                         its done flag back, one batch at a time: mode 0
 *                         a launch with them in its parameters, 1 a
 *                         launch reading them from mapped memory, 2 a
 *                         graph launch of that, 3 a resident kernel rung
 *                         through mapped memory: microseconds a batch
 */
double rxg_link_chase_us(int where, unsigned hops);
double rxg_link_read_gbs(int wc, unsigned blocks, size_t bytes);
double rxg_link_h2d_us(size_t bytes, unsigned inflight, unsigned copies, double *gbs);
double rxg_link_api_ns(int what, unsigned calls);
double rxg_link_launch_mps(unsigned threads, unsigned calls);
double rxg_link_doorbell_us(unsigned rounds);
double rxg_link_batch_us(int mode, uint32_t n, unsigned rounds);

#ifdef __cplusplus
}
#endif
#endif /* RXRAY_GPU_H */
