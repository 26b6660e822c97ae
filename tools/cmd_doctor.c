/* SPDX-License-Identifier: MIT */
/*
 * rxray doctor: is this host fit to measure a receive path? Each check
 * prints OK, WARN or FAIL with the fix. Optional libraries (rdma-core,
 * CUDA driver) are probed with dlopen so the check works whatever this
 * binary was linked with.
 */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "rxray/engines.h"
#include "rxray/probe.h"
#include "rxray/util.h"

enum level { OK, WARN, FAIL };
static const char *const level_name[] = {"OK", "WARN", "FAIL"};

struct doctor_opts {
	bool json;
	unsigned calib_ms;
};

struct doctor {
	json_t *checks; /* array, for --json */
	bool json;
	int worst;
};

static void report(struct doctor *d, enum level lv, const char *name, const char *fix,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void report(struct doctor *d, enum level lv, const char *name, const char *fix,
		   const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if ((int)lv > d->worst)
		d->worst = (int)lv;
	if (d->json) {
		json_array_append_new(d->checks,
				      json_pack("{s:s,s:s,s:s,s:s?}", "check", name, "level",
						level_name[lv], "detail", msg, "fix",
						lv == OK ? NULL : fix));
		return;
	}
	printf("%-4s %-10s %s\n", level_name[lv], name, msg);
	if (lv != OK && fix)
		printf("     %-10s fix: %s\n", "", fix);
}

static long meminfo_value(const char *key)
{
	FILE *f = fopen("/proc/meminfo", "r");
	if (!f)
		return -1;
	char line[256];
	long v = -1;
	size_t kl = strlen(key);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ':') {
			v = strtol(line + kl + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

static long read_long_file(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1000;
	long v = -1000;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1000;
	fclose(f);
	return v;
}

static void check_cores(struct doctor *d)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	int avail = rxu_cores_available();
	if (avail >= 3)
		report(d, OK, "cores", NULL, "%ld online, %d available to this process", online,
		       avail);
	else
		report(d, WARN, "cores",
		       "use a host with >= 3 cores (NIC + RX + app) for separate app threads; "
		       "multi-queue runs need 1 + 2 per queue",
		       "%ld online, %d available: the software NIC and the RX worker share what "
		       "there is, the app runs inline",
		       online, avail);
}

static void check_clock(struct doctor *d, unsigned calib_ms)
{
	int rc = rxp_clock_init(calib_ms);
	if (rc < 0) {
		report(d, FAIL, "clock", "check clock_gettime/TSC availability",
		       "calibration failed: %s", strerror(-rc));
		return;
	}
	const struct rxp_clock *c = rxp_clock_get();
	enum level lv = (c->source == RXP_CLOCK_MONOTONIC || c->source == RXP_CLOCK_CNTVCT) ? WARN
											   : OK;
	report(d, lv, "clock",
	       "on x86 use a CPU with invariant TSC; on aarch64 enable PMU user access "
	       "(sysctl kernel.perf_user_access=1)",
	       "%s at %.3f MHz, resolution %.1f ns, lap cost %.1f ticks%s%s",
	       rxp_clock_source_name(c->source), c->hz / 1e6, c->resolution_ns,
	       c->lap_cost_cycles, c->note[0] ? "; " : "", c->note);
	/* Which clock and why: the better sources this host refused, by name. */
	report(d, OK, "clock-why", NULL, "chose %s: %s%s", rxp_clock_source_name(c->source),
	       rxp_clock_why(),
	       c->source == RXP_CLOCK_CNTVCT
		       ? "; a stage whose mean lap is under 10 ticks reports burst totals only"
		       : "");
#if defined(__x86_64__) || defined(__i386__)
	bool inv = rxp_clock_tsc_invariant();
	report(d, inv ? OK : WARN, "tsc", "pick a host whose CPU reports constant_tsc and nonstop_tsc",
	       "invariant TSC %s", inv ? "present (constant_tsc, nonstop_tsc)" : "NOT reported");
#endif
}

static void check_hugepages(struct doctor *d)
{
	long total = meminfo_value("HugePages_Total");
	long freep = meminfo_value("HugePages_Free");
	long size_kb = meminfo_value("Hugepagesize");
	if (total > 0)
		report(d, OK, "hugepages", NULL, "%ld x %ld kB configured, %ld free", total,
		       size_kb, freep);
	else
		report(d, WARN, "hugepages",
		       "echo 1024 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages "
		       "(DPDK runs with --no-huge until then)",
		       "none configured (page size %ld kB)", size_kb);
}

static void check_pmu(struct doctor *d)
{
	/* the counter the pmu clock would open, opened the same way */
	int fd = rxp_clock_pmu_open();
	if (fd >= 0) {
		close(fd);
		report(d, OK, "pmu", NULL, "hardware cycle counter available");
		return;
	}
	int e = -fd;
	long paranoid = read_long_file("/proc/sys/kernel/perf_event_paranoid");
	report(d, WARN, "pmu",
	       e == EACCES || e == EPERM
		       ? "run as root or lower kernel.perf_event_paranoid"
#if defined(__aarch64__)
		       : "none here: attach samples with cpu-clock; laps use cntvct_el0",
#else
		       : "none in this VM: attach samples with cpu-clock; laps use the TSC",
#endif
	       "no hardware PMU (%s, perf_event_paranoid=%ld): %s and software events only",
	       strerror(e), paranoid,
#if defined(__aarch64__)
	       "cntvct_el0");
#else
	       "TSC");
#endif
}

static bool cap_effective(int cap)
{
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return false;
	char line[256];
	unsigned long long capeff = 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "CapEff:", 7)) {
			capeff = strtoull(line + 7, NULL, 16);
			break;
		}
	fclose(f);
	return (capeff >> cap) & 1ull;
}

