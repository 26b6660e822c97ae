/* SPDX-License-Identifier: MIT */
/*
 * rxray attach: profile a running, unmodified DPDK process from outside
 * and normalise what it sees per packet. Reads as: parse -> resolve the
 * target -> open telemetry -> check privileges -> load and attach the
 * sampler -> window (uprobes duty-cycled inside it) -> detach -> fold,
 * normalise, write, print. Every failure prints one line and leaves
 * through the cleanup at the end, which detaches whatever is attached.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "rxray/attach.h"
#include "rxray/attach_findings.h"
#include "rxray/probe.h"
#include "rxray/util.h"

#define VERB "attach"
#define RXT_ATTACH_DEFAULT_HZ 249
#define RXT_ATTACH_DEFAULT_STACK_BYTES 2048
#define STR_(x) #x
#define STR(x) STR_(x)

static struct attach_opts {
	int pid;
	int tids[RXB_ATTACH_MAX_THREADS];
	size_t ntids;
	int lcore;
	unsigned freq;
	double seconds;
	const char *prefix;
	const char *out;
	char *uprobes; /* comma list, points into argv */
	double duty;
	unsigned top;
	bool quiet;
	int stacks; /* enum rxb_stack_mode, or -1 for auto */
	unsigned stack_bytes;
	enum rxb_sample_scope scope;
	const char *debug_dir;
} opts = {
	.pid = -1,
	.lcore = -1,
	/*
	 * Defaults chosen with bench/attach_overhead (testpmd rxonly on
	 * net_null; README, attach). The earlier ones (dwarf at 999 Hz, events on
	 * every CPU, a ring-buffer wakeup per sample) cost testpmd 4.6% of its
	 * rate. A sample costs the sampled thread the interrupt plus the BPF
	 * program, most of which is the stack copy, so the frequency and the
	 * bytes copied set the cost. 249 Hz: the lowest rate at which a 5 s
	 * window pins the RX burst's cycles/packet within 5% (2 sigma of
	 * sampling); 99 Hz does not. 2 KiB: the PMD's receive and the
	 * mempool frames of testpmd's RX loop fit in 512 bytes (its 4 KiB
	 * burst array and the thread's start lie beyond them: those stacks
	 * are counted as cut, their RX frames are whole); 2 KiB leaves room
	 * for PMDs with bigger frames. Events follow the --lcore/--tid
	 * threads only, so no other CPU is interrupted; no wakeups.
	 */
	.freq = RXT_ATTACH_DEFAULT_HZ,
	.seconds = 5,
	.duty = 0.1,
	.top = 12,
	.stacks = -1, /* auto: dwarf where it loads, else fp */
	.stack_bytes = RXT_ATTACH_DEFAULT_STACK_BYTES,
	.scope = RXB_SCOPE_AUTO,
};

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	stop_requested = sig;
}

