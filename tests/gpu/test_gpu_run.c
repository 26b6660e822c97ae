/* SPDX-License-Identifier: MIT */
/*
 * GPUDirect on the software NIC, both engines: payloads land in GPU
 * memory through the NIC's DMA engine (stage payload_dma), a GPU consumer
 * reads every batch (--gpu-work), buffers go back only after its kernel,
 * and the GPU shows as a thread of role "gpu" with stage gpu_kernel.
 * Needs a CUDA GPU: skips visibly without one.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rxray/engines.h"
#include "rxray/gpu.h"
#include "rxray/result.h"

static const struct rxr_thread_result *thread(const struct rxr_result *r, const char *role)
{
	for (size_t i = 0; i < r->nthreads; i++)
		if (!strcmp(r->threads[i].role, role))
			return &r->threads[i];
	return NULL;
}

/* One GPUDirect run at 1 Mpps on device dev ("sim" and its options);
 * *out (when given) keeps the result for more checks. */
static void gpu_run_dev(const char *engine, const char *dev, enum rx_mode mode,
			enum rx_gpu_work work, enum rx_gpu_launch launch, struct rxr_result **out)
{
	char why[160];
	if (!rxg_available(why, sizeof(why)))
		cr_skip_test("needs a CUDA GPU: %s", why);
	struct rx_config c;
	char err[512] = "";
	rx_config_defaults(&c);
	snprintf(c.engine, sizeof(c.engine), "%s", engine);
	snprintf(c.device, sizeof(c.device), "%s", dev);
	c.mode = mode;
	c.payload_mem = RX_MEM_GPU;
	c.payload = RX_PAYLOAD_FULL;
	c.gpu_work = work;
	c.gpu_launch = launch;
	c.rate_pps = 1e6;
	c.seconds = 0.3;
	c.ring = 1024;
	c.allow_oversubscribe = true;
	struct rxr_result *r = NULL;
	rxr_result_open(&r);
	int rc = rx_run_exec(rxe_find(engine), &c, r, NULL, err, sizeof(err));
	cr_assert_eq(rc, 0, "%s: %s", engine, err);
	cr_expect(rxr_counters_conserved(&r->c));
	cr_expect_gt(r->c.received, 1000);
	const struct rxr_thread_result *g = thread(r, "gpu"), *nic = thread(r, "nic");
	cr_assert_not_null(g, "no gpu thread");
	/* every packet the app received went through a kernel, no more */
	cr_expect_eq(g->packets, r->c.received, "gpu %llu, received %llu",
		     (unsigned long long)g->packets, (unsigned long long)r->c.received);
	cr_expect_gt(g->st[RXP_ST_GPU_KERNEL].cycles, 0);
	cr_expect_gt(g->st[RXP_ST_GPU_KERNEL].count, 0);
	/* the NIC copied the payloads into GPU memory before completing them */
	cr_assert_not_null(nic);
	cr_expect_gt(nic->st[RXP_ST_PAYLOAD_DMA].packets, 0);
	/* the CPU side launched every batch the GPU ran */
	uint64_t launches = 0;
	for (size_t i = 0; i < r->nthreads; i++)
		launches += r->threads[i].st[RXP_ST_GPU_LAUNCH].packets;
	cr_expect_eq(launches, g->packets);
	json_t *gj = json_array_get(json_object_get(r->extra, "gpu"), 0);
	cr_expect_str_eq(json_string_value(json_object_get(gj, "work")),
			 work == RX_GPU_WORK_REORDER ? "reorder" : "checksum");
	cr_expect_str_eq(json_string_value(json_object_get(gj, "launch")),
			 rx_knob_value_name(rx_knob_find("gpu-launch"), (int)launch));
	if (out) {
		*out = r;
		return;
	}
	if (work == RX_GPU_WORK_REORDER)
		cr_expect_eq(json_integer_value(json_object_get(gj, "dups")), 0);
	rxr_result_free(r);
}

static void gpu_run_mode(const char *engine, enum rx_mode mode, enum rx_gpu_work work,
			 enum rx_gpu_launch launch)
{
	gpu_run_dev(engine, "sim", mode, work, launch, NULL);
}

static void gpu_run(const char *engine, enum rx_gpu_work work, enum rx_gpu_launch launch)
{
	gpu_run_mode(engine, RX_MODE_HDS, work, launch);
}

Test(gpu_run, verbs_reorder, .timeout = 60)
{
	gpu_run("verbs", RX_GPU_WORK_REORDER, RX_GPU_LAUNCH_KERNEL);
}

