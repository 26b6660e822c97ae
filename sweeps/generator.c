/* SPDX-License-Identifier: MIT */
/*
 * A run driven by an external generator (rxray/generator.h): templates,
 * the generator's process and its monitor, the loss counters before the
 * port, and the account against the generator's count.
 *
 * The run sequence (engines/core run.c) is not changed for it: the
 * generator rides on the run's watch (rx_run_watch: started once the
 * port receives, end once the rx loops are done, the port still open)
 * and ends the measured phase through the run's stop flag, which the
 * monitor sets once the generator exited and the port drained.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <math.h>
#include <net/if.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rxray/generator.h"
#include "rxray/sweep.h"
#include "rxray/result.h"
#include "rxray/util.h"
#include "spec_int.h"

/* The receiving interface counts as quiet after this long unchanged. */
#define GEN_QUIET_S 0.05
/* ... and the wait for it ends after this long whatever it does. */
#define GEN_QUIET_MAX_S 2.0
/* The count command gets this long. */
#define GEN_COUNT_TIMEOUT_S 20.0

void sweep_gen_defaults(struct sweep_gen *g)
{
	memset(g, 0, sizeof(*g));
	snprintf(g->kind, sizeof(g->kind), "command");
	g->flows = 1;
	g->drain_s = SWEEP_GEN_DRAIN_S;
}

struct gen_vals {
	const struct sweep_gen *g;
	const struct sweep_gen_ask *a;
};

static int gen_field(const char *nm, size_t nl, char *piece, size_t len, void *ctx)
{
	const struct sweep_gen *g = ((const struct gen_vals *)ctx)->g;
	const struct sweep_gen_ask *a = ((const struct gen_vals *)ctx)->a;
	const double rate = a->rate_pps > 0 ? a->rate_pps : 0;
	if (sweep_tmpl_is(nm, nl, "rate_pps"))
		snprintf(piece, len, "%.0f", rate);
	else if (sweep_tmpl_is(nm, nl, "frame"))
		snprintf(piece, len, "%u", a->frame);
	else if (sweep_tmpl_is(nm, nl, "seconds"))
		snprintf(piece, len, "%g", a->seconds);
	else if (sweep_tmpl_is(nm, nl, "flows"))
		snprintf(piece, len, "%u", g->flows);
	else if (sweep_tmpl_is(nm, nl, "iface"))
		snprintf(piece, len, "%s", g->iface);
	else if (sweep_tmpl_is(nm, nl, "packets"))
		snprintf(piece, len, "%.0f", llround(rate * a->seconds) * 1.0);
	else if (sweep_tmpl_is(nm, nl, "rate_bps"))
		snprintf(piece, len, "%.0f", rate * a->frame * 8.0);
	else if (sweep_tmpl_is(nm, nl, "gap_ns"))
		snprintf(piece, len, "%.0f", rate > 0 ? 1e9 / rate : 0.0);
	else if (sweep_tmpl_is(nm, nl, "output"))
		snprintf(piece, len, "%s", a->output ? a->output : "");
	else
		return -EINVAL;
	return 0;
}

int sweep_gen_expand(const char *tmpl, const struct sweep_gen *g, const struct sweep_gen_ask *a,
		     char *out, size_t outlen)
{
	struct gen_vals v = {g, a};
	return sweep_tmpl_expand(tmpl, gen_field, &v, out, outlen);
}

json_t *sweep_gen_identity(const struct sweep_gen *g)
{
	return json_pack("{s:s, s:s, s:s, s:s}", "kind", g->kind, "name",
			 g->name[0] ? g->name : g->kind, "start", g->start, "count", g->count);
}

/* --------------------------------------------------- loss before the port */

/* A counter of a kernel interface (/sys/class/net/IF/statistics/NAME). */
static bool iface_stat(const char *iface, const char *name, uint64_t *v)
{
	char path[160], buf[64];
	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/%s", iface, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	*v = strtoull(buf, NULL, 10);
	return true;
}

/*
 * The drops of this process's af_packet sockets bound to ifindex (the
 * PMD's), added to *drops / *packets. PACKET_STATISTICS reads and zeroes
 * the socket's figures, so successive calls count disjoint drops.
 * Returns the number of sockets read.
 */
