/* SPDX-License-Identifier: MIT */
/*
 * The software NIC (docs/design.md "The software NIC"): pinned threads that
 * play wire + NIC over receive rings in the mlx5 formats of rdma-core's
 * <infiniband/mlx5dv.h>, so an engine's datapath is the same code it runs
 * on a real mlx5 device through mlx5dv_init_obj.
 *
 * Rings (one RQ + one CQ per queue, allocated by the NIC like a driver
 * would; an engine sees them through struct rxs_ring, shaped like
 * mlx5dv_rwq / mlx5dv_cq):
 *
 *   RQ   wqe_cnt WQEs of `stride` bytes; WQE i holds `sges` consecutive
 *        struct mlx5_wqe_data_seg {byte_count, lkey, addr} (big-endian).
 *        A segment with lkey == MLX5_INVALID_LKEY ends the scatter list
 *        early. The engine owns WQE contents.
 *   RQ doorbell record  rq_dbrec[MLX5_RCV_DBR] = htobe32(posted & 0xffff):
 *        the engine's running count of posted WQEs (16 bits, like mlx5).
 *        The NIC consumes WQEs strictly in order; WQE (n & (wqe_cnt-1)) is
 *        the n-th posted. Store it with rxs_rq_doorbell (release) AFTER the
 *        WQE contents are written.
 *   CQ   cqe_cnt struct mlx5_cqe64 entries, initialised with op_own =
 *        MLX5_CQE_INVALID << 4. For the n-th completion the NIC fills entry
 *        n & (cqe_cnt-1) and stores op_own last (release) as
 *        (opcode << 4) | ((n / cqe_cnt) & 1): the mlx5 owner-bit rule. An
 *        entry at consumer index ci belongs to software when its opcode is
 *        not MLX5_CQE_INVALID and its owner bit == (ci / cqe_cnt) & 1;
 *        rxs_cq_peek does that check with an acquire load.
 *        Good completion: opcode MLX5_CQE_RESP_SEND, byte_cnt = frame
 *        bytes, wqe_counter = the consumed WQE's 16-bit counter,
 *        l4_hdr_type_etc = (RXS_CQE_L4_UDP << 4) |
 *        (MLX5_CQE_L3_HDR_TYPE_IPV4 << 2) (what the parser found; the
 *        PMD's packet-type table is indexed by it), the flow's Toeplitz
 *        hash at RXS_CQE_HASH_OFF (be32, as mlx5 writes rx_hash_result)
 *        and its hash type byte after it.
 *        Error completion: opcode MLX5_CQE_RESP_ERR, laid out as struct
 *        mlx5_err_cqe (syndrome MLX5_CQE_SYNDROME_LOCAL_PROT_ERR for a bad
 *        lkey or an address range outside the region,
 *        MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR when the segments are too short
 *        for the frame), wqe_counter set, nothing written to any buffer.
 *        Unlike hardware the RQ keeps working after an error CQE.
 *   Compressed sessions (params.cqe_comp, what mlx5 hardware writes when
 *        the PMD enables CQE compression): when one NIC burst completes
 *        k >= 2 good packets on a queue in consecutive CQ entries that do
 *        not cross the CQ's end, the k entries S..S+k-1 hold one session:
 *        entry S is the title, a CQE64 with the fields the k completions
 *        share (opcode, l4_hdr_type_etc, sop_drop_qpn, wqe_counter of the
 *        first), byte_cnt = k, op_own = (RESP_SEND << 4) |
 *        (RXS_CQE_FORMAT_COMPRESSED << 2) | owner, stored last (release).
 *        Per completion i (0..k-1) an 8-byte struct rxs_mini_cqe8 {hash,
 *        byte_cnt}, eight per 64-byte entry: minis 0-7 in entry S+1, minis
 *        8j..8j+7 in entry S+8j (the second array sits 7 entries after the
 *        first, later ones 8 apart, as DPDK's mlx5_rx_poll_len reads them);
 *        the session's other entries are left untouched. A consumer takes
 *        k completions from the session (rxs_mini_cqe) and must store
 *        op_own = RXS_CQE_INVALIDATE into the entries it consumed before
 *        its consumer index passes them, as the PMD does: mini arrays
 *        carry arbitrary bytes where op_own sits. Error completions are
 *        never compressed. Off by default (consumers that do not
 *        decompress see only plain CQEs).
 *   CQ doorbell record  cq_dbrec[RXS_CQ_SET_CI] = htobe32(ci & 0xffffff):
 *        the consumer index; store it with rxs_cq_set_ci (release). The NIC
 *        reads it to know the CQ has room; a packet that finds the CQ full
 *        is dropped and counted in out_of_buffer (and in cq_full).
 *        Update the CQ consumer index before re-posting the WQEs of the
 *        completions you consumed, as mlx5 drivers do.
 *
 * Memory ordering (correct on arm64 as on x86; the C11 forms of what the
 * drivers do with rte_io_wmb / udma_to_device_barrier and rte_io_rmb /
 * udma_from_device_barrier): engine -> NIC: WQE stores, then release
 * store of the RQ doorbell record; the NIC acquire-loads it before
 * reading WQEs. NIC -> engine: buffer, CQE field and mini-CQE stores,
 * then release store of op_own (a session's title last); the engine
 * acquire-loads op_own before reading the CQE, its minis or the buffers.
 * Engine -> NIC for CQ space: CQE reads and invalidation stores, then the
 * release store of the CQ doorbell record; the NIC acquire-loads it
 * before reusing those entries.
 *
 * Packets: Ethernet II / IPv4 / UDP (UDP checksum 0), then the rxray tag
 * at RXS_TAG_OFF: be64 per-queue sequence number, be16 queue, be16
 * RXS_TAG_MAGIC. The sequence number counts every packet OFFERED to that
 * queue from 0 (dropped ones too), so a consumer sees strictly increasing
 * numbers and the gaps add up to that queue's out_of_buffer + errors.
 * RXS_HDR_LEN (54) bytes of header; frames are >= RXS_MIN_FRAME (64) and,
 * with two segments, SGE0 must take at least RXS_HDR_LEN bytes (split).
 * Scatter follows the segments' byte_count in order: SGE0 gets
 * min(frame, byte_count0), SGE1 the rest.
 * The header region = what lands in SGE0 when there are two segments, else
 * the first min(frame, 64) bytes; it is always fully written (hdr_write).
 * The rest is the payload region: none (not touched), stamp (the be64
 * sequence number at its first byte), full (every byte written).
 * DMA placement: cache = plain stores; memory = stores, then the header
 * region's cache lines are flushed (clflush / dc civac) so the consumer's
 * first read (hdr_read) misses to memory like a non-DDIO DMA write.
 *
 * Flows: `flows` UDP flows (source port varies); each packet goes to flow
 * n % flows and to queue toeplitz(5-tuple, default RSS key) % queues.
 * Queue q offers the flows hashed to it, in flow order, at rate x (its
 * flows) / flows (every flow keeps rate / flows), and its share of
 * max_packets likewise. A queue that got no flow offers nothing.
 *
 * Arrivals (the same for every writer count, so the writer count
 * changes the NIC's capacity and never what the receiver sees): a
 * queue's packets come in trains of `train` packets (default RXS_BURST),
 * one train every train / (queue's rate) seconds, and inside a train one
 * packet per wire time at the line rate `line_gbps` (default 400 Gb/s, a
 * ConnectX-7 port: frame + 24 bytes of preamble, FCS and gap a packet, so
 * 45.96 Mpps at 1064 B). Packet j of the phase is due at
 * start + (j / train) x train-interval + (j % train) x wire-time. Rate 0
 * ("max") or a rate above the line rate: the line rate, and unpaced, a
 * packet that found no WQE takes the writer's delivery time per packet
 * (a slow consumer does not make the NIC "offer" hundreds of Mpps of
 * drops). A due packet that finds no posted WQE (or no CQ room) is an
 * out_of_buffer.
 *
 * DMA writers: `threads` NIC threads (groups), each of `writers` DMA
 * writer threads (thread index = group * writers + writer, each pinned
 * to its own core). Group g owns the queues q % threads == g; every
 * writer of the group writes all of them, as a NIC's many DMA engines
 * write one queue. One writer runs the same path as several. A writer
 * claims the next train of a queue (never across a train's end) with one
 * compare-and-swap on the queue's producer word once the train begins
 * within the writer's lead (the time it takes that writer to write a
 * train, a moving average: it writes the train before it arrives, as the
 * data is invisible until its CQE); that hands it the packets' sequence numbers and the
 * WQEs (and as many CQ entries) for the first m of them; the other k - m
 * found no posted WQE (or no CQ room) and are out_of_buffer. It writes
 * the run's headers, payloads, CQE bodies and minis (with compression on
 * a run is one or more whole sessions, never shared with another
 * writer), then stores each entry's op_own itself, in CQ order, not
 * before the packet is due (a session's title when its last packet is):
 * each CQE line is written whole, owner bit last, by one core, with no
 * lock and no second agent. Entries of different writers may become
 * visible out of CQ order; the consumer polls in order (ownership at its
 * consumer index), so it sees them in order, as with a NIC. A writer
 * that owns a run with a completion-gate ticket outstanding (GPU copies
 * in flight) keeps it, up to NIC_RUNS_MAX, and publishes it once the
 * ticket is done; it never waits for one and claims the next meanwhile.
 * A descheduled writer holds back, in order, the packets behind its run.
 * The limits on the counts (a run of RXS_MIN_RUN WQEs a writer, at most
 * RXS_MAX_WRITERS): rxs_threads_check, their only copy.
 *
 * Late: a NIC does not fall behind the wire, a software one can (a writer
 * descheduled, steal). Paced, each queue has a late limit: a tenth of
 * the time its ring covers at its rate (ring x its packet interval), at
 * least 10 us. A drop is a late_drop when, at the claim that found no
 * WQE, the oldest packet the NIC had not yet published on that queue
 * (any writer's run, or this claim's first dropped packet) was due more
 * than the limit ago: the receiver was waiting on the NIC, or was handed
 * overdue packets in a burst, so the loss is the generator's. Each
 * writer also keeps the most any of its runs was published after its
 * last packet was due, and how many runs went out later than the limit.
 * A run with late drops is disturbed, with a reason naming the NIC
 * (rxs_nic_validity_add). Unpaced queues have no schedule to be late on.
 *
 * NIC probes (role "nic", one per thread, on the thread's core):
 * hdr_write (WQE fetch, SGE checks, header bytes, flush), payload_write,
 * cqe_write (CQE bodies, minis and the op_own stores), idle (waiting for a
 * train, or for a packet's wire time inside one, and runs in which no
 * packet found a buffer). Injection applies to the three write stages only. A probe's
 * packet count is the packets its thread offered.
 *
 * Lifecycle: rxs_nic_open -> rxs_mr_reg ... -> engine posts WQEs ->
 * rxs_nic_start -> engine polls until rxs_nic_done() and then drains its
 * CQs -> rxs_nic_join -> rxs_nic_counters / rxs_nic_stats /
 * rxs_nic_result_add -> rxs_nic_free. The NIC ends on its own after
 * `seconds` or `max_packets` (all threads together), or when *stop becomes
 * nonzero, or on rxs_nic_stop; it is done when every thread is. Invariant per queue: offered == received + out_of_buffer
 * (received = CQEs written, error CQEs included; errors is a subset).
 *
 * Error rule (rxray/util.h): 0 or -errno with a line in err when given;
 * the constructor is rxs_nic_open(..., struct rxs_nic **out, err, errlen).
 */
