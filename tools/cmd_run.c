/* SPDX-License-Identifier: MIT */
/*
 * rxray run: one point on one engine. Reads as: parse options -> check
 * (engine, caps, validation, placement) -> the core's run sequence
 * (engines/core run.c) -> summary -> result JSON. Bad input exits 2 with one line naming the option; a
 * runtime failure or counters that do not conserve exit 1.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "engine_list.h"
#include "run_gen.h"
#include "run_sample.h"
#include "rxray/core.h"
#include "rxray/util.h"
#ifdef RXRAY_VERB_CEILING
#include <math.h>

#include "rxray/model.h"
#endif

#define VERB "run"

static volatile sig_atomic_t run_stop;

/*
 * The stop deadline: SIGINT or SIGTERM ends the run within 2 s. The
 * signal asks every loop to stop (run_stop); a watchdog thread, woken by
 * the handler, gives the run RUN_STOP_S to stop. A run that stopped then
 * prints and writes its result (marked interrupted, atomically: a
 * temporary file renamed). A run still going (a GPU kernel or copy, or a
 * thread, that does not return) is ended here: one line on stderr,
 * nothing written, exit 1.
 */
#define RUN_STOP_S 1.6
enum { RUN_GOING = 0, RUN_WRITING, RUN_FINISHED };
static int run_state; /* atomic */
static sem_t run_sig_sem;

static void run_on_signal(int sig)
{
	(void)sig;
	run_stop = 1;
	sem_post(&run_sig_sem); /* async-signal-safe */
}

static void run_sleep_until_state(double secs, int past)
{
	for (double el = 0; el < secs && __atomic_load_n(&run_state, __ATOMIC_ACQUIRE) < past;
	     el += 0.01) {
		struct timespec ts = {0, 10000000};
		nanosleep(&ts, NULL);
	}
}

static void *run_watchdog(void *arg)
{
	(void)arg;
	while (sem_wait(&run_sig_sem) < 0)
		;
	run_sleep_until_state(RUN_STOP_S, RUN_WRITING);
	/* stopped: the summary and the result (milliseconds) are let finish */
	if (__atomic_load_n(&run_state, __ATOMIC_ACQUIRE) != RUN_GOING)
		return NULL;
	static const char msg[] = "rxray run: interrupted, and the run did not stop within 2 s "
				  "(a thread, GPU kernel or copy did not return): no result "
				  "written\n";
	ssize_t w = write(STDERR_FILENO, msg, sizeof(msg) - 1);
	(void)w;
	_exit(RXU_EXIT_RUNTIME);
}

static void run_help(void)
{
	printf("USAGE\n  rxray run [options]\n\n"
	       "Run one configuration on an engine, print where the cycles went, and\n"
	       "write the result JSON (rxray.run/1).\n\nOPTIONS\n");
	rxt_config_print_options(stdout);
	rxt_run_sample_help(stdout);
	rxt_run_gen_help(stdout);
	printf("\nEXAMPLES\n"
	       "  rxray run --engine verbs --device sim --mode hds --frame 1064 --seconds 2\n"
	       "  rxray run --device sim --rate 5M --ring 1024 --batch 32 -o run.json\n"
	       "  rxray run --device sim --inject app=500 --inject hdr_read=200 -o inj.json\n"
	       "  rxray run --engine dpdk --device sim --discipline scalar --mode hds\n"
	       "  rxray run --engine dpdk --device dpdk:--vdev=net_null0 --sample -o null.json\n"
	       "\nExit codes: 0 ok, 1 runtime failure or counters that do not conserve,\n"
	       "2 bad input. Ctrl-C stops the run early and still writes the result.\n");
}