static int sock_drops(unsigned ifindex, uint64_t *drops, uint64_t *packets)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;
	while (d && (de = readdir(d))) {
		char link[64];
		char *end;
		long fd = strtol(de->d_name, &end, 10);
		if (*end || fd < 0 || fd == dirfd(d))
			continue;
		ssize_t l = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (l <= 0)
			continue;
		link[l] = '\0';
		if (strncmp(link, "socket:", 7))
			continue;
		int dom = 0;
		socklen_t dl = sizeof(dom);
		struct sockaddr_ll sll;
		socklen_t sl = sizeof(sll);
		memset(&sll, 0, sizeof(sll));
		if (getsockopt((int)fd, SOL_SOCKET, SO_DOMAIN, &dom, &dl) || dom != AF_PACKET ||
		    getsockname((int)fd, (struct sockaddr *)&sll, &sl) ||
		    (unsigned)sll.sll_ifindex != ifindex)
			continue;
		struct tpacket_stats_v3 st;
		socklen_t stl = sizeof(st);
		memset(&st, 0, sizeof(st));
		if (getsockopt((int)fd, SOL_PACKET, PACKET_STATISTICS, &st, &stl))
			continue;
		*drops += st.tp_drops;
		*packets += st.tp_packets; /* the kernel's figure includes the drops */
		n++;
	}
	if (d)
		closedir(d);
	return n;
}

/* --------------------------------------------------------------- a run */

struct sweep_gen_run {
	struct sweep_gen g;
	struct sweep_gen_ask ask;
	double asked_seconds;
	const struct rx_run_watch *inner;
	bool inner_begun;
	volatile sig_atomic_t *user_stop;
	volatile sig_atomic_t run_stop; /* the run's stop flag */
	char dir[64];                   /* work folder: {output} */
	char output[96];
	char start_cmd[2048];
	char rx_iface[64];
	unsigned ifindex;
	/* the generator's process and its monitor */
	pid_t pid;
	int status;                     /* wait status once exited */
	bool exited, timed_out, killed;
	pthread_t mon;
	bool mon_started;
	atomic_int quit;
	/* timeline (monotonic seconds; 0 = not reached) */
	double t_port, t_start, t_exit, t_drained, t_end;
	/* loss counters: baselines at the start, deltas at the end */
	bool have_drop;
	uint64_t drop0, drop1, rxp0, rxp1;
	int nsocks;
	uint64_t sock_drops, sock_packets;
};

static double now_s(void)
{
	return rxu_mono_seconds();
}

/* The device's iface= (net_af_packet's devarg), or "". */
static void device_iface(const char *device, char *out, size_t len)
{
	const char *p = strstr(device, "iface=");
	out[0] = '\0';
	if (!p)
		return;
	p += 6;
	size_t n = strcspn(p, ", \t");
	if (n >= len)
		n = len - 1;
	memcpy(out, p, n);
	out[n] = '\0';
}

double sweep_gen_run_seconds(double seconds)
{
	return 2 * seconds + 10;
}

/* sh -c cmd in its own process group, stdin /dev/null, stdout and stderr
 * into outfd; it dies with this thread (the caller's, which outlives it). */
static pid_t spawn_sh(const char *cmd, int outfd)
{
	char *const argv[] = {"/bin/sh", "-c", (char *)cmd, NULL};
	return sweep_spawn(argv, outfd, true);
}

static void nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static bool stopping(struct sweep_gen_run *gr)
{
	return atomic_load(&gr->quit) || (gr->user_stop && *gr->user_stop);
}

/*
 * The monitor: waits for the generator (bounded: twice its time + 8 s,
 * inside the run's own bound), then for the port to drain, then ends the
 * measured phase. A user's stop kills the generator and ends it at once.
 */