static void check_bpf(struct doctor *d)
{
	const int CAP_SYS_ADMIN_ = 21, CAP_PERFMON_ = 38, CAP_BPF_ = 39;
	bool admin = cap_effective(CAP_SYS_ADMIN_);
	bool bpf = cap_effective(CAP_BPF_), perfmon = cap_effective(CAP_PERFMON_);
	bool btf = access("/sys/kernel/btf/vmlinux", R_OK) == 0;
	if ((admin || (bpf && perfmon)) && btf)
		report(d, OK, "bpf", NULL, "%s; kernel BTF present: rxray attach can run",
		       geteuid() == 0 ? "root" : "CAP_BPF + CAP_PERFMON");
	else if (!btf)
		report(d, WARN, "bpf", "use a kernel built with CONFIG_DEBUG_INFO_BTF=y",
		       "/sys/kernel/btf/vmlinux missing: rxray attach cannot load its CO-RE program");
	else
		report(d, WARN, "bpf", "run as root, or setcap cap_bpf,cap_perfmon+ep on rxray",
		       "missing %s%s%s: rxray attach needs them", bpf ? "" : "CAP_BPF",
		       !bpf && !perfmon ? " and " : "", perfmon ? "" : "CAP_PERFMON");
}

static void check_dpdk(struct doctor *d)
{
#ifdef RXRAY_DPDK_VERSION
	/* the registry knows which engines this binary holds */
	bool engine = rxe_find("dpdk") != NULL;
	report(d, engine ? OK : WARN, "dpdk", "build the DPDK engine (libdpdk-dev)",
	       "built with DPDK %s%s", RXRAY_DPDK_VERSION,
	       engine ? ", dpdk engine available" : ", dpdk engine not in this build");
#else
	report(d, WARN, "dpdk", "apt-get install libdpdk-dev and rebuild (tools/setup.sh)",
	       "not in this build: the dpdk engine is off");
#endif
}

typedef void *(*get_list_fn)(int *);
typedef void (*free_list_fn)(void *);

static void check_rdma(struct doctor *d)
{
	void *h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		report(d, WARN, "rdma-core", "apt-get install libibverbs1 ibverbs-providers",
		       "libibverbs not found: the verbs engine's mlx5 backend cannot run");
		return;
	}
	get_list_fn get = (get_list_fn)(uintptr_t)dlsym(h, "ibv_get_device_list");
	free_list_fn put = (free_list_fn)(uintptr_t)dlsym(h, "ibv_free_device_list");
	int n = 0;
	void *list = get ? get(&n) : NULL;
	if (list && put)
		put(list);
	dlclose(h);
	if (n > 0)
		report(d, OK, "rdma-core", NULL, "libibverbs present, %d RDMA device(s)", n);
	else
		report(d, WARN, "rdma-core",
		       "no RDMA device: use --device sim, or load mlx5_ib on a ConnectX host",
		       "libibverbs present, no RDMA device");
}

typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_count_fn)(int *);

static void check_cuda(struct doctor *d)
{
	const char *root = "/usr/local/cuda";
	char path[256];
	snprintf(path, sizeof(path), "%s/include/cuda_runtime.h", root);
	bool toolkit = access(path, R_OK) == 0;
	report(d, toolkit ? OK : WARN, "cuda", "install the CUDA toolkit under /usr/local/cuda",
	       "toolkit %s under %s", toolkit ? "present" : "missing", root);
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		report(d, WARN, "gpu", "no NVIDIA driver: GPU payload memory and CUPTI are off",
		       "libcuda.so.1 not loadable: no GPU driver");
		return;
	}
	cu_init_fn init = (cu_init_fn)(uintptr_t)dlsym(h, "cuInit");
	cu_count_fn count = (cu_count_fn)(uintptr_t)dlsym(h, "cuDeviceGetCount");
	int n = 0, rc = init ? init(0) : -1;
	if (rc == 0 && count)
		rc = count(&n);
	dlclose(h);
	if (rc == 0 && n > 0)
		report(d, OK, "gpu", NULL, "%d CUDA device(s)", n);
	else
		report(d, WARN, "gpu", "GPU payload memory needs a CUDA device",
		       "driver present but no usable device (cu error %d)", rc);
}

static void usage(FILE *f)
{
	fprintf(f, "USAGE\n"
		   "  rxray doctor [--json] [--calib-ms N]\n\n"
		   "Checks cores, clock source and frequency, invariant TSC, hugepages, PMU,\n"
		   "BPF permission, DPDK / rdma-core / CUDA presence and GPUs. Each line is\n"
		   "OK, WARN or FAIL with the fix. Exit 0 unless a check FAILs (1).\n\n"
		   "OPTIONS\n"
		   "  --json         one JSON document instead of lines\n"
		   "  --calib-ms N   clock calibration window (default 200, 10..5000)\n\n"
		   "EXAMPLES\n"
		   "  rxray doctor\n"
		   "  rxray doctor --json | jq '.checks[] | select(.level != \"OK\")'\n");
}

int rxt_cmd_doctor(int argc, char **argv)
{
	struct doctor_opts o = {.json = false, .calib_ms = 200};
	static const struct option longopts[] = {
		{"json", no_argument, NULL, 'j'},
		{"calib-ms", required_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int opt;
	optind = 1;
	while ((opt = rxt_cli_getopt("doctor", argc, argv, "h", longopts)) != -1) {
		uint64_t v;
		switch (opt) {
		case 'j': o.json = true; break;
		case 'c':
			if (rxu_parse_u64(optarg, 10, 5000, &v))
				return rxu_usage_err("doctor", "--calib-ms: expected 10..5000, got '%s'",
						     optarg);
			o.calib_ms = (unsigned)v;
			break;
		case 'h': usage(stdout); return RXU_EXIT_OK;
		default:
			return RXU_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return rxu_usage_err("doctor", "unexpected argument '%s'", argv[optind]);

	struct doctor d = {.checks = json_array(), .json = o.json, .worst = OK};
	if (!d.checks)
		return RXU_EXIT_RUNTIME;
	check_cores(&d);
	check_clock(&d, o.calib_ms);
	check_hugepages(&d);
	check_pmu(&d);
	check_bpf(&d);
	check_dpdk(&d);
	check_rdma(&d);
	check_cuda(&d);
	if (o.json) {
		json_t *doc = json_pack("{s:s,s:o,s:s}", "schema", "rxray.doctor/1", "checks", d.checks,
					"worst", level_name[d.worst]);
		json_dumpf(doc, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(doc);
	} else {
		json_decref(d.checks);
		printf("doctor: %s\n", d.worst == FAIL ? "FAIL" : d.worst == WARN ? "usable, with warnings" : "OK");
	}
	return d.worst == FAIL ? RXU_EXIT_RUNTIME : RXU_EXIT_OK;
}
