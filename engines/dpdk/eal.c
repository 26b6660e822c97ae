/* SPDX-License-Identifier: MIT */
/*
 * EAL bring-up for the DPDK engine: one rte_eal_init per process, with
 * arguments derived from the run so that it works on a bare VM (no
 * hugepages, no NIC) as well as on a host with an mlx5 port.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>

#include "dpdk_int.h"
#include "rxray/dpdk.h"
#include "rxray/util.h"

#define EAL_MAX_ARGS 96

static pthread_mutex_t eal_lock = PTHREAD_MUTEX_INITIALIZER;
static bool eal_up;
static unsigned eal_lcores;
static char eal_user[512];
static char eal_argstr[2048];
static char eal_note[256];

bool rxd_eal_ready(void)
{
	return eal_up;
}

const char *rxd_eal_args(void)
{
	return eal_argstr;
}

/*
 * Driver plugins by device kind. Debian/Ubuntu builds of DPDK 22.11 load
 * every plugin from RTE_EAL_PMD_PATH by themselves; these lists are what a
 * run needs when that directory is not there. librte_mempool_ring.so is in
 * every list: rte_mempool_create_empty sets the ring_mp_mc driver on a new
 * pool before the engine switches it to its counting driver, and fails
 * when no ring driver is registered.
 */
const char *rxd_eal_plugins_for(const char *kind)
{
	if (!strcmp(kind, "null"))
		return "librte_mempool_ring.so librte_bus_vdev.so librte_net_null.so";
	if (!strcmp(kind, "ring"))
		return "librte_mempool_ring.so librte_bus_vdev.so librte_net_ring.so";
	if (!strcmp(kind, "mlx5"))
		return "librte_mempool_ring.so librte_bus_pci.so librte_bus_auxiliary.so "
		       "librte_common_mlx5.so librte_net_mlx5.so";
	return "librte_mempool_ring.so";
}

/* Which plugin set the user's arguments call for. */
static const char *eal_kind(char **uv, int un)
{
	for (int i = 0; i < un; i++) {
		const char *a = uv[i];
		const char *v = NULL;
		if (!strncmp(a, "--vdev=", 7))
			v = a + 7;
		else if (!strcmp(a, "--vdev") && i + 1 < un)
			v = uv[i + 1];
		if (v && !strncmp(v, "net_null", 8))
			return "null";
		if (v && !strncmp(v, "net_ring", 8))
			return "ring";
		if (!strcmp(a, "-a") || !strncmp(a, "--allow", 7) || !strncmp(a, "-a", 2))
			return "mlx5";
	}
	return "sim";
}

static bool eal_has(char **uv, int un, const char *opt)
{
	size_t n = strlen(opt);
	for (int i = 0; i < un; i++)
		if (!strncmp(uv[i], opt, n) && (uv[i][n] == '\0' || uv[i][n] == '='))
			return true;
	return false;
}

static bool eal_allows_device(char **uv, int un)
{
	for (int i = 0; i < un; i++)
		if (!strncmp(uv[i], "-a", 2) || !strncmp(uv[i], "--allow", 7) ||
		    !strncmp(uv[i], "-w", 2) || !strncmp(uv[i], "--pci-whitelist", 15))
			return true;
	return false;
}

/* MiB of free hugepages on a mounted hugetlbfs (0 when none usable). */
static size_t eal_huge_free_mb(void)
{
	FILE *f = fopen("/proc/mounts", "r");
	char line[512];
	bool mounted = false;
	unsigned long freep = 0, kb = 0;
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (strstr(line, " hugetlbfs "))
				mounted = true;
		fclose(f);
	}
	if (!mounted)
		return 0;
	f = fopen("/proc/meminfo", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "HugePages_Free: %lu", &freep);
		sscanf(line, "Hugepagesize: %lu kB", &kb);
	}
	fclose(f);
	return (size_t)(freep * kb / 1024);
}

/* Split "a 'b c' d" into words (simple quotes, no escapes) in place. */
static int eal_split(char *s, char **v, int max)
{
	int n = 0;
	while (*s) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			break;
		if (n == max)
			return -E2BIG;
		char q = (*s == '\'' || *s == '"') ? *s++ : 0;
		v[n++] = s;
		while (*s && (q ? *s != q : (*s != ' ' && *s != '\t')))
			s++;
		if (q && !*s)
			return -EINVAL;
		if (*s)
			*s++ = '\0';
	}
	return n;
}