static void *gen_monitor(void *arg)
{
	struct sweep_gen_run *gr = arg;
	const double deadline = gr->t_start + 2 * gr->asked_seconds + 8;
	while (!gr->exited) {
		int st = 0;
		pid_t w = waitpid(gr->pid, &st, WNOHANG);
		if (w == gr->pid || (w < 0 && errno == ECHILD)) {
			gr->status = st;
			gr->exited = true;
			break;
		}
		bool late = now_s() > deadline;
		if (late || stopping(gr)) {
			kill(-gr->pid, SIGKILL);
			kill(gr->pid, SIGKILL);
			while (waitpid(gr->pid, &gr->status, 0) < 0 && errno == EINTR)
				;
			gr->exited = gr->killed = true;
			gr->timed_out = late;
			break;
		}
		nap_ms(2);
	}
	gr->t_exit = now_s();
	/* frames the generator wrote may still be on their way (a qdisc, a
	 * wire): wait until the receiving interface counts no more */
	uint64_t last = 0, v = 0;
	bool have = gr->rx_iface[0] && iface_stat(gr->rx_iface, "rx_packets", &last);
	double quiet = now_s();
	while (have && !stopping(gr) && now_s() - quiet < GEN_QUIET_S &&
	       now_s() - gr->t_exit < GEN_QUIET_MAX_S) {
		nap_ms(5);
		if (iface_stat(gr->rx_iface, "rx_packets", &v) && v != last) {
			last = v;
			quiet = now_s();
		}
	}
	/* then the PMD's ring: it polls without pause, drain_s is its time */
	double t0 = now_s();
	while (!stopping(gr) && now_s() - t0 < gr->g.drain_s)
		nap_ms(5);
	gr->t_drained = now_s();
	gr->run_stop = 1;
	return NULL;
}

static int gw_begin(void *ctx, const int *tids, uint32_t n, char *err, size_t errlen)
{
	struct sweep_gen_run *gr = ctx;
	if (!gr->inner)
		return 0;
	int rc = gr->inner->begin(gr->inner->ctx, tids, n, err, errlen);
	gr->inner_begun = rc == 0;
	return rc;
}