static void run_summary(FILE *f, const struct rx_config *c, const struct rx_caps *caps,
			const struct rxr_result *r, bool conserved)
{
	const struct rxr_counters *k = &r->c;
	fprintf(f, "rxray run: %s on %s (%s), %s frame %u", c->engine, c->device, caps->name,
		rx_mode_name(c->mode), c->frame);
	if (c->mode == RX_MODE_HDS)
		fprintf(f, " split %u", c->split);
	fprintf(f, ", %u queue%s, ring %u, batch %u, %.2f s%s\n", c->queues,
		c->queues == 1 ? "" : "s", c->ring, c->batch, r->seconds,
		run_stop ? " (interrupted)" : "");
	fprintf(f, "  offered  %12llu  %8.3f Mpps\n", (unsigned long long)k->offered,
		r->offered_mpps);
	fprintf(f, "  received %12llu  %8.3f Mpps   loss %.4f%%\n",
		(unsigned long long)k->received, r->rx_mpps, r->loss * 100);
	fprintf(f, "  out_of_buffer %llu  nombuf %llu  app_dropped %llu  errors %llu\n",
		(unsigned long long)k->out_of_buffer, (unsigned long long)k->nombuf,
		(unsigned long long)k->app_dropped, (unsigned long long)k->errors);
	json_t *nic = r->extra ? json_object_get(r->extra, "nic") : NULL;
	if (nic) {
		double target = json_number_value(json_object_get(nic, "target_pps"));
		bool lim = json_is_true(json_object_get(nic, "generator_limited"));
		char tgt[32] = "max";
		if (target > 0)
			snprintf(tgt, sizeof(tgt), "%.3f Mpps", target / 1e6);
		/* the device's one record of its counts: auto (nothing asked,
		 * neither --dma-writers nor the device's writers=) says that
		 * the placement chose */
		struct rx_dev_record rec;
		if (!caps->dev || !caps->dev->record || caps->dev->record(r, &rec) < 0)
			memset(&rec, 0, sizeof(rec));
		fprintf(f, "  software NIC: %.3f Mpps achieved, target %s, %u thread(s) x %u DMA writer(s)%s%s\n",
			json_number_value(json_object_get(nic, "achieved_mpps")), tgt,
			rec.actual.threads, rec.actual.writers,
			rec.asked.writers ? "" : " (auto: the spare cores)",
			lim ? "; generator-limited (the NIC set the pace)" : "");
		fprintf(f, "  arrivals: trains of %lld at a %.0f Gb/s line rate (%.2f Mpps), rx found %.1f packets a poll\n",
			(long long)json_integer_value(json_object_get(nic, "train")),
			json_number_value(json_object_get(nic, "line_gbps")),
			json_number_value(json_object_get(nic, "line_mpps")),
			json_number_value(json_object_get(nic, "rx_packets_per_poll")));
	}
	for (size_t i = 0; i < r->nthreads; i++) {
		const struct rxr_thread_result *t = &r->threads[i];
		fprintf(f, "  %-4s core %-3d %8.1f cyc/pkt busy:", t->role, t->core,
			rxr_thread_cycles_per_packet(t));
		/* busy stages make the cyc/pkt; waits (idle, ...) are listed
		 * apart, per packet too but outside that figure */
		const char *sep = "; waiting:";
		for (int pass = 0; pass < 2; pass++)
			for (int s = 0; s < RXP_ST_COUNT; s++) {
				if (!(t->stage_mask & (1u << s)) || rxp_stage_is_wait(s) != pass)
					continue;
				fprintf(f, "%s %s %.1f", pass && sep ? sep : "",
					rxp_stage_name((enum rxp_stage)s), t->st[s].cycles_per_packet);
				if (pass)
					sep = NULL;
			}
		fputc('\n', f);
	}
	rxt_run_sample_print(f, r->extra ? json_object_get(r->extra, RXR_RESULT_SAMPLED) : NULL);
	json_t *val = r->extra ? json_object_get(r->extra, "validity") : NULL;
	if (json_is_true(json_object_get(val, "disturbed"))) {
		json_t *why = json_object_get(val, "reasons");
		fprintf(f, "  DISTURBED: the host took time from this run, so its figures measure "
			   "that too:");
		size_t i;
		json_t *w;
		json_array_foreach(why, i, w)
			fprintf(f, "%s %s", i ? ";" : "", json_string_value(w));
		fputc('\n', f);
	}
	if (json_is_true(json_object_get(r->extra, "oversubscribed")))
		fprintf(f, "  OVERSUBSCRIBED: threads share cores, so these figures measure the "
			   "scheduler too; never read them as a ceiling\n");
	fprintf(f, "  conservation: offered %llu %s received + out_of_buffer + nombuf + app_dropped %llu: %s\n",
		(unsigned long long)k->offered, conserved ? "==" : "!=",
		(unsigned long long)(k->received + k->out_of_buffer + k->nombuf + k->app_dropped),
		conserved ? "ok" : "VIOLATED");
#ifdef RXRAY_VERB_CEILING
	/* cost model: a light-load run predicts its own ceiling (rxray/model.h) */
	double pred = NAN, head = NAN;
	if (c->rate_pps > 0)
		rxa_run_headroom(r, NULL, &pred, &head);
	/* a lossy run was not light load: its "prediction" is its own received
	 * rate, so none is printed as one */
	if (isfinite(pred) && isfinite(head) && !(r->loss > 0))
		fprintf(f, "  predicted ceiling %.3f Mpps (cost model from this run's laps%s), "
			   "headroom %.2fx the offered %.3f Mpps\n",
			pred, c->coalesce ? ", coalesced" : "", head, r->offered_mpps);
	if (isfinite(pred) && r->loss > 0)
		fprintf(f, "  no prediction: this run lost packets, so it was not light load; "
			   "%.3f Mpps received is what it measured\n", r->rx_mpps);
	const char *gen = rxa_run_generator(r);
	if (gen)
		fprintf(f, "  EXTERNAL GENERATOR: %s: the load came from outside rxray; offered is "
			   "what that generator sent\n", gen);
#endif
}