static int eal_cpuset_str(char *out, size_t len)
{
	size_t o = 0;
	int n = rxu_cores_available();
	o += (size_t)snprintf(out + o, len - o, "(");
	for (int i = 0; i < n && o < len; i++)
		o += (size_t)snprintf(out + o, len - o, "%s%d", i ? "," : "", rxu_core_nth(i));
	if (o + 2 > len)
		return -E2BIG;
	snprintf(out + o, len - o, ")");
	return 0;
}

static bool eal_is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * Where to take -d plugins from, or NULL when the EAL finds them itself
 * (its compiled-in RTE_EAL_PMD_PATH exists) or nothing is found.
 * RXRAY_DPDK_PMD_DIR overrides.
 */
static char *eal_plugin_dir(void)
{
	static char dir[512];
	static const char *const guess[] = {"/usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0",
					    "/usr/lib/aarch64-linux-gnu/dpdk/pmds-23.0",
					    "/usr/local/lib/x86_64-linux-gnu/dpdk/pmds-23.0",
					    "/usr/local/lib/aarch64-linux-gnu/dpdk/pmds-23.0",
					    "/usr/local/lib64/dpdk/pmds-23.0",
					    "/usr/local/lib/dpdk/pmds-23.0"};
	const char *env = getenv("RXRAY_DPDK_PMD_DIR");
	if (env && *env) {
		snprintf(dir, sizeof(dir), "%s", env);
		return dir;
	}
#ifdef RTE_EAL_PMD_PATH
	if (RTE_EAL_PMD_PATH[0] && eal_is_dir(RTE_EAL_PMD_PATH))
		return NULL; /* the EAL loads its own plugin directory */
#endif
	for (size_t i = 0; i < sizeof(guess) / sizeof(guess[0]); i++) {
		if (eal_is_dir(guess[i])) {
			snprintf(dir, sizeof(dir), "%s", guess[i]);
			return dir;
		}
	}
	return NULL;
}