static void usage(FILE *f)
{
	fprintf(f,
		"USAGE\n"
		"  rxray attach --pid PID [--lcore N | --tid T[,T...]] [options]\n"
		"\n"
		"Samples the user and kernel stacks of a running DPDK process with a BPF\n"
		"perf-event program (hardware cycles where a PMU exists, cpu-clock otherwise),\n"
		"reads packet and drop counters from its telemetry socket at the start and\n"
		"end of the window, and reports cycles per packet: sample share x the\n"
		"threads' busy cycles / packets received in the window.\n"
		"\n"
		"OPTIONS\n"
		"  --pid PID           process to profile (required)\n"
		"  --lcore N           sample only the thread DPDK runs as lcore N (named\n"
		"                      rte-worker-N / lcore-worker-N), else the busiest thread\n"
		"                      pinned to core N\n"
		"  --tid T[,T...]      these threads (default: the whole process)\n"
		"  --freq HZ           samples per second per event (default " STR(RXT_ATTACH_DEFAULT_HZ)
		", max 20000)\n"
		"  --seconds S         window length (default 5; \"500ms\", \"2s\")\n"
		"  --stacks dwarf|fp   dwarf (default where the kernel allows, x86-64): the top\n"
		"                      of the user stack is copied per sample and unwound by\n"
		"                      rxray with the objects' CFI, so code built without frame\n"
		"                      pointers (distro DPDK) gets whole stacks; fp: the kernel\n"
		"                      walks frame pointers, such code shows its leaf only\n"
		"  --stack-bytes N     dwarf: user stack bytes copied per sample, 512-8192 in\n"
		"                      steps of 512 (default " STR(RXT_ATTACH_DEFAULT_STACK_BYTES)
		": a DPDK RX loop's PMD and\n"
		"                      mempool frames fit; frames beyond the copy are left\n"
		"                      out, attach.json counts those stacks as stacks_cut)\n"
		"  --sample-on threads|cpus\n"
		"                      perf events on the target threads (default with --lcore\n"
		"                      or --tid: no other CPU is interrupted) or on every CPU\n"
		"  --debug-dir DIR     separate debug files (build-id, .gnu_debuglink) are looked\n"
		"                      up here (default /usr/lib/debug)\n"
		"  --file-prefix NAME  the target's EAL --file-prefix (default: the telemetry\n"
		"                      socket that greets as PID)\n"
		"  --uprobes SYM[,SYM] count calls and return values (packets per rx burst) of\n"
		"                      these functions: \"sym\", \"dso:sym\", \"dso+0xOFF\" or a DPDK\n"
		"                      name (\"net_null rx_pkt_burst (port 0)\"). Off by\n"
		"                      default: a hit costs 1.5-7.5 us here, so they are attached\n"
		"                      only --uprobe-duty of each second and the output states the\n"
		"                      packet rate with and without them\n"
		"  --uprobe-duty PCT   share of each second uprobes are attached (default 10%%)\n"
		"  -o, --out DIR       output directory (default attach-PID): stacks.folded,\n"
		"                      flame.svg (cycles per packet), attach.json (rxray.attach/1)\n"
		"  --top N             functions in the summary (default 12)\n"
		"  -q, --quiet         no summary on stdout, no \"sampling\" line on stderr when\n"
		"                      the window opens\n"
		"\n"
		"COST\n"
		"  A sample interrupts the sampled thread and runs the BPF program, whose\n"
		"  stack copy is most of its time. The defaults (" STR(RXT_ATTACH_DEFAULT_HZ)
		" Hz, dwarf stacks of\n"
		"  " STR(RXT_ATTACH_DEFAULT_STACK_BYTES)
		" bytes, events on the --lcore/--tid threads only) are chosen to\n"
		"  cost testpmd on net_null at most 2%% of its rate while its cycles/packet\n"
		"  stay within 5%% of 999 Hz with 8 KiB stacks; bench/attach_overhead\n"
		"  prints the cost and accuracy of each setting.\n"
		"\n"
		"Needs root, or CAP_BPF + CAP_PERFMON. Probes are BPF links owned by rxray's\n"
		"file descriptors, never pinned: they go away on exit, SIGINT, SIGTERM and\n"
		"SIGKILL. RXRAY_BPF_DEBUG=1 prints libbpf's log.\n"
		"\n"
		"EXAMPLES\n"
		"  rxray attach --pid $(pidof dpdk-testpmd) --lcore 1 --seconds 5\n"
		"  rxray attach --pid 4242 --tid 4250 --freq 4999 -o prof/\n"
		"  rxray attach --pid 4242 --lcore 3 --uprobes librte_mempool_ring:common_ring_mc_dequeue\n"
		"\n"
		"NAMES\n"
		"  Frames are named from .symtab, a separate debug file, .dynsym (within the\n"
		"  symbol's size), then the DPDK tables read from the process (rte_eth_fp_ops,\n"
		"  rte_mempool_ops_table): \"net_null rx_pkt_burst (port 0)\", \"ring_mp_mc\n"
		"  dequeue\"; attach.json says which source named each frame; the rest stays\n"
		"  object+0xoffset.\n"
		"\n"
		"Exit codes: 0 ok, 1 runtime failure (privileges, BPF, target exited), 2 bad input.\n");
}

static int tids_parse(const char *s)
{
	char buf[4096];
	char *save = NULL;

	snprintf(buf, sizeof(buf), "%s", s);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;
		if (opts.ntids == RXB_ATTACH_MAX_THREADS)
			return rxu_usage_err(VERB, "--tid: at most %d threads", RXB_ATTACH_MAX_THREADS);
		if (rxu_parse_u64(tok, 1, 4194304, &v))
			return rxu_usage_err(VERB, "--tid: '%s' is not a thread id", tok);
		opts.tids[opts.ntids++] = (int)v;
	}
	if (!opts.ntids)
		return rxu_usage_err(VERB, "--tid: empty list");
	return 0;
}