#ifndef RXRAY_SIMNIC_H
#define RXRAY_SIMNIC_H

#include <endian.h>
#include <infiniband/mlx5dv.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rxray/core.h"
#include "rxray/probe.h"
#include "rxray/result.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RXS_MAX_QUEUES RX_MAX_QUEUES
#define RXS_MAX_MRS 64
#define RXS_MAX_RING 32768u   /* WQEs per RQ (16-bit counters) */
#define RXS_MAX_SGES 2u
#define RXS_MIN_FRAME 64u
#define RXS_MAX_FRAME 9216u
#define RXS_BURST 32u
#define RXS_MAX_WRITERS 16u   /* DMA writers per NIC thread */
#define RXS_AUTO_WRITERS 8u   /* auto takes no more writers per NIC thread */
#define RXS_MIN_RUN 8u        /* WQEs a writer's run needs, at least */
#define RXS_MIN_LINE_GBPS 1.0    /* line rate range (device option line=) */
#define RXS_MAX_LINE_GBPS 1600.0
#define RXS_TAG_OFF 42u       /* 14 eth + 20 ipv4 + 8 udp */
#define RXS_SEQ_OFF RXS_TAG_OFF
#define RXS_QUEUE_OFF (RXS_TAG_OFF + 8u)
#define RXS_MAGIC_OFF (RXS_TAG_OFF + 10u)
#define RXS_TAG_MAGIC 0x5258u /* "RX" */
#define RXS_HDR_LEN 54u
#define RXS_SINGLE_HDR 64u    /* header region size with one segment */
#define RXS_UDP_DST_PORT 4791u
/* CQ doorbell record word of the consumer index (rdma-core mlx5 provider
 * MLX5_CQ_SET_CI; not in the public mlx5dv.h). */