static void run_signals(void)
{
	struct sigaction sa;
	pthread_t tid;
	/* the watchdog first: the handler posts to its semaphore */
	if (sem_init(&run_sig_sem, 0, 0) == 0 &&
	    pthread_create(&tid, NULL, run_watchdog, NULL) == 0)
		pthread_detach(tid);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = run_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* A failed check or run as an exit code, with its line naming the option. */
static int run_fail(int rc, const char *err)
{
	char line[520];
	rxt_engine_opt_line(err[0] ? err : strerror(-rc), line, sizeof(line));
	rxu_err(VERB, "%s", line);
	return rc == -EINVAL ? RXU_EXIT_USAGE : RXU_EXIT_RUNTIME;
}

int rxt_cmd_run(int argc, char **argv)
{
	struct rx_config c;
	struct rx_caps caps;
	struct rxr_result *r = NULL;
	struct rxt_run_opts ro = {0};
	struct run_sample *smp = NULL;
	struct rx_run_watch watch, gwatch;
	struct run_gen *gen = NULL;
	volatile sig_atomic_t *gstop = NULL;
	bool gen_ok = true;
	char err[512];
	int ex;

	rx_config_defaults(&c);
	ex = rxt_config_parse_argv(VERB, argc, argv, &c, &ro);
	if (ex < 0) {
		run_help();
		return RXU_EXIT_OK;
	}
	if (ex)
		return ex;
	/* before anything starts: a run that cannot be sampled never runs */
	if (ro.sample_hz && (ex = rxt_run_sample_check(&c)))
		return ex;
	if (ro.generator && (ex = rxt_run_gen_open(ro.generator, &c, ro.sample_hz ? &watch : NULL,
					       &run_stop, &gen, &gwatch, &gstop)))
		return ex;
	const struct rx_engine_ops *ops = rxe_find(c.engine);
	err[0] = '\0';
	int rc = rxe_check(&c, 0, &caps, NULL, err, sizeof(err));
	if (rc < 0) {
		rxt_run_gen_close(gen);
		return run_fail(rc, err);
	}
	rxr_result_open(&r);
	if (!r) {
		rxu_err(VERB, "out of memory");
		return RXU_EXIT_RUNTIME;
	}
	if (ro.sample_hz && rxt_run_sample_open(ro.sample_hz, &smp, &watch) < 0) {
		rxu_err(VERB, "out of memory");
		ex = RXU_EXIT_RUNTIME;
		goto out;
	}
	run_signals();
	err[0] = '\0';
	rc = rx_run_exec_watched(ops, &c, r, gen ? gstop : &run_stop,
				 gen ? &gwatch : smp ? &watch : NULL, err, sizeof(err));
	/* stopped: what is left (summary, result) takes milliseconds */
	__atomic_store_n(&run_state, RUN_WRITING, __ATOMIC_RELEASE);
	if (rc == -EINVAL) {
		ex = run_fail(rc, err);
		goto out;
	}
	if (rc < 0) {
		rxu_err(VERB, "%s: %s", c.engine, err[0] ? err : strerror(-rc));
		ex = RXU_EXIT_RUNTIME;
		goto out;
	}
	if (smp && (rc = rxt_run_sample_finish(smp, r, err, sizeof(err))) < 0) {
		rxu_err(VERB, "%s", err);
		ex = RXU_EXIT_RUNTIME;
		goto out;
	}
	if (gen && (ex = rxt_run_gen_finish(gen, r, &gen_ok)))
		goto out;
	bool conserved = rxr_counters_conserved(&r->c);
	bool to_stdout = !strcmp(c.out, "-");
	if (!c.quiet)
		run_summary(to_stdout ? stderr : stdout, &c, &caps, r, conserved);
	if (!c.quiet && gen)
		rxt_run_gen_print(to_stdout ? stderr : stdout, r);
	if (c.out[0]) {
		__atomic_store_n(&run_state, RUN_WRITING, __ATOMIC_RELEASE);
		rc = rxr_result_write(r, c.out);
		__atomic_store_n(&run_state, RUN_FINISHED, __ATOMIC_RELEASE);
		if (rc < 0) {
			rxu_err(VERB, "%s: cannot write the result: %s", c.out, strerror(-rc));
			ex = rxt_cli_out_exit_code(rc);
			goto out;
		}
	}
	ex = RXU_EXIT_OK;
	if (!conserved) {
		rxu_err(VERB,
			"counters do not conserve: offered %llu != received %llu + out_of_buffer %llu + nombuf %llu + app_dropped %llu",
			(unsigned long long)r->c.offered, (unsigned long long)r->c.received,
			(unsigned long long)r->c.out_of_buffer, (unsigned long long)r->c.nombuf,
			(unsigned long long)r->c.app_dropped);
		ex = RXU_EXIT_RUNTIME;
	}
	if (!gen_ok) {
		rxu_err(VERB, "counters do not conserve against the generator's count (the "
			      "result's generator.conservation says by how much)");
		ex = RXU_EXIT_RUNTIME;
	}
out:
	__atomic_store_n(&run_state, RUN_FINISHED, __ATOMIC_RELEASE);
	rxt_run_gen_close(gen);
	rxt_run_sample_close(smp);
	rxr_result_free(r);
	return ex;
}
