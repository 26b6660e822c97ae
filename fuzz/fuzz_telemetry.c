/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the DPDK telemetry client's reply handling, through
 * rxb_tele_snapshot (port list, per-port stats/xstats/info, mempool list
 * and info). The client is built from its own source here so the harness
 * can hand it a socket: one end of a SOCK_SEQPACKET pair (the socket type
 * DPDK's telemetry uses) on which the input is queued as the server's
 * replies, one message per NUL-separated piece. The client's end is
 * non-blocking: once the replies run out, a query fails as a dead server
 * would, instead of waiting.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../attach/attach_telemetry.c"

#define MAX_REPLIES 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rxb_tele tl;
	static struct rxb_tele_snap snap;
	int sv[2];
	if (!tl.buf && !(tl.buf = malloc(TELE_BUF)))
		abort();
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		abort();
	int sz = 1 << 20;
	setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	const char *p = (const char *)data, *end = p + size;
	for (int n = 0; p < end && n < MAX_REPLIES; n++) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		size_t len = nul ? (size_t)(nul - p) : (size_t)(end - p);
		if (len && send(sv[1], p, len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
			break;
		p += len + 1;
	}
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	tl.fd = sv[0];
	rxb_tele_snapshot(&tl, &snap);
	close(sv[0]);
	close(sv[1]);
	tl.fd = -1;
	return 0;
}