int rxd_eal_ensure(const char *user_args, unsigned lcores_needed, size_t mem_mb, char *note,
		   size_t notelen, char *err, size_t errlen)
{
	static char ubuf[512], cpus[1024], lcores[4096], mem[32], plug[8][600];
	char *uv[EAL_MAX_ARGS];
	char *argv[EAL_MAX_ARGS + 32];
	int argc = 0, un, rc = 0;
	size_t o;

	if (!user_args)
		user_args = "";
	pthread_mutex_lock(&eal_lock);
	if (eal_up) {
		if (strcmp(user_args, eal_user)) {
			snprintf(err, errlen,
				 "device: the EAL is already up in this process with '%s'; "
				 "run '%s' in a fresh process",
				 eal_user, user_args);
			rc = -EBUSY;
		} else if (lcores_needed > eal_lcores) {
			snprintf(err, errlen,
				 "cores: the EAL in this process has %u lcores, this run needs %u; "
				 "use a fresh process",
				 eal_lcores, lcores_needed);
			rc = -EBUSY;
		} else if (note) {
			snprintf(note, notelen, "%s", eal_note);
		}
		goto out;
	}
	rc = rxd_mpops_register();
	if (rc) {
		snprintf(err, errlen, "dpdk: cannot register the counting mempool driver: %s",
			 strerror(-rc));
		goto out;
	}
	snprintf(ubuf, sizeof(ubuf), "%s", user_args);
	un = eal_split(ubuf, uv, EAL_MAX_ARGS);
	if (un < 0) {
		snprintf(err, errlen, "device: EAL arguments '%s': %s", user_args,
			 un == -E2BIG ? "too many words" : "unterminated quote");
		rc = -EINVAL;
		goto out;
	}
	if (eal_has(uv, un, "-l") || eal_has(uv, un, "-c") || eal_has(uv, un, "--lcores") ||
	    eal_has(uv, un, "--main-lcore")) {
		snprintf(err, errlen,
			 "device: leave lcores out of the EAL arguments; "
			 "rxray places threads from --cores");
		rc = -EINVAL;
		goto out;
	}
	argv[argc++] = "rxray-dpdk";
	for (int i = 0; i < un; i++)
		argv[argc++] = uv[i];

	eal_note[0] = '\0';
	o = 0;
	if (!eal_has(uv, un, "--no-huge") && !eal_has(uv, un, "--in-memory") &&
	    eal_huge_free_mb() < mem_mb) {
		snprintf(mem, sizeof(mem), "%zu", mem_mb);
		argv[argc++] = "--no-huge";
		if (!eal_has(uv, un, "-m") && !eal_has(uv, un, "--socket-mem")) {
			argv[argc++] = "-m";
			argv[argc++] = mem;
		}
		o += (size_t)snprintf(eal_note + o, sizeof(eal_note) - o,
				      "no hugepages free: --no-huge -m %zu", mem_mb);
	}
	if (!eal_allows_device(uv, un) && !eal_has(uv, un, "--no-pci")) {
		argv[argc++] = "--no-pci";
		if (o < sizeof(eal_note))
			o += (size_t)snprintf(eal_note + o, sizeof(eal_note) - o,
					      "%sno PCI device allowed: --no-pci", o ? "; " : "");
	}
	if (!eal_has(uv, un, "--no-shconf") && !eal_has(uv, un, "--in-memory"))
		argv[argc++] = "--no-shconf";
	if (!eal_has(uv, un, "--no-telemetry"))
		argv[argc++] = "--no-telemetry";
	if (!eal_has(uv, un, "--log-level"))
		argv[argc++] = "--log-level=error";
	if (!eal_has(uv, un, "--mbuf-pool-ops-name"))
		argv[argc++] = "--mbuf-pool-ops-name=" RXD_MPOPS_NAME;

	/* every lcore starts on the whole allowed set; workers re-pin
	 * themselves at launch (rte_thread_set_affinity) to the run's cores */
	if (lcores_needed < 1)
		lcores_needed = 1;
	if (lcores_needed > RTE_MAX_LCORE) {
		snprintf(err, errlen, "queues: %u lcores needed, this DPDK build has %d",
			 lcores_needed, RTE_MAX_LCORE);
		rc = -EINVAL;
		goto out;
	}
	if (eal_cpuset_str(cpus, sizeof(cpus))) {
		snprintf(err, errlen, "cores: affinity mask too long for --lcores");
		rc = -E2BIG;
		goto out;
	}
	o = 0;
	o += (size_t)snprintf(lcores + o, sizeof(lcores) - o, "--lcores=");
	for (unsigned i = 0; i < lcores_needed && o < sizeof(lcores); i++)
		o += (size_t)snprintf(lcores + o, sizeof(lcores) - o, "%s%u@%s", i ? "," : "", i,
				      cpus);
	if (o >= sizeof(lcores)) {
		snprintf(err, errlen, "cores: --lcores argument too long");
		rc = -E2BIG;
		goto out;
	}
	argv[argc++] = lcores;

	const char *dir = eal_plugin_dir();
	if (dir && !eal_has(uv, un, "-d")) {
		char list[600];
		char *pv[8];
		snprintf(list, sizeof(list), "%s", rxd_eal_plugins_for(eal_kind(uv, un)));
		int pn = eal_split(list, pv, 8);
		for (int i = 0; i < pn; i++) {
			snprintf(plug[i], sizeof(plug[i]), "%s/%s", dir, pv[i]);
			argv[argc++] = "-d";
			argv[argc++] = plug[i];
		}
	}
	argv[argc] = NULL;

	o = 0;
	eal_argstr[0] = '\0';
	for (int i = 1; i < argc && o < sizeof(eal_argstr); i++)
		o += (size_t)snprintf(eal_argstr + o, sizeof(eal_argstr) - o, "%s%s",
				      i > 1 ? " " : "", argv[i]);

	/* rte_eal_init keeps pointers into argv for the process lifetime */
	static char *argv_keep[EAL_MAX_ARGS + 32];
	memcpy(argv_keep, argv, sizeof(argv));
	optind = 1;
	int ret = rte_eal_init(argc, argv_keep);
	optind = 1;
	if (ret < 0) {
		snprintf(err, errlen, "dpdk: rte_eal_init failed (%s) with: %s",
			 rte_strerror(rte_errno), eal_argstr);
		rc = -(rte_errno ? rte_errno : EINVAL);
		goto out;
	}
	eal_up = true;
	eal_lcores = lcores_needed;
	snprintf(eal_user, sizeof(eal_user), "%s", user_args);
	if (note)
		snprintf(note, notelen, "%s", eal_note);
out:
	pthread_mutex_unlock(&eal_lock);
	return rc;
}