/* The port receives: baselines, then the generator and its monitor. */
static int gw_started(void *ctx, char *err, size_t errlen)
{
	struct sweep_gen_run *gr = ctx;
	if (gr->inner && gr->inner->started) {
		int rc = gr->inner->started(gr->inner->ctx, err, errlen);
		if (rc < 0)
			return rc;
	}
	gr->t_port = now_s();
	if (gr->ifindex) {
		uint64_t junk = 0, junk2 = 0;
		/* zero the sockets' figures: what they held came before the window */
		gr->nsocks = sock_drops(gr->ifindex, &junk, &junk2);
		gr->have_drop = iface_stat(gr->rx_iface, "rx_dropped", &gr->drop0);
		iface_stat(gr->rx_iface, "rx_packets", &gr->rxp0);
	}
	int fd = open(gr->output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return rxu_errf(err, errlen, -errno, "generator: %s: %s", gr->output,
				strerror(errno));
	gr->t_start = now_s();
	gr->pid = spawn_sh(gr->start_cmd, fd);
	int e = errno;
	close(fd);
	if (gr->pid < 0)
		return rxu_errf(err, errlen, -e, "generator: cannot start: %s", strerror(e));
	int rc = pthread_create(&gr->mon, NULL, gen_monitor, gr);
	if (rc) {
		kill(-gr->pid, SIGKILL);
		waitpid(gr->pid, &gr->status, 0);
		gr->exited = true;
		return rxu_errf(err, errlen, -rc, "generator: cannot start its monitor: %s",
				strerror(rc));
	}
	gr->mon_started = true;
	return 0;
}

/* The rx loops are done, the port still open: read the loss counters. */
static void gw_end(void *ctx)
{
	struct sweep_gen_run *gr = ctx;
	gr->t_end = now_s();
	if (gr->ifindex && gr->t_start > 0) {
		gr->nsocks = sock_drops(gr->ifindex, &gr->sock_drops, &gr->sock_packets);
		if (gr->have_drop)
			gr->have_drop = iface_stat(gr->rx_iface, "rx_dropped", &gr->drop1);
		iface_stat(gr->rx_iface, "rx_packets", &gr->rxp1);
	}
	if (gr->inner && gr->inner_begun)
		gr->inner->end(gr->inner->ctx);
}

int sweep_gen_run_open(const struct sweep_gen *g, const struct rx_config *c,
		       const struct rx_run_watch *inner, volatile sig_atomic_t *user_stop,
		       struct sweep_gen_run **out, struct rx_run_watch *watch,
		       volatile sig_atomic_t **stop_out, char *err, size_t errlen)
{
	*out = NULL;
	if (!strncmp(c->device, "sim", 3))
		return rxu_errf(err, errlen, -EINVAL,
				"generator: needs a real device (dpdk:... or mlx5:...); device '%s' "
				"generates its own traffic",
				c->device);
	if (!(c->rate_pps > 0))
		return rxu_errf(err, errlen, -EINVAL,
				"generator: needs --rate (the rate asked of the generator)");
	if (!g->start[0] || !g->count[0])
		return rxu_errf(err, errlen, -EINVAL, "generator: needs start and count commands");
	struct sweep_gen_run *gr = calloc(1, sizeof(*gr));
	if (!gr)
		return -ENOMEM;
	gr->g = *g;
	gr->inner = inner;
	gr->user_stop = user_stop;
	gr->pid = -1;
	gr->asked_seconds = c->seconds;
	snprintf(gr->dir, sizeof(gr->dir), "/tmp/rxray-gen-XXXXXX");
	if (!mkdtemp(gr->dir)) {
		int e = errno;
		free(gr);
		return rxu_errf(err, errlen, -e, "generator: cannot make a work folder: %s",
				strerror(e));
	}
	snprintf(gr->output, sizeof(gr->output), "%s/output", gr->dir);
	gr->ask = (struct sweep_gen_ask){c->rate_pps, c->frame, c->seconds, gr->output};
	char what[64];
	int rc = sweep_gen_expand(g->start, g, &gr->ask, gr->start_cmd, sizeof(gr->start_cmd));
	if (rc < 0) {
		snprintf(what, sizeof(what), "%.60s", gr->start_cmd);
		sweep_gen_run_close(gr);
		return rxu_errf(err, errlen, rc == -ENOSPC ? -EINVAL : rc,
				"generator: start: %s%s%s", rc == -ENOSPC ? "too long once expanded"
								    : "unknown placeholder {",
				rc == -ENOSPC ? "" : what, rc == -ENOSPC ? "" : "}");
	}
	if (g->rx_iface[0])
		snprintf(gr->rx_iface, sizeof(gr->rx_iface), "%s", g->rx_iface);
	else
		device_iface(c->device, gr->rx_iface, sizeof(gr->rx_iface));
	gr->ifindex = gr->rx_iface[0] ? if_nametoindex(gr->rx_iface) : 0;
	if (g->rx_iface[0] && !gr->ifindex) {
		sweep_gen_run_close(gr);
		return rxu_errf(err, errlen, -EINVAL, "generator: rx_iface '%s': no such interface",
				g->rx_iface);
	}
	if (gr->rx_iface[0] && !gr->ifindex) {
		/* the device's iface=: the port would open nothing, and DPDK
		 * would only say that no port came up */
		sweep_gen_run_close(gr);
		return rxu_errf(err, errlen, -ENODEV,
				"device: iface=%s: no such network interface; set the link up "
				"before the run (for examples/veth-trafgen.yaml: "
				"examples/veth-setup.sh up)",
				gr->rx_iface);
	}
	*watch = (struct rx_run_watch){gw_begin, gw_started, gw_end, gr};
	*stop_out = &gr->run_stop;
	*out = gr;
	return 0;
}

/* The last non-empty line of a file, at most len - 1 bytes of it. */
static void file_tail(const char *path, char *out, size_t len, size_t keep)
{
	char buf[4096];
	out[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	off_t size = lseek(fd, 0, SEEK_END);
	off_t from = size > (off_t)sizeof(buf) - 1 ? size - (off_t)sizeof(buf) + 1 : 0;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, from);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	size_t l = (size_t)n;
	while (l && (buf[l - 1] == '\n' || buf[l - 1] == '\r' || buf[l - 1] == ' '))
		buf[--l] = '\0';
	const char *p = l > keep ? buf + l - keep : buf;
	size_t m = strlen(p) < len - 1 ? strlen(p) : len - 1;
	memcpy(out, p, m);
	out[m] = '\0';
}

/*
 * Run the count command (bounded), its stdout+stderr into a file; the
 * last non-empty line is the count: an integer or {"sent": N[,
 * "seconds": S]}. 0 with *sent (and *secs, 0 = not given), or -errno.
 */
static int gen_count(struct sweep_gen_run *gr, uint64_t *sent, double *secs, char *err,
		     size_t errlen)
{
	char cmd[2048], path[128], line[600];
	int rc = sweep_gen_expand(gr->g.count, &gr->g, &gr->ask, cmd, sizeof(cmd));
	if (rc < 0)
		return rxu_errf(err, errlen, -EINVAL, "generator: count does not expand");
	snprintf(path, sizeof(path), "%s/count", gr->dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return rxu_errf(err, errlen, -errno, "generator: %s: %s", path, strerror(errno));
	pid_t pid = spawn_sh(cmd, fd);
	close(fd);
	if (pid < 0)
		return rxu_errf(err, errlen, -errno, "generator: cannot run count");
	int st = 0;
	const double deadline = now_s() + GEN_COUNT_TIMEOUT_S;
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (now_s() > deadline) {
			kill(-pid, SIGKILL);
			waitpid(pid, &st, 0);
			return rxu_errf(err, errlen, -ETIMEDOUT,
					"generator: count gave no answer in %.0f s",
					GEN_COUNT_TIMEOUT_S);
		}
		nap_ms(2);
	}
	kill(-pid, SIGKILL); /* what it left running */
	file_tail(path, line, sizeof(line), 500);
	const char *last = strrchr(line, '\n');
	last = last ? last + 1 : line;
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		return rxu_errf(err, errlen, -EIO, "generator: count %s %d: %.200s",
				WIFEXITED(st) ? "exited" : "killed by signal",
				WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), last);
	*secs = 0;
	while (*last == ' ' || *last == '\t')
		last++;
	if (*last == '{') {
		json_error_t je;
		json_t *j = json_loads(last, JSON_DECODE_ANY, &je);
		json_t *s = json_object_get(j, "sent"), *t = json_object_get(j, "seconds");
		bool ok = json_is_integer(s) && json_integer_value(s) >= 0 &&
			  (!t || (json_is_number(t) && json_number_value(t) > 0));
		if (ok) {
			*sent = (uint64_t)json_integer_value(s);
			*secs = t ? json_number_value(t) : 0;
		}
		json_decref(j);
		if (!ok)
			return rxu_errf(err, errlen, -EINVAL,
					"generator: count printed '%.200s', not {\"sent\": N[, "
					"\"seconds\": S]}", last);
		return 0;
	}
	uint64_t v;
	char num[64];
	snprintf(num, sizeof(num), "%.63s", last);
	num[strcspn(num, " \t\r")] = '\0';
	if (rxu_parse_u64(num, 0, UINT64_MAX, &v) < 0 || strspn(num, "0123456789") != strlen(num))
		return rxu_errf(err, errlen, -EINVAL,
				"generator: count printed '%.200s', not a packet count or a JSON line",
				last);
	*sent = v;
	return 0;
}