#define RXS_CQ_SET_CI 0
/* CQE format field (op_own bits 3:2) of a compressed session's title, and
 * the op_own a consumer stores into entries it consumed from a session
 * (mlx5 PRM; DPDK's MLX5_COMPRESSED / MLX5_CQE_INVALIDATE). */
#define RXS_CQE_FORMAT_COMPRESSED 3u
#define RXS_CQE_INVALIDATE ((uint8_t)(MLX5_CQE_INVALID << 4))
#define RXS_MINI_PER_CQE 8u
/* Byte offsets in a CQE64 of the RSS hash result (be32) and hash type
 * (inside struct mlx5_cqe64's reserved bytes in rdma-core's header). */
#define RXS_CQE_HASH_OFF 12u
#define RXS_CQE_HASH_TYPE_OFF 16u
/* hash type byte: IPv4 + UDP ports hashed */
#define RXS_CQE_HASH_TYPE_IPV4_UDP 0x26u
/* l4_hdr_type_etc bits 6:4 (the mlx5 PRM's l4_hdr_type; rdma-core's header
 * names only the L3 values, bits 3:2) */
#define RXS_CQE_L4_NONE 0u
#define RXS_CQE_L4_TCP 1u
#define RXS_CQE_L4_UDP 2u

struct rxs_nic; /* opaque */

