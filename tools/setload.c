/* SPDX-License-Identifier: MIT */
/* Loading a result set the same way in every analysis verb. */
#include <errno.h>
#include <string.h>

#include "cli.h"
#include "rxray/analyze.h"
#include "rxray/util.h"

int rxt_cli_set_load(const char *verb, const char *path, struct rxa_set **out)
{
	char err[RXA_ERR_LEN];
	size_t bad;
	*out = NULL;
	/* the path is written into JSON, Markdown and HTML, which all need UTF-8 */
	if (!rxu_utf8_valid(path, strlen(path), &bad)) {
		rxu_err(verb, "%.*s...: the path is not valid UTF-8 (byte %zu); rename it or link to it",
			(int)bad, path, bad + 1);
		return RXU_EXIT_USAGE;
	}
	int rc = rxa_set_load(path, out, err, sizeof(err));
	if (rc) {
		rxu_err(verb, "%s", err);
		return rc == -ENOMEM ? RXU_EXIT_RUNTIME : RXU_EXIT_USAGE;
	}
	/* a torn tail is for `rxray sweep --resume` to drop (sweeps/store.c),
	 * saying so; a reader takes no file with bytes that are not a record */
	if ((*out)->truncated_line) {
		int line = (*out)->truncated_line;
		rxa_set_free(*out);
		*out = NULL;
		return rxu_usage_err(verb,
				     "%s: line %d is not a whole record (no newline after it: a sweep "
				     "killed mid-write?); rxray sweep --resume drops it, or cut it",
				     path, line);
	}
	return RXU_EXIT_OK;
}
