/* SPDX-License-Identifier: MIT */
/*
 * The one output writer (rxray/afile.h) and the verbs' -o: what each kind
 * of target becomes, and that nothing is replaced that must not be.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../analyze/testutil.h"
#include "rxray/afile.h"
#include "rxray/util.h"

static char dir[64];

static void setup(void)
{
	cr_assert_not_null(tu_tmpdir(dir, sizeof(dir)));
}

static void teardown(void)
{
	tu_rmrf(dir);
}

TestSuite(afile, .init = setup, .fini = teardown);

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

static int write_via(const char *path, const char *text)
{
	struct rxr_afile af;
	int rc = rxr_afile_open(&af, path);
	if (rc)
		return rc;
	fputs(text, af.f);
	return rxr_afile_commit(&af);
}

/* Entries of dir other than . and .. (catches a temp file left behind). */
static int entries(void)
{
	char cmd[128];
	char *out = NULL;
	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", dir);
	cr_assert_eq(tu_run(cmd, &out), 0);
	int n = atoi(out);
	free(out);
	return n;
}

Test(afile, existing_file_keeps_its_mode_and_is_replaced_whole)
{
	char p[128];
	snprintf(p, sizeof(p), "%s/out.txt", dir);
	put(p, "old old old old\n");
	cr_assert_eq(chmod(p, 0600), 0);
	cr_assert_eq(write_via(p, "new\n"), 0);
	struct stat st;
	cr_assert_eq(stat(p, &st), 0);
	/* bug caught: a 0600 file became 0644 */
	cr_expect_eq(st.st_mode & 07777, 0600, "mode %o", st.st_mode & 07777);
	char *s = tu_slurp(p);
	cr_expect_str_eq(s, "new\n");
	free(s);
	cr_expect_eq(entries(), 1, "a temp file was left behind");
}

Test(afile, new_file_gets_the_umask_mode)
{
	char p[128];
	snprintf(p, sizeof(p), "%s/new.txt", dir);
	mode_t old = umask(027);
	int rc = write_via(p, "x");
	umask(old);
	cr_assert_eq(rc, 0);
	struct stat st;
	cr_assert_eq(stat(p, &st), 0);
	cr_expect_eq(st.st_mode & 07777, 0640, "mode %o", st.st_mode & 07777);
}

Test(afile, symlink_stays_a_link_and_its_target_is_written)
{
	char target[128], link[128], dangling[128], dtarget[128];
	snprintf(target, sizeof(target), "%s/target.txt", dir);
	snprintf(link, sizeof(link), "%s/link.txt", dir);
	put(target, "old\n");
	cr_assert_eq(symlink("target.txt", link), 0);
	cr_assert_eq(write_via(link, "via link\n"), 0);
	struct stat st;
	cr_assert_eq(lstat(link, &st), 0);
	/* bug caught: the link was replaced by a regular file */
	cr_expect(S_ISLNK(st.st_mode), "the link was replaced");
	char *s = tu_slurp(target);
	cr_expect_str_eq(s, "via link\n");
	free(s);
	/* a dangling link creates the file it names */
	snprintf(dangling, sizeof(dangling), "%s/dangling", dir);
	snprintf(dtarget, sizeof(dtarget), "%s/made.txt", dir);
	cr_assert_eq(symlink("made.txt", dangling), 0);
	cr_assert_eq(write_via(dangling, "made\n"), 0);
	cr_assert_eq(lstat(dangling, &st), 0);
	cr_expect(S_ISLNK(st.st_mode));
	s = tu_slurp(dtarget);
	cr_expect_str_eq(s, "made\n");
	free(s);
}

Test(afile, fifo_is_written_through_not_replaced)
{
	char p[128];
	snprintf(p, sizeof(p), "%s/fifo", dir);
	cr_assert_eq(mkfifo(p, 0600), 0);
	/* a reader first, so opening for writing does not wait */
	int rfd = open(p, O_RDONLY | O_NONBLOCK);
	cr_assert_geq(rfd, 0);
	struct rxr_afile af;
	cr_assert_eq(rxr_afile_open(&af, p), 0);
	cr_expect_eq(af.kind, RXR_AFILE_THROUGH);
	fputs("through\n", af.f);
	cr_assert_eq(rxr_afile_commit(&af), 0);
	char buf[32] = "";
	ssize_t n = read(rfd, buf, sizeof(buf) - 1);
	close(rfd);
	cr_expect_eq(n, 8);
	cr_expect_str_eq(buf, "through\n");
	struct stat st;
	cr_assert_eq(lstat(p, &st), 0);
	/* bug caught: the FIFO was replaced by a regular file */
	cr_expect(S_ISFIFO(st.st_mode));
	cr_expect_eq(entries(), 1);
}