struct rxs_params {
	uint32_t queues;        /* 1..RXS_MAX_QUEUES */
	uint32_t ring;          /* WQEs per RQ, power of two, <= RXS_MAX_RING */
	uint32_t cq_depth;      /* CQEs per CQ, power of two; 0 = ring */
	uint32_t sges;          /* data segments per WQE: 1 or 2 */
	uint32_t frame;         /* bytes per packet, RXS_MIN_FRAME..RXS_MAX_FRAME */
	uint32_t flows;         /* UDP flows spread over queues; 0 = 64 * queues */
	double rate_pps;        /* offered rate, 0 = max */
	double seconds;         /* run length; 0 = until stopped/max_packets */
	uint64_t max_packets;   /* stop after offering this many; 0 = no limit */
	enum rx_dma dma;
	enum rx_payload payload;
	uint32_t threads;       /* NIC threads, 1..queues; 0 = 1 */
	int core;               /* NIC thread 0's core, -1 = unpinned */
	int thread_core[RXS_MAX_QUEUES]; /* core of thread t >= 1 (-1 =
				 * unpinned); [0] unused: thread 0 is on core */
	unsigned sample_shift;  /* probe sampling (full probe mode) */
	uint64_t inject[RXP_ST_COUNT]; /* NIC stages only */
	bool inject_ab;		       /* inject one lap in four (rxp_probe_set_inject_ab) */
	uint32_t op_delay_hdr;  /* --op-delay hdr_write=K: cycles per header (0 off) */
	const volatile sig_atomic_t *stop; /* optional external stop flag */
	bool cqe_comp;          /* write compressed sessions (off by default) */
	/* DMA writers per NIC thread; 0 = 1 */
	uint32_t writers;
	/* what the run asked for, 0 = auto (rxs_params_of_run; the result's
	 * record: rxs_nic_result_add) */
	struct rx_dev_threads asked;
	/* Arrival pattern: packets per train (1..RXS_BURST, 0 = RXS_BURST)
	 * and the line rate inside a train (Gb/s, 0 = 400) */
	uint32_t train;
	double line_gbps;
	/* Completion gate: a run's completions are published
	 * only once its gate ticket is done. gate_polls > 0: a host run's
	 * ticket is done gate_polls polls after it was issued. gate_fn
	 * (tests): ticket t of the writer with thread index w is done when
	 * gate_fn(gate_arg, w) >= t (tickets count each writer's runs from
	 * 1). */
	uint32_t gate_polls;
	uint64_t (*gate_fn)(void *arg, uint32_t writer);
	void *gate_arg;
	/* Fault injection (tests): each writer's n-th claim takes its WQEs
	 * without advancing the producer, so the next claim uses them again
	 * (0 = off). The counters and consumer checks must catch it. */
	uint32_t fault_dup_claim;
	/* Fault injection (tests): each writer's n-th claim publishes its
	 * CQEs before it writes the run's headers and payloads, which it
	 * writes only once the consumer has passed them (0 = off). A consumer
	 * must catch the stale data. */
	uint32_t fault_early_cqe;
	/* Fault injection (tests; `sim:fault=publish_before_landing` sets
	 * 64): completions name data that has not landed. Test gates
	 * (gate_fn, gate_polls): every run is published without waiting for
	 * its gate ticket. GPU payloads: every n-th run's copies are never
	 * issued, and its completions go out as if they had landed. A
	 * consumer must catch the stale data (0 = off). */
	uint32_t fault_publish_early;
	/* Fault injection (tests; `sim:fault=writer_stall` sets 64 and
	 * 20000): the writer of the first run, from the n-th train of a
	 * queue on (this phase's, from 1), that found a WQE stops for
	 * fault_stall_us between writing that run and publishing it, as a
	 * descheduled writer does; once a queue and phase (0 = off). The
	 * drops it causes must count as late_drops. */
	uint32_t fault_stall_train;
	uint32_t fault_stall_us;
	/* GPU payloads: copies started by a kernel launch per submit instead
	 * of the resident copy kernel (`sim:gpu_dma=launch`; rxray/gpu.h) */
	bool gpu_dma_launch;
};