static json_t *jrel(double t, double t0)
{
	return t > 0 ? json_real(t - t0) : json_null();
}

int sweep_gen_run_finish(struct sweep_gen_run *gr, struct rxr_result *r, bool *conserved,
			 char *err, size_t errlen)
{
	*conserved = false;
	if (gr->t_start <= 0)
		return rxu_errf(err, errlen, -EIO, "generator: it never started (the port did not)");
	atomic_store(&gr->quit, 1); /* the run may have ended without the monitor */
	if (gr->mon_started) {
		pthread_join(gr->mon, NULL);
		gr->mon_started = false;
	}
	char tail[320];
	file_tail(gr->output, tail, sizeof(tail), 300);
	if (gr->timed_out) {
		const char *l = strrchr(tail, '\n');
		return rxu_errf(err, errlen, -ETIMEDOUT,
				"generator: still running %.0f s after it should have ended; killed "
				"(its output ends: %.150s)",
				gr->asked_seconds + 8, l ? l + 1 : tail);
	}
	if (!gr->killed && (!WIFEXITED(gr->status) || WEXITSTATUS(gr->status))) {
		const char *l = strrchr(tail, '\n');
		return rxu_errf(err, errlen, -EIO, "generator: start %s %d: %.200s",
				WIFEXITED(gr->status) ? "exited" : "killed by signal",
				WIFEXITED(gr->status) ? WEXITSTATUS(gr->status)
						      : WTERMSIG(gr->status),
				l ? l + 1 : tail);
	}
	uint64_t sent = 0;
	double gsecs = 0;
	int rc = gen_count(gr, &sent, &gsecs, err, errlen);
	if (rc < 0)
		return rc;
	const bool own_secs = gsecs > 0;
	if (!own_secs)
		gsecs = gr->t_exit - gr->t_start;
	const struct rxr_counters *k = &r->c;
	uint64_t ifdrop = gr->have_drop && gr->drop1 >= gr->drop0 ? gr->drop1 - gr->drop0 : 0;
	uint64_t lost = ifdrop + gr->sock_drops;
	uint64_t acc = k->received + k->out_of_buffer + k->app_dropped + lost;
	long long unattr = (long long)sent - (long long)acc;
	double ratio = sent ? (double)llabs(unattr) / (double)sent : (acc ? 1.0 : 0.0);
	*conserved = ratio <= SWEEP_GEN_UNATTRIBUTED_MAX;
	double offered = gsecs > 0 ? (double)sent / gsecs : 0;
	bool limited = offered < SWEEP_GEN_SHORT_RATIO * gr->ask.rate_pps;

	json_t *by = json_object();
	char key[120];
	if (gr->have_drop) {
		snprintf(key, sizeof(key), "%s rx_dropped", gr->rx_iface);
		json_object_set_new(by, key, json_integer((json_int_t)ifdrop));
	}
	if (gr->nsocks > 0)
		json_object_set_new(by, "af_packet socket drops", json_integer((json_int_t)gr->sock_drops));
	json_t *cons = json_pack(
	    "{s:s, s:I, s:I, s:I, s:I, s:I, s:o, s:I, s:f, s:f, s:b}", "rule",
	    "sent = received + out_of_buffer + app_dropped + lost_before_port", "sent",
	    (json_int_t)sent, "received", (json_int_t)k->received, "out_of_buffer",
	    (json_int_t)k->out_of_buffer, "app_dropped", (json_int_t)k->app_dropped,
	    "lost_before_port", (json_int_t)lost, "lost_before_port_by", by, "unattributed",
	    (json_int_t)unattr, "unattributed_ratio", ratio, "unattributed_max",
	    SWEEP_GEN_UNATTRIBUTED_MAX, "conserved", *conserved);
	json_t *rxif = gr->rx_iface[0]
			   ? json_pack("{s:s, s:i, s:I}", "name", gr->rx_iface, "af_packet_sockets",
				       gr->nsocks, "rx_packets",
				       (json_int_t)(gr->rxp1 >= gr->rxp0 ? gr->rxp1 - gr->rxp0 : 0))
			   : json_null();
	if (json_is_object(rxif) && gr->nsocks > 0)
		json_object_set_new(rxif, "socket_packets", json_integer((json_int_t)gr->sock_packets));
	json_t *tl = json_pack("{s:o, s:o, s:o, s:o, s:o}", "port_started", jrel(gr->t_port, gr->t_port),
			       "generator_started", jrel(gr->t_start, gr->t_port), "generator_exited",
			       jrel(gr->t_exit, gr->t_port), "drained", jrel(gr->t_drained, gr->t_port),
			       "rx_stopped", jrel(gr->t_end, gr->t_port));
	json_t *asked = json_pack("{s:f, s:i, s:f, s:i, s:s, s:s}", "rate_pps", gr->ask.rate_pps,
				  "frame", (int)gr->ask.frame, "seconds", gr->ask.seconds, "flows",
				  (int)gr->g.flows, "iface", gr->g.iface, "start", gr->start_cmd);
	json_t *gen = sweep_gen_identity(&gr->g);
	if (!gen || !cons || !tl || !asked || !rxif) {
		json_decref(gen);
		json_decref(cons);
		json_decref(tl);
		json_decref(asked);
		json_decref(rxif);
		return rxu_errf(err, errlen, -ENOMEM, "generator: out of memory");
	}
	json_object_set_new(gen, "asked", asked);
	json_object_set_new(gen, "sent", json_integer((json_int_t)sent));
	json_object_set_new(gen, "seconds", json_real(gsecs));
	json_object_set_new(gen, "seconds_from", json_string(own_secs ? "generator" : "wall"));
	json_object_set_new(gen, "offered_pps", json_real(offered));
	json_object_set_new(gen, "rx_pps", json_real(gsecs > 0 ? (double)k->received / gsecs : 0));
	json_object_set_new(gen, "loss", json_real(sent > k->received
							? (double)(sent - k->received) / (double)sent
							: 0.0));
	json_object_set_new(gen, "generator_limited", json_boolean(limited));
	json_object_set_new(gen, "interrupted", json_boolean(gr->killed));
	json_object_set_new(gen, "conservation", cons);
	json_object_set_new(gen, "rx_iface", rxif);
	json_object_set_new(gen, "timeline", tl);
	json_object_set_new(gen, "warmup",
			    json_string("none: the port's counters and the generator start "
					"together, so its first frame is counted"));
	json_object_set_new(gen, "output_tail", json_string(tail));
	if (!r->extra && !(r->extra = json_object())) {
		json_decref(gen);
		return rxu_errf(err, errlen, -ENOMEM, "generator: out of memory");
	}
	json_object_set_new(r->extra, "generator", gen);
	/* the timer's bound was the run's; what was asked is the generator's */
	json_object_set_new(r->config, "seconds", json_real(gr->asked_seconds));
	json_object_set_new(r->extra, "interrupted",
			    json_boolean(gr->user_stop && *gr->user_stop));
	return 0;
}