Test(gpu_run, verbs_checksum, .timeout = 60)
{
	gpu_run("verbs", RX_GPU_WORK_CHECKSUM, RX_GPU_LAUNCH_KERNEL);
}

Test(gpu_run, dpdk_reorder, .timeout = 60)
{
	gpu_run("dpdk", RX_GPU_WORK_REORDER, RX_GPU_LAUNCH_KERNEL);
}

Test(gpu_run, dpdk_checksum, .timeout = 60)
{
	gpu_run("dpdk", RX_GPU_WORK_CHECKSUM, RX_GPU_LAUNCH_KERNEL);
}

Test(gpu_run, dpdk_reorder_graph, .timeout = 60)
{
	gpu_run("dpdk", RX_GPU_WORK_REORDER, RX_GPU_LAUNCH_GRAPH);
}

Test(gpu_run, dpdk_checksum_persistent, .timeout = 60)
{
	gpu_run("dpdk", RX_GPU_WORK_CHECKSUM, RX_GPU_LAUNCH_PERSISTENT);
}

Test(gpu_run, verbs_reorder_persistent, .timeout = 60)
{
	gpu_run("verbs", RX_GPU_WORK_REORDER, RX_GPU_LAUNCH_PERSISTENT);
}

/* Single-segment GPUDirect: whole frames in GPU memory, the kernel reads
 * each sequence number from its header, none missing or repeated. */
Test(gpu_run, dpdk_single_segment_reorder, .timeout = 60)
{
	gpu_run_mode("dpdk", RX_MODE_SINGLE, RX_GPU_WORK_REORDER, RX_GPU_LAUNCH_KERNEL);
}

/* The same with the copies started by a kernel launch per submit
 * (sim:gpu_dma=launch) instead of the resident copy kernel. */
Test(gpu_run, dpdk_single_segment_reorder_launched_copies, .timeout = 60)
{
	struct rxr_result *r = NULL;
	gpu_run_dev("dpdk", "sim:gpu_dma=launch", RX_MODE_SINGLE, RX_GPU_WORK_REORDER,
		    RX_GPU_LAUNCH_KERNEL, &r);
	json_t *gj = json_array_get(json_object_get(r->extra, "gpu"), 0);
	cr_expect_eq(json_integer_value(json_object_get(gj, "dups")), 0);
	cr_expect_str_eq(json_string_value(json_object_get(json_object_get(r->extra, "nic"),
							   "gpu_dma")),
			 "launch");
	rxr_result_free(r);
}

/* Two resident kernels at once, the consumer's and the NIC's copies, with
 * the frames read by the persistent kernel: the pairing that hung. */
Test(gpu_run, dpdk_single_segment_reorder_persistent, .timeout = 60)
{
	gpu_run_mode("dpdk", RX_MODE_SINGLE, RX_GPU_WORK_REORDER, RX_GPU_LAUNCH_PERSISTENT);
}

/* The fault switch that publishes completions whose payloads never
 * landed (sim:fault=publish_before_landing): the kernel reads stale
 * frames, and the reorder accounting must say so. Without the fault the
 * same run finds no duplicate (dpdk_single_segment_reorder). */
Test(gpu_run, publish_before_landing_is_caught, .timeout = 60)
{
	struct rxr_result *r = NULL;
	gpu_run_dev("dpdk", "sim:fault=publish_before_landing", RX_MODE_SINGLE,
		    RX_GPU_WORK_REORDER, RX_GPU_LAUNCH_KERNEL, &r);
	json_t *gj = json_array_get(json_object_get(r->extra, "gpu"), 0);
	json_int_t dups = json_integer_value(json_object_get(gj, "dups"));
	json_int_t gaps = json_integer_value(json_object_get(gj, "gaps"));
	cr_expect_gt(dups + gaps, 0, "stale frames went unnoticed (dups %lld, gaps %lld)",
		     (long long)dups, (long long)gaps);
	rxr_result_free(r);
}

/* A GPU wait that gave up (rxg_stall_note: a kernel or copy without
 * progress for 2 s) fails the run that saw it, exit 1, with the first
 * stall's line, whatever else happened; later notes do not replace it.
 * No GPU needed: the note is what a stalled wait leaves. */