/* One completion of a compressed session (the mlx5 "mini CQE", hash
 * result format): 8 bytes, big-endian fields. */
struct rxs_mini_cqe8 {
	__be32 rx_hash_result;
	__be32 byte_cnt;
};

/* Per-queue counters (snapshots; exact after rxs_nic_join). */
struct rxs_counters {
	uint64_t offered;       /* packets due on this queue */
	uint64_t received;      /* CQEs written (good + error) */
	uint64_t out_of_buffer; /* due with no WQE posted, or CQ full */
	uint64_t cq_full;       /* subset of out_of_buffer: CQ had no room */
	uint64_t errors;        /* error CQEs written (subset of received) */
	uint64_t bytes;         /* frame bytes delivered in good CQEs */
	uint64_t dbrec_reads;   /* RQ doorbell-record fetches (at most one per
				 * burst while the RQ is dry) */
	uint64_t late_drops;    /* subset of out_of_buffer: dropped while the
				 * NIC itself was behind its schedule on the
				 * queue ("Late", above): the generator's loss,
				 * not the receiver's */
};

/* The whole NIC's figures, all threads together (after rxs_nic_join). */
struct rxs_stats {
	double seconds;             /* earliest thread start to latest stop */
	double target_pps;          /* params.rate_pps (0 = max) */
	double achieved_pps;        /* offered (all queues) / seconds */
	double busy_cycles_per_pkt; /* non-idle cycles of all threads / CQEs */
	/* The NIC, not the engine, set the pace: with a target rate, achieved
	 * < 98% of it; at max rate, out_of_buffer <= 0.1% of offered (the
	 * engine kept up with all the NIC could make). */
	bool generator_limited;
	uint64_t bursts;            /* all threads */
	uint32_t threads;
};

/* One NIC thread's figures (after rxs_nic_join). offered, received and
 * out_of_buffer are the thread's own tally (kept apart from the per-queue
 * counters, so summing them checks that a thread touched only its queues);
 * cq_full, errors, bytes are this writer's part of its queues'; flows
 * are its group's, target_pps the group's share / writers. */
struct rxs_thread_stats {
	int core;                   /* -1 = unpinned */
	uint32_t queues;            /* queues it owns (q % threads == t) */
	uint32_t flows;             /* flows it offers */
	double target_pps;          /* its share of the rate (0 = max) */
	double seconds;             /* its first due packet to its stop */
	double achieved_pps;        /* offered / seconds */
	double busy_cycles_per_pkt; /* its non-idle cycles / its CQEs */
	uint64_t bursts;
	struct rxs_counters cnt;
};

/* What an engine drives: the same fields mlx5dv_rwq / mlx5dv_cq expose. */
struct rxs_ring {
	void *rq_buf;           /* wqe_cnt * stride bytes, 64-byte aligned */
	uint32_t wqe_cnt;       /* power of two */
	uint32_t stride;        /* bytes per WQE: 16 * sges rounded to pow2 */
	uint32_t sges;          /* data segments per WQE */
	__be32 *rq_dbrec;       /* [MLX5_RCV_DBR] = posted counter */
	struct mlx5_cqe64 *cq_buf;
	uint32_t cqe_cnt;       /* power of two */
	uint32_t cqe_shift;     /* log2(cqe_cnt) */
	__be32 *cq_dbrec;       /* [RXS_CQ_SET_CI] = consumer index */
};

/* A run's defaults (rx_config_defaults: ring 8192, 2 s, sampled laps
 * every 2^6 packets in the full probe mode, ...), one NIC thread of one
 * writer, unpinned. A caller measuring the writers alone sets
 * sample_shift 0. */