Test(afile, devices_and_stdout_are_written_through)
{
	/* never committed unless written through, so a bug cannot replace /dev/null */
	const char *paths[] = {"/dev/null", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"};
	for (size_t i = 0; i < 4; i++) {
		struct rxr_afile af;
		cr_assert_eq(rxr_afile_open(&af, paths[i]), 0, "%s", paths[i]);
		bool through = af.kind == RXR_AFILE_THROUGH;
		cr_expect(through, "%s: not written through (kind %d)", paths[i], (int)af.kind);
		if (through)
			cr_expect_eq(rxr_afile_commit(&af), 0);
		else
			rxr_afile_abort(&af);
	}
	struct stat st;
	cr_assert_eq(stat("/dev/null", &st), 0);
	cr_expect(S_ISCHR(st.st_mode));
	struct rxr_afile af;
	cr_assert_eq(rxr_afile_open(&af, "-"), 0);
	cr_expect_eq(af.kind, RXR_AFILE_STDOUT);
	cr_expect_eq(af.f, stdout);
	cr_expect_eq(rxr_afile_commit(&af), 0);
}

Test(afile, directory_and_missing_folder_are_refused)
{
	struct rxr_afile af;
	char p[128], err[256];
	cr_expect_eq(rxr_afile_open_err(&af, dir, err, sizeof(err)), -EISDIR);
	cr_expect(strstr(err, "is a directory"), "%s", err);
	snprintf(p, sizeof(p), "%s/nothere/", dir);
	cr_expect_eq(rxr_afile_open(&af, p), -EISDIR);
	snprintf(p, sizeof(p), "%s/nothere/x.txt", dir);
	cr_expect_eq(rxr_afile_open(&af, p), -ENOENT);
	cr_expect_eq(entries(), 0);
}

Test(afile, abort_keeps_the_old_file_and_leaves_nothing)
{
	char p[128];
	snprintf(p, sizeof(p), "%s/keep.txt", dir);
	put(p, "keep\n");
	struct rxr_afile af;
	cr_assert_eq(rxr_afile_open(&af, p), 0);
	fputs("half", af.f);
	rxr_afile_abort(&af);
	char *s = tu_slurp(p);
	cr_expect_str_eq(s, "keep\n");
	free(s);
	cr_expect_eq(entries(), 1);
}

/* ------------------------------------------------------------ the verbs */

#define SWEEP FIXTURES "/sweep"

Test(afile, every_verb_keeps_special_outputs)
{
	char p[128], cmd[1024], *out = NULL;
	/* a 0600 file, a link and a FIFO given to -o, for each file-writing verb */
	const char *verbs[] = {RXRAY_BIN " ceiling " SWEEP, RXRAY_BIN " diff " SWEEP " mode=single mode=hds",
			       RXRAY_BIN " flame " SWEEP};
	for (size_t v = 0; v < 3; v++) {
		snprintf(p, sizeof(p), "%s/f%zu", dir, v);
		put(p, "x");
		cr_assert_eq(chmod(p, 0600), 0);
		snprintf(cmd, sizeof(cmd), "%s -o %s", verbs[v], p);
		cr_expect_eq(tu_run(cmd, &out), 0, "%s: %s", cmd, out);
		free(out);
		struct stat st;
		cr_assert_eq(stat(p, &st), 0);
		cr_expect_eq(st.st_mode & 07777, 0600, "%s: mode %o", cmd, st.st_mode & 07777);
		cr_expect_gt(st.st_size, 1);

		char l[160];
		snprintf(l, sizeof(l), "%s/l%zu", dir, v);
		cr_assert_eq(symlink(p, l), 0);
		snprintf(cmd, sizeof(cmd), "%s -o %s", verbs[v], l);
		cr_expect_eq(tu_run(cmd, &out), 0, "%s: %s", cmd, out);
		free(out);
		cr_assert_eq(lstat(l, &st), 0);
		cr_expect(S_ISLNK(st.st_mode), "%s: link replaced", cmd);

		/* a FIFO with a reader: the output arrives through it */
		char ff[160], got[180];
		snprintf(ff, sizeof(ff), "%s/p%zu", dir, v);
		snprintf(got, sizeof(got), "%s/got%zu", dir, v);
		cr_assert_eq(mkfifo(ff, 0600), 0);
		snprintf(cmd, sizeof(cmd), "cat %s > %s & timeout 60 %s -o %s; r=$?; wait; exit $r", ff, got,
			 verbs[v], ff);
		cr_expect_eq(tu_run(cmd, &out), 0, "%s: %s", cmd, out);
		free(out);
		cr_assert_eq(lstat(ff, &st), 0);
		cr_expect(S_ISFIFO(st.st_mode), "%s: FIFO replaced", cmd);
		cr_assert_eq(stat(got, &st), 0);
		cr_expect_gt(st.st_size, 10, "%s: nothing came through the FIFO", cmd);

		/* a directory: exit 2, one line */
		snprintf(cmd, sizeof(cmd), "%s -o %s 2>&1 >/dev/null", verbs[v], dir);
		cr_expect_eq(tu_run(cmd, &out), 2, "%s", cmd);
		cr_expect(out && strstr(out, "is a directory") && strchr(out, '\n') == out + strlen(out) - 1,
			  "%s: %s", cmd, out);
		free(out);
		/* '-' is stdout */
		snprintf(cmd, sizeof(cmd), "%s -o - | wc -c", verbs[v]);
		cr_expect_eq(tu_run(cmd, &out), 0);
		cr_expect_gt(atoi(out), 10, "%s: %s", cmd, out);
		free(out);
	}
}

Test(afile, report_to_stdout_and_never_into_a_file)
{
	char cmd[1024], *out = NULL, p[128];
	/* -o -: the self-contained HTML on stdout, no folder left in TMPDIR */
	snprintf(cmd, sizeof(cmd), "TMPDIR=%s %s report %s -o - | grep -c '</html>'", dir, RXRAY_BIN, SWEEP);
	cr_expect_eq(tu_run(cmd, &out), 0, "%s", out);
	cr_expect_eq(atoi(out), 1, "%s", out);
	free(out);
	cr_expect_eq(entries(), 0, "the temp report folder was left behind");
	/* a regular file where the folder should go: exit 2, file untouched */
	snprintf(p, sizeof(p), "%s/file", dir);
	put(p, "mine");
	snprintf(cmd, sizeof(cmd), "%s report %s -o %s 2>&1", RXRAY_BIN, SWEEP, p);
	cr_expect_eq(tu_run(cmd, &out), 2, "%s", out);
	free(out);
	char *s = tu_slurp(p);
	cr_expect_str_eq(s, "mine");
	free(s);
}