static int opts_parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{"pid", required_argument, NULL, 'p'},
		{"lcore", required_argument, NULL, 'l'},
		{"tid", required_argument, NULL, 't'},
		{"freq", required_argument, NULL, 'F'},
		{"seconds", required_argument, NULL, 's'},
		{"file-prefix", required_argument, NULL, 'P'},
		{"uprobes", required_argument, NULL, 'u'},
		{"uprobe-duty", required_argument, NULL, 'd'},
		{"out", required_argument, NULL, 'o'},
		{"top", required_argument, NULL, 'T'},
		{"quiet", no_argument, NULL, 'q'},
		{"stacks", required_argument, NULL, 'S'},
		{"stack-bytes", required_argument, NULL, 'B'},
		{"sample-on", required_argument, NULL, 'O'},
		{"debug-dir", required_argument, NULL, 'D'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	uint64_t v;
	double d;
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (rxu_parse_u64(optarg, 1, 4194304, &v))
				return rxu_usage_err(VERB, "--pid: '%s' is not a process id", optarg);
			opts.pid = (int)v;
			break;
		case 'l':
			if (rxu_parse_u64(optarg, 0, 1023, &v))
				return rxu_usage_err(VERB, "--lcore: '%s' is not a core (0-1023)", optarg);
			opts.lcore = (int)v;
			break;
		case 't':
			if ((rc = tids_parse(optarg)))
				return rc;
			break;
		case 'F':
			if (rxu_parse_u64(optarg, 1, 20000, &v))
				return rxu_usage_err(VERB, "--freq: '%s' is not 1-20000 Hz", optarg);
			opts.freq = (unsigned)v;
			break;
		case 's':
			if (rxu_parse_seconds(optarg, 0.05, 3600, &opts.seconds))
				return rxu_usage_err(VERB, "--seconds: '%s' is not 0.05-3600 s", optarg);
			break;
		case 'P':
			if (!*optarg || strchr(optarg, '/'))
				return rxu_usage_err(VERB, "--file-prefix: '%s' is not a prefix", optarg);
			opts.prefix = optarg;
			break;
		case 'u':
			opts.uprobes = optarg;
			break;
		case 'd':
			if (rxu_parse_double(optarg, 1, 100, &d))
				return rxu_usage_err(VERB, "--uprobe-duty: '%s' is not 1-100 (%%)", optarg);
			opts.duty = d / 100;
			break;
		case 'o':
			if (!*optarg)
				return rxu_usage_err(VERB, "--out: empty path");
			opts.out = optarg;
			break;
		case 'T':
			if (rxu_parse_u64(optarg, 1, 1000, &v))
				return rxu_usage_err(VERB, "--top: '%s' is not 1-1000", optarg);
			opts.top = (unsigned)v;
			break;
		case 'q':
			opts.quiet = true;
			break;
		case 'S':
			if (!strcmp(optarg, "fp"))
				opts.stacks = RXB_STACKS_FP;
			else if (!strcmp(optarg, "dwarf"))
				opts.stacks = RXB_STACKS_DWARF;
			else
				return rxu_usage_err(VERB, "--stacks: '%s' is not fp or dwarf", optarg);
			break;
		case 'B':
			if (rxu_parse_u64(optarg, 512, 8192, &v) || v % 512)
				return rxu_usage_err(VERB, "--stack-bytes: '%s' is not 512-8192 in steps "
						     "of 512", optarg);
			opts.stack_bytes = (unsigned)v;
			break;
		case 'O':
			if (!strcmp(optarg, "threads"))
				opts.scope = RXB_SCOPE_THREADS;
			else if (!strcmp(optarg, "cpus"))
				opts.scope = RXB_SCOPE_CPUS;
			else
				return rxu_usage_err(VERB, "--sample-on: '%s' is not threads or cpus",
						     optarg);
			break;
		case 'D':
			if (!*optarg)
				return rxu_usage_err(VERB, "--debug-dir: empty path");
			opts.debug_dir = optarg;
			break;
		case 'h':
			usage(stdout);
			return -1;
		case ':':
			return rxu_usage_err(VERB, "%s needs a value", argv[optind - 1]);
		default:
			return rxu_usage_err(VERB, "unknown option '%s' (rxray attach --help)",
					     argv[optind - 1]);
		}
	}
	if (optind < argc)
		return rxu_usage_err(VERB, "unexpected argument '%s'", argv[optind]);
	if (opts.pid < 0)
		return rxu_usage_err(VERB, "--pid: required");
	if (opts.ntids && opts.lcore >= 0)
		return rxu_usage_err(VERB, "--tid and --lcore: give one of them");
	if (opts.scope == RXB_SCOPE_THREADS && !opts.ntids && opts.lcore < 0)
		return rxu_usage_err(VERB, "--sample-on threads: needs --lcore or --tid");
	return 0;
}

