/* SPDX-License-Identifier: MIT */
/* Loading a result set the same way in every analysis verb. */
#include <errno.h>

#include "cli.h"
#include "rxray/analyze.h"
#include "rxray/util.h"

int rxr_cli_set_load(const char *verb, const char *path, struct rxr_set **out)
{
	char err[RXR_ERR_LEN];
	int rc = rxr_set_load(path, out, err, sizeof(err));
	if (rc) {
		rxr_err(verb, "%s", err);
		return rc == -ENOMEM ? RXR_EXIT_RUNTIME : RXR_EXIT_USAGE;
	}
	if ((*out)->truncated_line)
		rxr_err(verb,
			"warning: %s: last line (%d) is truncated (a sweep killed mid-write?): skipped",
			path, (*out)->truncated_line);
	return RXR_EXIT_OK;
}