void sweep_gen_run_close(struct sweep_gen_run *gr)
{
	if (!gr)
		return;
	atomic_store(&gr->quit, 1);
	if (gr->mon_started)
		pthread_join(gr->mon, NULL);
	if (gr->pid > 0 && !gr->exited) {
		kill(-gr->pid, SIGKILL);
		waitpid(gr->pid, NULL, 0);
	}
	if (gr->pid > 0)
		kill(-gr->pid, SIGKILL); /* what the generator left running */
	char path[128];
	snprintf(path, sizeof(path), "%s/output", gr->dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/count", gr->dir);
	unlink(path);
	rmdir(gr->dir);
	free(gr);
}

void sweep_gen_print(FILE *f, const json_t *gen)
{
	if (!json_is_object(gen))
		return;
	json_t *a = json_object_get(gen, "asked"), *c = json_object_get(gen, "conservation");
	double asked = json_number_value(json_object_get(a, "rate_pps"));
	fprintf(f, "  generator: %s (%s) sent %lld in %.3f s: %.4f Mpps offered, asked %.4f Mpps%s\n",
		json_string_value(json_object_get(gen, "name")),
		json_string_value(json_object_get(gen, "kind")),
		(long long)json_integer_value(json_object_get(gen, "sent")),
		json_number_value(json_object_get(gen, "seconds")),
		json_number_value(json_object_get(gen, "offered_pps")) / 1e6, asked / 1e6,
		json_is_true(json_object_get(gen, "generator_limited"))
		    ? "; generator-limited (it fell short of the rate asked)"
		    : "");
	fprintf(f, "  before the port: lost %lld (",
		(long long)json_integer_value(json_object_get(c, "lost_before_port")));
	const char *name;
	json_t *v;
	int i = 0;
	json_object_foreach(json_object_get(c, "lost_before_port_by"), name, v)
		fprintf(f, "%s%s %lld", i++ ? ", " : "", name, (long long)json_integer_value(v));
	fprintf(f, "%s); unattributed %lld (%.4f%%)\n", i ? "" : "no counter here",
		(long long)json_integer_value(json_object_get(c, "unattributed")),
		json_number_value(json_object_get(c, "unattributed_ratio")) * 100);
	long long sent = json_integer_value(json_object_get(c, "sent"));
	long long sum = json_integer_value(json_object_get(c, "received")) +
			json_integer_value(json_object_get(c, "out_of_buffer")) +
			json_integer_value(json_object_get(c, "app_dropped")) +
			json_integer_value(json_object_get(c, "lost_before_port"));
	bool ok = json_is_true(json_object_get(c, "conserved"));
	fprintf(f, "  conservation vs the generator: sent %lld %s received + out_of_buffer + "
		   "app_dropped + lost_before_port %lld: %s\n",
		sent, sent == sum ? "==" : "!=", sum, ok ? "ok" : "VIOLATED");
}