void rxs_params_defaults(struct rxs_params *p);
/*
 * The NIC parameters of a run: queues, ring (rxs_ring_wqes), sges (hds:
 * 2), frame, rate, seconds, dma, payload, NIC-stage injections, sample
 * shift; then the device string's options ("sim" or
 * "sim:rate=12M,flows=256,cq=16384,nics=2,writers=4"; rate= overrides the
 * config's), the counts asked for into p->asked (rxs_dev_ops.check's
 * rules), and the threads, writers and their cores from the placement pl
 * (NULL: auto is 1, unpinned). caps NULL: the ring is c->ring. 0, or
 * -EINVAL with "device: ...", "nic-threads: ..." or "dma-writers: ...".
 */
int rxs_params_of_run(const struct rx_config *c, const struct rx_caps *caps,
		      const struct rx_placement *pl, struct rxs_params *p, char *err,
		      size_t errlen);
/*
 * The rules on the NIC's thread counts, the only copy: writers
 * 1..RXS_MAX_WRITERS, NIC threads <= queues, writers x RXS_MIN_RUN <=
 * the ring's WQEs, NIC threads x writers <= RXS_MAX_QUEUES. A count of 0
 * is auto, not known yet: its rules take 1. from_dev (RXS_ASKED_*) names
 * the counts the device string asked for, so the line names what the
 * user wrote ("device: writers=..." or "dma-writers: ..."). 0, or -EINVAL.
 */
#define RXS_ASKED_NICS_DEV 0x1u    /* nics= of the device string */
#define RXS_ASKED_WRITERS_DEV 0x2u /* writers= of the device string */
int rxs_threads_check(uint32_t queues, uint32_t wqes, const struct rx_dev_threads *t,
		      unsigned from_dev, char *err, size_t errlen);
/* The WQEs the NIC's RQ gets: c->ring, halved in hds when the driver
 * counts descriptors in segments (caps->rq_segments: the mlx5 PMD). */
uint32_t rxs_ring_wqes(const struct rx_config *c, const struct rx_caps *caps);
/* The software NIC's device ops (core.h struct rx_dev_ops): its checks,
 * its sizing of auto, and its record's reader. rxs_caps sets caps->dev
 * to it. */
extern const struct rx_dev_ops rxs_dev_ops;
/* The NIC thread and writer counts as r's "nic" record has them (rxs_dev_ops.record):
 * the {"asked","resolved","actual"} objects, or the numbers results had
 * before them. 0, or -ENOENT when r has no "nic". */
int rxs_nic_record(const struct rxr_result *r, struct rx_dev_record *out);
/*
 * Before/after switches for bench/sim_fidelity: true when the comma list
 * in the environment variable RXRAY_SIM_LEGACY names `what`, i.e. the
 * caller should restore the behaviour it had before a fidelity fix
 * (names: dbrec, state (NIC); nextnull, noprefetch, wqecheck, ptype,
 * mrsplit, ringwqes, phased (dpdk sim)). Read once at setup, never on
 * the packet path.
 */
bool rxs_sim_legacy(const char *what);
/* Caps of the software NIC (max ring, sges, queues, frame, split), with
 * caps->dev = &rxs_dev_ops. */
void rxs_caps(struct rx_caps *caps);

/*
 * Create the NIC: rings, flow table, one probe per thread. Nothing runs
 * yet. Returns 0 with the NIC in *out (the caller owns it:
 * rxs_nic_free), or with *out NULL and a line in err: -EINVAL bad params
 * (e.g. threads > queues), -ENOMEM, or the clock's -errno.
 */
int rxs_nic_open(const struct rxs_params *p, struct rxs_nic **out, char *err, size_t errlen);
/* Stops (if running), joins, frees everything. NULL ok. */
void rxs_nic_free(struct rxs_nic *n);
const struct rxs_params *rxs_nic_params(const struct rxs_nic *n);

/* Ring view of queue q (0..queues-1). 0 or -EINVAL. */
int rxs_nic_ring(struct rxs_nic *n, uint32_t q, struct rxs_ring *out);

/*
 * Register [addr, addr+len) -> *lkey (never MLX5_INVALID_LKEY). Only while
 * the NIC is not running (-EBUSY). -ENOSPC past RXS_MAX_MRS, -EINVAL for a
 * NULL/empty range.
 */
int rxs_mr_reg(struct rxs_nic *n, void *addr, size_t len, uint32_t *lkey);
/* The same for GPU memory (a device pointer): the NIC stages what it writes
 * there in pinned host memory and copies it with one scatter kernel per
 * burst before the burst's completions (stage payload_dma). -ENOTSUP in a
 * build without CUDA. */
