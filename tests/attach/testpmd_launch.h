/* SPDX-License-Identifier: MIT */
/*
 * Start and stop a real dpdk-testpmd, rxonly on the net_null PMD, with
 * --no-huge --no-pci and a unique --file-prefix (so its telemetry socket
 * is /var/run/dpdk/<prefix>/dpdk_telemetry.v2). Shared by the attach
 * tests and bench_attach_overhead. The child gets PR_SET_PDEATHSIG, so it
 * dies with the test even when the test itself is killed.
 */
#ifndef RXRAY_TESTPMD_LAUNCH_H
#define RXRAY_TESTPMD_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct tpmd {
	pid_t pid;        /* 0: not running */
	char prefix[64];  /* EAL --file-prefix */
	char log[256];    /* its stdout + stderr (removed by tpmd_stop once it ran) */
	int ready;        /* started and forwarding */
};

/*
 * Why testpmd cannot run here (NULL: it can): not root, no dpdk-testpmd,
 * no net_null PMD.
 */
const char *tpmd_unavailable(void);

/*
 * Start testpmd on lcores 0 (main) and 1 (forwarding, "rte-worker-1").
 * extra: more testpmd application arguments ("--mbcache=0") or NULL.
 * Waits until the telemetry socket and the worker thread exist and port 0
 * has received packets (forwarding has started).
 * 0, or -errno with why filled.
 */
int tpmd_start(struct tpmd *t, const char *tag, const char *extra, char *why, size_t len);

/*
 * Packets port 0 has received so far (its telemetry socket's
 * /ethdev/stats,0 ipackets), or -1 when it cannot be asked.
 */
long long tpmd_rx_packets(const struct tpmd *t);

/* Wait (at most secs) until port 0 has received more than n packets; whether it did. */
bool tpmd_wait_rx_past(const struct tpmd *t, long long n, double secs);

/* SIGINT, then SIGKILL after 3 s; reap; remove its runtime directory. */
void tpmd_stop(struct tpmd *t);

/* tid of its rte-worker-1 thread, or -1. */
int tpmd_worker_tid(const struct tpmd *t);

/*
 * testpmd's own rate: the median of the "Rx-pps:" lines its periodic
 * statistics printed after byte offset from of its log (0 if none).
 * *end_off receives the log's current size.
 */
double tpmd_rx_pps_median(const struct tpmd *t, long from, long *end_off, int *nlines);

/* CPU time (ns) its rte-worker-1 thread has used so far (schedstat), or 0. */
unsigned long long tpmd_worker_cpu_ns(const struct tpmd *t);

/* Size of its log now. */
long tpmd_log_size(const struct tpmd *t);

#endif