Test(gpu_run, a_stall_fails_the_run_with_what_it_waited_for, .timeout = 60)
{
	cr_assert_null(rxg_stall(), "no stall yet");
	rxg_stall_note("payload_dma: ticket %d not landed (test)", 7);
	rxg_stall_note("gpu_kernel: a later stall (test)");
	cr_assert_str_eq(rxg_stall(), "payload_dma: ticket 7 not landed (test)");
	struct rx_config c;
	char err[512] = "";
	rx_config_defaults(&c);
	c.rate_pps = 1e6;
	c.seconds = 0.3;
	c.ring = 1024;
	c.allow_oversubscribe = true;
	struct rxr_result *r = NULL;
	rxr_result_open(&r);
	int rc = rx_run_exec(rxe_find(c.engine), &c, r, NULL, err, sizeof(err));
	cr_assert_eq(rc, -ETIMEDOUT, "rc %d: %s", rc, err);
	cr_assert(strstr(err, "gpu stalled: payload_dma: ticket 7 not landed"), "%s", err);
	rxr_result_free(r);
}

/* The build's rxray, or the one beside this program (a device bundle). */
static void rxray_bin(char *out, size_t len)
{
	snprintf(out, len, "%s", RXRAY_BIN);
	if (access(out, X_OK) == 0)
		return;
	ssize_t n = readlink("/proc/self/exe", out, len - 8);
	cr_assert_gt(n, 0);
	out[n] = 0;
	char *slash = strrchr(out, '/');
	snprintf(slash ? slash + 1 : out, 8, "rxray");
}

/* rxray run's exit status and the first line of its stderr. */
static int cli(const char *args, char *line, size_t len)
{
	char cmd[1024], bin[512], path[] = "/tmp/rxray_gpu_cli_XXXXXX";
	rxray_bin(bin, sizeof(bin));
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	snprintf(cmd, sizeof(cmd), "%s run %s --seconds 0.1 2>%s >/dev/null", bin, args, path);
	int st = system(cmd);
	FILE *f = fdopen(fd, "r");
	line[0] = 0;
	if (f) {
		if (!fgets(line, (int)len, f))
			line[0] = 0;
		fclose(f);
	}
	unlink(path);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Bad launch settings: exit 2 with one line naming the field, GPU or not. */
Test(gpu_run, bad_launch_settings_are_refused, .timeout = 60)
{
	char line[512];
	cr_expect_eq(cli("--payload-mem gpu --gpu-work reorder --gpu-launch bogus", line,
			 sizeof(line)),
		     2, "%s", line);
	cr_expect(strstr(line, "gpu-launch") != NULL, "%s", line);
	cr_expect_eq(cli("--mode hds --payload-mem gpu --gpu-launch persistent", line,
			 sizeof(line)),
		     2, "%s", line);
	cr_expect(strstr(line, "gpu-launch") != NULL, "%s", line);
	cr_expect_eq(cli("--mode hds --payload-mem gpu --gpu-work checksum --gpu-launch kernel "
			 "--batch 2048 --ring 8192",
			 line, sizeof(line)),
		     2, "%s", line);
	cr_expect(strstr(line, "gpu-launch") != NULL, "%s", line);
}

/* `rxray caps` says GPU memory is possible exactly when a GPU and its
 * driver are here, and says why not otherwise; a run that asks for it
 * without one is refused before it starts, with that reason (it printed
 * "yes" on a host with no driver, and the run then blamed the driver's
 * version). */
Test(gpu_run, caps_says_what_this_host_has, .timeout = 60)
{
	char why[160];
	int have = rxg_available(why, sizeof(why));
	char bin[512], cmd[600];
	rxray_bin(bin, sizeof(bin));
	snprintf(cmd, sizeof(cmd), "%s caps 2>&1", bin);
	FILE *f = popen(cmd, "r");
	cr_assert_not_null(f);
	char buf[512], line[512] = "";
	while (fgets(buf, sizeof(buf), f))
		if (strstr(buf, "gpu memory"))
			snprintf(line, sizeof(line), "%s", buf);
	pclose(f);
	cr_assert(line[0], "caps has no gpu memory line");
	if (have) {
		cr_expect(strstr(line, "gpu memory       yes"), "%s", line);
		return;
	}
	cr_expect(strstr(line, "gpu memory       no (") && strstr(line, why), "%s (want: %s)", line,
		  why);
	char err[512];
	cr_expect_eq(cli("--mode hds --payload-mem gpu", err, sizeof(err)), 2, "%s", err);
	cr_expect(strstr(err, "payload-mem") && strstr(err, why), "%s", err);
	cr_expect(!strstr(why, "insufficient") || strstr(why, "supports CUDA"), "%s", why);
}
