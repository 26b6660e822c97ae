/* SPDX-License-Identifier: MIT */
/*
 * The sweep's knobs: the knob table's sweep rows, by sweep index, and the
 * check that the table gives the sweep what it handles by name. The spec
 * parser, the matrix and the trials all read them, so they sit below all
 * three.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rxray/engines.h"
#include "rxray/sweep.h"
#include "spec_int.h"

/*
 * The spec's knobs are the knob table's sweep rows (rx_knob.sweep, in key
 * order): types, ranges, value names and messages are the table's
 * (rx_config_set), so a value the spec accepts is one `rxray run`
 * accepts. A field is a knob's name with '_' for '-', or one of the
 * row's spec names (the plural a matrix reads naturally in).
 *
 * sweep_row is shared through spec_int.h: the spec parser reads a row's
 * type and spec names.
 */
const struct rx_knob *sweep_row(size_t k)
{
	for (size_t i = 0; i < rx_knob_count(); i++)
		if (rx_knob_at(i)->sweep == k + 1)
			return rx_knob_at(i);
	return NULL;
}

/*
 * The names below are the sweep code's only ties to particular knobs;
 * each is looked up in the table (sweep_knob_find) where it is used.
 */
const char *const sweep_knobs_used[] = {
	"engine", /* parsed against the engine list; defaults; drops */
	"mode",	  /* defaults; hds-only knobs dropped from single */
	"frame",  /* defaults; traffic_cmd's {frame} */
	"queues", /* defaults; the placement's rx workers */
	"ring",	  /* defaults */
	"burst",  /* the calibration trials' coalescing */
	"inject", /* "none", '+'-joined entries, one --inject each */
	"device", /* defaults; last in the key; sim or traffic_cmd */
	NULL,
};

size_t sweep_knob_count(void)
{
	size_t n = 0;
	for (size_t i = 0; i < rx_knob_count(); i++)
		if (rx_knob_at(i)->sweep > n)
			n = rx_knob_at(i)->sweep;
	/* the arrays' bound; such a table fails sweep_knobs_check */
	return n < SWEEP_KNOBS_CAP ? n : SWEEP_KNOBS_CAP;
}

int sweep_knob_find(const char *name)
{
	const struct rx_knob *rk = rx_knob_find(name);
	if (!rk || !rk->sweep || rk->sweep > SWEEP_KNOBS_CAP)
		return -1;
	return (int)rk->sweep - 1;
}

int sweep_knobs_check(char *err, size_t errlen)
{
	unsigned rows[SWEEP_KNOBS_CAP] = {0};
	unsigned last = 0;
	for (size_t i = 0; i < rx_knob_count(); i++) {
		const struct rx_knob *rk = rx_knob_at(i);
		if (rk->sweep > SWEEP_KNOBS_CAP) {
			snprintf(err, errlen,
				 "knob table: %s has sweep position %u, past the sweep's "
				 "capacity of %d knobs (RX_KNOB_SWEEP_MAX)",
				 rk->name, rk->sweep, SWEEP_KNOBS_CAP);
			return -ENOSPC;
		}
		if (rk->sweep) {
			rows[rk->sweep - 1]++;
			if (rk->sweep > last)
				last = rk->sweep;
		}
	}
	for (unsigned k = 0; k < last; k++)
		if (rows[k] != 1) {
			snprintf(err, errlen, "knob table: sweep position %u has %u rows (one each, "
				 "1..%u)", k + 1, rows[k], last);
			return -EINVAL;
		}
	for (const char *const *n = sweep_knobs_used; *n; n++)
		if (sweep_knob_find(*n) < 0) {
			snprintf(err, errlen, "knob table: no sweep knob %s (the sweep handles it "
				 "by name)", *n);
			return -EINVAL;
		}
	return 0;
}

const char *sweep_knob_name(size_t k)
{
	static char names[SWEEP_KNOBS_CAP][32];
	const struct rx_knob *rk = k < SWEEP_KNOBS_CAP ? sweep_row(k) : NULL;
	if (!rk || strlen(rk->name) >= sizeof(names[0]))
		return NULL;
	char name[sizeof(names[0])];
	for (size_t i = 0; i <= strlen(rk->name); i++)
		name[i] = rk->name[i] == '-' ? '_' : rk->name[i];
	/* written once: later calls only read (trials run on several threads) */
	if (strcmp(names[k], name))
		memcpy(names[k], name, sizeof(name));
	return names[k];
}