static uint64_t ports_packets(const struct rxb_tele_snap *s)
{
	uint64_t n = 0;
	for (size_t i = 0; i < s->nports; i++)
		n += s->ports[i].ipackets;
	return n;
}

/* Until mono time `until` (or a signal): poll the sampler in slices. */
static void wait_until(struct rxb_sampler *s, double until)
{
	double now;

	while (!stop_requested && (now = rxu_mono_seconds()) < until) {
		double left = until - now;
		rxb_sampler_poll(s, left < 0.1 ? (int)(left * 1000) + 1 : 100);
	}
}

/*
 * The window. Without uprobes: sleep in slices until done, a signal, or
 * the target's exit. With them: each second, attach for duty x 1 s, then
 * detach, and count packets over the attached and detached parts.
 */
static int window_run(struct rxb_sampler *s, struct rxb_tele *tl,
		      const struct rxb_attach_target *t, struct rxb_profile *p, double start)
{
	struct rxb_tele_snap *snap = NULL;
	double on_s = 0, off_s = 0, on_pk = 0, off_pk = 0;
	double end = start + opts.seconds;
	int rc = 0;

	if (p->nuprobes && tl && !(snap = malloc(sizeof(*snap))))
		return -ENOMEM;
	while (!stop_requested) {
		double now = rxu_mono_seconds();
		if (now >= end)
			break;
		if (!rxb_attach_target_alive(t)) {
			rc = -ESRCH;
			break;
		}
		if (!p->nuprobes) {
			wait_until(s, now + 0.1 < end ? now + 0.1 : end);
			continue;
		}
		/*
		 * Packets are counted while attached (k0..k1) and while detached
		 * (k2..k3); detaching waits for the kernel (~0.2 s here), which
		 * belongs to neither side.
		 */
		double on = opts.duty, period_end = now + 1;
		if (on > end - now)
			on = end - now;
		uint64_t k0 = snap && !rxb_tele_snapshot(tl, snap) ? ports_packets(snap) : 0;
		double t0 = rxu_mono_seconds();
		rc = rxb_sampler_uprobes_set(s, true);
		if (rc)
			break;
		wait_until(s, t0 + on);
		uint64_t k1 = snap && !rxb_tele_snapshot(tl, snap) ? ports_packets(snap) : 0;
		double t1 = rxu_mono_seconds();
		rxb_sampler_uprobes_set(s, false);
		on_s += t1 - t0;
		on_pk += (double)(k1 - k0);
		if (period_end > end)
			period_end = end;
		now = rxu_mono_seconds();
		if (period_end - now > 0.02 && !stop_requested) {
			uint64_t k2 = snap && !rxb_tele_snapshot(tl, snap) ? ports_packets(snap) : 0;
			double t2 = rxu_mono_seconds();
			wait_until(s, period_end);
			uint64_t k3 = snap && !rxb_tele_snapshot(tl, snap) ? ports_packets(snap) : 0;
			off_s += rxu_mono_seconds() - t2;
			off_pk += (double)(k3 - k2);
		}
	}
	p->uprobe_attached_s = on_s;
	p->uprobe_rate_on_pps = on_s > 0 ? on_pk / on_s : 0;
	p->uprobe_rate_off_pps = off_s > 0 ? off_pk / off_s : 0;
	free(snap);
	return rc;
}

/*
 * Run rxray (and its unwinding) off the cores the target threads are
 * pinned to, when another core is left: what rxray costs should not come
 * out of the measured thread's time.
 */
static void keep_off_target_cores(const struct rxb_attach_target *t)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return;
	cpu_set_t keep = set;
	for (size_t i = 0; i < t->nthreads; i++)
		if (t->threads[i].pinned_core >= 0 && t->threads[i].pinned_core < CPU_SETSIZE)
			CPU_CLR(t->threads[i].pinned_core, &keep);
	if (CPU_COUNT(&keep) > 0 && CPU_COUNT(&keep) < CPU_COUNT(&set))
		sched_setaffinity(0, sizeof(keep), &keep);
}