int rxs_mr_reg_gpu(struct rxs_nic *n, void *addr, size_t len, uint32_t *lkey);
/* Invalidate lkey (later SGEs with it get error CQEs). Not while running. */
int rxs_mr_dereg(struct rxs_nic *n, uint32_t lkey);

/* Start the NIC threads (each pins itself to its core). 0 or -errno; on
 * failure no thread is left running. */
int rxs_nic_start(struct rxs_nic *n);
/* Ask the NIC to stop offering packets (async-signal-safe store). */
void rxs_nic_stop(struct rxs_nic *n);
/*
 * After rxs_nic_join, ready the NIC for another phase of `seconds` (the
 * measured phase after a warm-up): counters and the clock start again;
 * rings, posted WQEs, CQ positions and sequence numbers carry on. Start
 * it with rxs_nic_start. 0, or -EINVAL when it was not started and joined.
 */
int rxs_nic_rearm(struct rxs_nic *n, double seconds);
/*
 * True once the NIC has offered its last packet and every CQE it will
 * ever write is visible (acquire). An engine polls until this is true,
 * then drains its CQs once more and is done. Cheap: one acquire load of a
 * word on a cache line of its own that the NIC threads write only when
 * they end, so polling it while the NIC runs costs no cross-core miss
 * (call it after empty polls anyway: it is not free of a load).
 */
bool rxs_nic_done(const struct rxs_nic *n);
/* Wait for every NIC thread. 0, or the first failing thread's -errno
 * (e.g. pinning). */
int rxs_nic_join(struct rxs_nic *n);

/* Counters of queue q, or totals when q == UINT32_MAX. */
void rxs_nic_counters(const struct rxs_nic *n, uint32_t q, struct rxs_counters *out);
void rxs_nic_stats(const struct rxs_nic *n, struct rxs_stats *out);
/* Number of NIC threads: params.threads x params.writers (each writer
 * is a thread with its probe and figures). */
uint32_t rxs_nic_threads(const struct rxs_nic *n);
/* Figures of NIC thread t (0..threads-1); zeroed for a bad t. */
void rxs_nic_thread_stats(const struct rxs_nic *n, uint32_t t, struct rxs_thread_stats *out);
/* NIC thread 0's probe (role "nic"). Read it after rxs_nic_join. */
const struct rxp_probe *rxs_nic_probe(const struct rxs_nic *n);
/* NIC thread t's probe, NULL for a bad t. Read it after rxs_nic_join. */
const struct rxp_probe *rxs_nic_thread_probe(const struct rxs_nic *n, uint32_t t);
/*
 * Add the NIC to a result: one thread entry per NIC thread (role "nic"),
 * and r->extra "nic": {target_pps, achieved_mpps, seconds,
 * busy_cycles_per_packet, generator_limited, dma, payload, flows, sges,
 * cq_depth, core (thread 0's), totals, per-queue counters, nic_threads
 * and dma_writers (each {"asked": N or "auto", "resolved", "actual"}: the
 * one record of them), writer_threads, train, line_gbps, line_mpps,
 * threads: [{thread, group, writer, core, queues: [q...], flows, target_pps,
 * achieved_mpps, seconds, busy_cycles_per_packet, bursts, offered,
 * received, out_of_buffer}]}. Sets r->c.offered and r->c.out_of_buffer
 * from the NIC totals (the engine adds received, errors and its own
 * drops). When r->validity is set (the run sequence sets it for the
 * measured phase), each NIC thread's window goes into it too
 * (rxs_nic_validity_add). 0, -ENOMEM, or -ENOSPC (validity record full).
 */
int rxs_nic_result_add(const struct rxs_nic *n, struct rxr_result *r);
/*
 * Add each NIC thread's validity window (role "nic": context switches,
 * migrations and run-queue wait over its generator loop in the last
 * phase, taken on the thread) to v, so a preempted generator flags the
 * trial as a preempted worker does. Call after rxs_nic_join. Threads that
 * did not reach their loop (pinning failed) are left out. v NULL: nothing.
 * Returns the number of windows added, or -ENOSPC (v full).
 */
int rxs_nic_validity_add(const struct rxs_nic *n, struct rxr_validity *v);

/* ------------------------------------------------- engine-side helpers */

/* Data segment i of WQE idx (idx is masked). */
static inline struct mlx5_wqe_data_seg *rxs_wqe_seg(const struct rxs_ring *r, uint32_t idx,
						    uint32_t i)
{
	char *w = (char *)r->rq_buf + (size_t)(idx & (r->wqe_cnt - 1)) * r->stride;
	return (struct mlx5_wqe_data_seg *)w + i;
}

