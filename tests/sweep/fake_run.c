/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for `rxray run` with a known answer, so the sweep's process
 * handling and search can be tested without an engine: a device of
 * ceiling C = 20 Mpps x 1064 / frame (a quarter of that in hds) behind a
 * generator of 30 Mpps. It sleeps the trial's length and writes a real
 * rxray.run/1 document through the run-result writer. Some frames
 * misbehave on purpose: 666 crashes (SIGSEGV), 777 hangs, 888 is
 * rejected (exit 2), 999 fails (exit 1), and 555 loses 1% at every rate
 * (no load passes: the search finds no NDR). FAKE_RUN_LOG=path appends argv.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rxray/result.h"
#include "rxray/util.h"

int main(int argc, char **argv)
{
	const char *out = NULL, *mode = "single", *log = getenv("FAKE_RUN_LOG");
	double rate = 0, secs = 1;
	unsigned long frame = 1064;
	if (log) {
		FILE *f = fopen(log, "a");
		for (int i = 0; f && i < argc; i++)
			fprintf(f, "%s%s", i ? " " : "", argv[i]);
		if (f) {
			fputc('\n', f);
			fclose(f);
		}
	}
	if (argc < 2 || strcmp(argv[1], "run"))
		return 2;
	for (int i = 2; i + 1 < argc; i++) {
		if (!strcmp(argv[i], "--frame"))
			frame = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--rate"))
			rxu_parse_rate(argv[++i], &rate);
		else if (!strcmp(argv[i], "--seconds"))
			rxu_parse_seconds(argv[++i], 0.001, 100, &secs);
		else if (!strcmp(argv[i], "--mode"))
			mode = argv[++i];
		else if (!strcmp(argv[i], "-o"))
			out = argv[++i];
	}
	if (frame == 888) {
		fprintf(stderr, "rxray run: --frame: 888 is refused by the fake engine\n");
		return 2;
	}
	if (frame == 999) {
		fprintf(stderr, "rxray run: the fake engine failed\n");
		return 1;
	}
	if (frame == 666) {
		signal(SIGSEGV, SIG_DFL); /* past any sanitizer's handler */
		raise(SIGSEGV);
	}
	if (frame == 777)
		for (;;)
			pause();
	/*
	 * The trial's length, spent as a real run spends it. A stand-in for
	 * work, not a wait for a condition: nothing waits on it by time - the
	 * sweep waits for this process to exit and reads its result, and no
	 * test times it (a slow host only makes trials longer).
	 */
	struct timespec ts = {(time_t)secs, (long)((secs - floor(secs)) * 1e9)};
	nanosleep(&ts, NULL);
	double C = 20e6 * 1064.0 / (double)frame * (strcmp(mode, "hds") ? 1 : 0.25);
	double x = rate > 0 && rate < 30e6 ? rate : 30e6;
	struct rxr_result *r = NULL;
	rxr_result_open(&r);
	if (!r || !out)
		return 1;
	r->c.offered = (uint64_t)llround(x * secs);
	r->c.received = (uint64_t)llround(fmin(frame == 555 ? 0.99 * x : x, C) * secs);
	r->c.out_of_buffer = r->c.offered - r->c.received;
	rxr_result_set_rates(r, secs);
	snprintf(r->clock.source, sizeof(r->clock.source), "fake");
	r->clock.hz = 1e9;
	/* a run has a thread (readers check it): an rx thread at the rate */
	struct rxr_thread_result t = {.core = -1, .packets = r->c.received};
	snprintf(t.role, sizeof(t.role), "rx");
	t.busy_cycles = r->c.received * 50;
	if (rxr_result_add_thread(r, &t) < 0)
		return 1;
	json_object_set_new(r->config, "frame", json_integer((json_int_t)frame));
	json_object_set_new(r->config, "mode", json_string(mode));
	int rc = rxr_result_write(r, out);
	rxr_result_free(r);
	if (rc)
		fprintf(stderr, "rxray run: %s: cannot write the result: %s\n", out, strerror(-rc));
	return rc ? 1 : 0;
}