int rxt_cmd_attach(int argc, char **argv)
{
	struct rxb_attach_target *t = NULL;
	struct rxb_profile *p = NULL;
	struct rxb_tele *tl = NULL;
	struct rxb_syms *sy = NULL;
	struct rxb_sampler *s = NULL;
	struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
	char err[512], outdir[256];
	char up_path[RXB_ATTACH_MAX_UPROBES][256];
	uint64_t up_off[RXB_ATTACH_MAX_UPROBES];
	size_t nup = 0;
	uint64_t ns0 = 0, ns1 = 0;
	int rc, ret = RXU_EXIT_RUNTIME;

	rc = opts_parse(argc, argv);
	if (rc)
		return rc < 0 ? RXU_EXIT_OK : rc;
	/* from here on a signal ends the window; cleanup detaches */
	stop_requested = 0;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	t = calloc(1, sizeof(*t));
	rxb_profile_open(&p);
	if (!t || !p) {
		rxu_err(VERB, "out of memory");
		goto cleanup;
	}
	rc = rxb_attach_target_resolve(opts.pid, opts.tids, opts.ntids, opts.lcore, t, err,
				       sizeof(err));
	if (rc) {
		rxu_err(VERB, "%s", err);
		ret = RXU_EXIT_USAGE;
		goto cleanup;
	}
	rc = rxb_attach_caps_check(err, sizeof(err));
	if (rc) {
		rxu_err(VERB, "needs root or CAP_BPF+CAP_PERFMON: missing %s", err);
		goto cleanup;
	}
	rxb_tele_open(opts.pid, opts.prefix, &tl, err, sizeof(err));
	if (!tl && opts.prefix) {
		rxu_err(VERB, "%s", err);
		ret = RXU_EXIT_USAGE;
		goto cleanup;
	}
	if (!tl)
		fprintf(stderr, "rxray attach: warning: %s; reporting shares without packets\n", err);
	rxb_syms_open(opts.pid, opts.debug_dir, &sy, err, sizeof(err));
	if (!sy) {
		rxu_err(VERB, "%s", err);
		goto cleanup;
	}
	/* DPDK labels now, so --uprobes may name them; read again after the window */
	rxb_syms_dpdk_read(sy, NULL, err, sizeof(err));
	/* uprobe specs are input: check them all before loading anything */
	for (char *save = NULL, *tok = opts.uprobes ? strtok_r(opts.uprobes, ",", &save) : NULL;
	     tok; tok = strtok_r(NULL, ",", &save)) {
		if (nup == RXB_ATTACH_MAX_UPROBES) {
			ret = rxu_usage_err(VERB, "--uprobes: at most %d symbols",
					    RXB_ATTACH_MAX_UPROBES);
			goto cleanup;
		}
		if (rxb_syms_locate(sy, tok, up_path[nup], sizeof(up_path[0]), &up_off[nup], err,
				    sizeof(err))) {
			rxu_err(VERB, "%s", err);
			ret = RXU_EXIT_USAGE;
			goto cleanup;
		}
		snprintf(p->uprobes[nup].spec, sizeof(p->uprobes[0].spec), "%s", tok);
		nup++;
	}
	p->nuprobes = nup;
	rxp_clock_init(50);
	keep_off_target_cores(t);

	/* fill what the profile says about the target */
	p->pid = t->pid;
	snprintf(p->comm, sizeof(p->comm), "%s", t->comm);
	snprintf(p->how, sizeof(p->how), "%s", t->how);
	p->lcore = t->lcore;
	p->nthreads = t->nthreads;
	for (size_t i = 0; i < t->nthreads; i++)
		p->tids[i] = t->threads[i].tid;
	p->freq_hz = opts.freq;
	p->clock_hz = rxp_clock_get()->hz;
	snprintf(p->clock_source, sizeof(p->clock_source), "%s",
		 rxp_clock_source_name(rxp_clock_get()->source));

	struct rxb_sampler_opts so = {.target = t, .freq_hz = opts.freq,
				      .mode = opts.stacks < 0 ? RXB_STACKS_DWARF : opts.stacks,
				      .scope = opts.scope, .stack_bytes = opts.stack_bytes,
				      .unwind = rxb_syms_unwind, .unwind_ctx = sy};
	int src = rxb_sampler_open(&so, &s, err, sizeof(err));
	if (!s && opts.stacks < 0 && src != -EPERM) {
		fprintf(stderr, "rxray attach: note: dwarf stacks unavailable (%s); using frame "
			"pointers\n", err);
		so.mode = RXB_STACKS_FP;
		rxb_sampler_open(&so, &s, err, sizeof(err));
	}
	if (!s) {
		rxu_err(VERB, "%s", err);
		goto cleanup;
	}
	snprintf(p->stack_mode, sizeof(p->stack_mode), "%s",
		 so.mode == RXB_STACKS_DWARF ? "dwarf" : "fp");
	snprintf(p->event, sizeof(p->event), "%s", rxb_sampler_event(s));
	for (size_t i = 0; i < nup; i++)
		rxb_sampler_uprobe_add(s, up_path[i], up_off[i]);

	/* the window: telemetry and CPU time read at both ends */
	if (tl && rxb_tele_snapshot(tl, &p->t0)) {
		fprintf(stderr, "rxray attach: warning: telemetry read failed; no packets\n");
		rxb_tele_close(tl);
		tl = NULL;
	}
	double w0 = rxu_mono_seconds();
	if (rxb_attach_target_cpu_ns(t, &ns0)) {
		rxu_err(VERB, "pid %d exited", t->pid);
		goto cleanup;
	}
	/* a long window shows it has begun (and a script can wait for this line) */
	if (!opts.quiet)
		fprintf(stderr, "rxray attach: sampling pid %d (%zu thread%s) for %g s; Ctrl-C ends it "
			"early\n", t->pid, t->nthreads, t->nthreads == 1 ? "" : "s", opts.seconds);
	rc = window_run(s, tl, t, p, w0);
	if (rc == -ESRCH || rxb_attach_target_cpu_ns(t, &ns1)) {
		rxu_err(VERB, "pid %d exited during the window", t->pid);
		goto cleanup;
	}
	if (rc) {
		rxu_err(VERB, "failed to attach uprobes: %s", strerror(-rc));
		goto cleanup;
	}
	p->have_tele = tl && !rxb_tele_snapshot(tl, &p->t1);
	p->seconds = (p->have_tele ? p->t1.t : rxu_mono_seconds()) - (tl ? p->t0.t : w0);
	rxb_sampler_stop(s);
	p->interrupted = stop_requested != 0;
	p->busy_ns = ns1 - ns0;
	if (tl) {
		snprintf(p->tele_path, sizeof(p->tele_path), "%s", rxb_tele_path(tl));
		snprintf(p->tele_version, sizeof(p->tele_version), "%s", rxb_tele_version(tl));
	}
	rxb_sampler_stats(s, &p->sst);
	for (size_t i = 0; i < p->nuprobes; i++)
		rxb_sampler_uprobe_stat(s, (int)i, &p->uprobes[i].st);

	/* DPDK names: the tables are read now, when the ports are surely set up */
	snprintf(p->debug_dir, sizeof(p->debug_dir), "%s",
		 opts.debug_dir ? opts.debug_dir : "/usr/lib/debug");
	rc = rxb_syms_dpdk_read(sy, p->have_tele ? &p->t1 : NULL, err, sizeof(err));
	if (rc < 0 || err[0])
		snprintf(p->dpdk_note, sizeof(p->dpdk_note), "%.150s", err);
	size_t nl = 0;
	const struct rxb_dpdk_label *dl = rxb_syms_dpdk_labels(sy, &nl);
	p->ndpdk = nl < RXB_ATTACH_MAX_DPDK ? nl : RXB_ATTACH_MAX_DPDK;
	memcpy(p->dpdk, dl, p->ndpdk * sizeof(*dl));

	rc = rxb_profile_fold(p, s, sy, t);
	if (rc) {
		rxu_err(VERB, "failed to read the samples: %s", strerror(-rc));
		goto cleanup;
	}
	rxb_profile_finish(p);
	rxa_attach_findings(p);
	if (opts.out)
		snprintf(outdir, sizeof(outdir), "%s", opts.out);
	else
		snprintf(outdir, sizeof(outdir), "attach-%d", opts.pid);
	/* attach.json last: its presence says the set is complete */
	rc = rxa_attach_flame_write(p, outdir, err, sizeof(err));
	if (!rc)
		rc = rxb_profile_write(p, outdir, err, sizeof(err));
	if (rc) {
		rxu_err(VERB, "failed to write %s", err);
		goto cleanup;
	}
	if (!opts.quiet) {
		rxb_profile_print(p, stdout, opts.top);
		printf("\nfiles       %s/stacks.folded, %s/attach.json, %s/flame.svg (%s)\n", outdir,
		       outdir, outdir, p->packets ? "cycles per packet" : "samples");
	}
	ret = RXU_EXIT_OK;
cleanup:
	rxb_sampler_close(s);
	rxb_syms_close(sy);
	rxb_tele_close(tl);
	rxb_profile_free(p);
	free(t);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	return ret;
}