static inline void rxs_seg_set(struct mlx5_wqe_data_seg *s, const void *addr, uint32_t len,
			       uint32_t lkey)
{
	s->byte_count = htobe32(len);
	s->lkey = htobe32(lkey);
	s->addr = htobe64((uint64_t)(uintptr_t)addr);
}

/* Publish `posted` (running count of posted WQEs) after writing them. */
static inline void rxs_rq_doorbell(const struct rxs_ring *r, uint32_t posted)
{
	__atomic_store_n(&r->rq_dbrec[MLX5_RCV_DBR], htobe32(posted & 0xffffu),
			 __ATOMIC_RELEASE);
}

/* The CQE at consumer index ci when software owns it, else NULL. */
static inline struct mlx5_cqe64 *rxs_cq_peek(const struct rxs_ring *r, uint32_t ci)
{
	struct mlx5_cqe64 *cqe = &r->cq_buf[ci & (r->cqe_cnt - 1)];
	uint8_t op = __atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE);
	if ((op >> 4) == MLX5_CQE_INVALID || (op & MLX5_CQE_OWNER_MASK) != ((ci >> r->cqe_shift) & 1))
		return NULL;
	return cqe;
}

static inline void rxs_cq_set_ci(const struct rxs_ring *r, uint32_t ci)
{
	__atomic_store_n(&r->cq_dbrec[RXS_CQ_SET_CI], htobe32(ci & 0xffffffu), __ATOMIC_RELEASE);
}

static inline uint8_t rxs_cqe_opcode(const struct mlx5_cqe64 *c)
{
	return (uint8_t)(c->op_own >> 4);
}

/* True when c (owned by software) is a compressed session's title. */
static inline bool rxs_cqe_compressed(const struct mlx5_cqe64 *c)
{
	return ((c->op_own >> 2) & 3u) == RXS_CQE_FORMAT_COMPRESSED;
}

/* Completions in the session whose title is c (its byte_cnt). */
static inline uint32_t rxs_cqe_session_len(const struct mlx5_cqe64 *c)
{
	return be32toh(c->byte_cnt);
}

/* Mini-CQE i of the session whose title is at consumer index title_ci. */
static inline const struct rxs_mini_cqe8 *rxs_mini_cqe(const struct rxs_ring *r,
							uint32_t title_ci, uint32_t i)
{
	uint32_t slot = title_ci + (i < RXS_MINI_PER_CQE ? 1u : (i & ~(RXS_MINI_PER_CQE - 1)));
	const struct rxs_mini_cqe8 *a =
		(const struct rxs_mini_cqe8 *)(const void *)&r->cq_buf[slot & (r->cqe_cnt - 1)];
	return &a[i & (RXS_MINI_PER_CQE - 1)];
}

/* The RSS hash the NIC wrote into a (plain or title) CQE. */
static inline uint32_t rxs_cqe_hash(const struct mlx5_cqe64 *c)
{
	uint32_t v;
	__builtin_memcpy(&v, (const char *)c + RXS_CQE_HASH_OFF, sizeof(v));
	return be32toh(v);
}

/* Give entry ci back to the NIC's side (a consumed session entry). */
static inline void rxs_cqe_invalidate(const struct rxs_ring *r, uint32_t ci)
{
	__atomic_store_n(&r->cq_buf[ci & (r->cqe_cnt - 1)].op_own, RXS_CQE_INVALIDATE,
			 __ATOMIC_RELAXED);
}

/* Error CQE view: syndrome byte (MLX5_CQE_SYNDROME_*). */
static inline uint8_t rxs_cqe_syndrome(const struct mlx5_cqe64 *c)
{
	return ((const struct mlx5_err_cqe *)(const void *)c)->syndrome;
}

/* hdr_read: the tag fields of a received header (SGE0 bytes). */
static inline uint64_t rxs_hdr_seq(const void *hdr)
{
	uint64_t v;
	__builtin_memcpy(&v, (const char *)hdr + RXS_SEQ_OFF, sizeof(v));
	return be64toh(v);
}
static inline uint16_t rxs_hdr_queue(const void *hdr)
{
	uint16_t v;
	__builtin_memcpy(&v, (const char *)hdr + RXS_QUEUE_OFF, sizeof(v));
	return be16toh(v);
}
static inline bool rxs_hdr_valid(const void *hdr)
{
	uint16_t v;
	__builtin_memcpy(&v, (const char *)hdr + RXS_MAGIC_OFF, sizeof(v));
	return be16toh(v) == RXS_TAG_MAGIC;
}

#ifdef __cplusplus
}
#endif
#endif /* RXRAY_SIMNIC_H */
