/* SPDX-License-Identifier: MIT */
/*
 * test_outfile.c - atomic output files: commit puts exactly the content in
 * place and leaves no temporary; abort leaves nothing; bad paths fail with
 * an errno and create nothing.  Tests run as root, so unwritable paths are
 * made structurally (missing directory, parent that is a file, /proc), not
 * with permission bits.
 */
#include "lb_outfile.h"
#include "tap.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static char dir[] = "/tmp/lb-test-outfile.XXXXXX";

/* Entries in dir other than . and .. */
static int dir_entries(const char *path)
{
	int n = 0;
	DIR *d = opendir(path);
	struct dirent *e;
	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* Entries in /tmp whose name starts with prefix (stray temporaries). */
static int tmp_entries_with_prefix(const char *prefix)
{
	int n = 0;
	DIR *d = opendir("/tmp");
	struct dirent *e;
	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
	closedir(d);
	return n;
}

static bool file_is(const char *path, const char *content)
{
	char buf[256];
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strcmp(buf, content) == 0;
}

static void test_commit_abort(void)
{
	char path[PATH_MAX];
	struct lb_outfile f;
	struct stat st;
	snprintf(path, sizeof(path), "%s/out.json", dir);

	int err = lb_outfile_open(&f, path);
	tap_ok(err == 0 && f.fp, "open in a fresh directory");
	tap_ok(err == 0 && access(path, F_OK) != 0, "target does not exist before commit");
	fputs("{\"v\": 1}\n", f.fp);
	tap_ok(lb_outfile_commit(&f) == 0, "commit");
	tap_ok(file_is(path, "{\"v\": 1}\n"), "committed file has the content");
	tap_ok(dir_entries(dir) == 1, "no temporary left after commit");
	tap_ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644, "new file has mode 0644");

	lb_outfile_open(&f, path);
	fputs("half-writ", f.fp);
	lb_outfile_abort(&f);
	tap_ok(file_is(path, "{\"v\": 1}\n") && dir_entries(dir) == 1, "abort keeps the old file, no temporary");
	lb_outfile_abort(&f); /* cleared: a second abort is a no-op */

	lb_outfile_open(&f, path);
	fputs("second\n", f.fp);
	tap_ok(lb_outfile_commit(&f) == 0 && file_is(path, "second\n") && dir_entries(dir) == 1,
	       "commit replaces an existing file");
	unlink(path);

	lb_outfile_open(&f, path);
	fputs("never", f.fp);
	lb_outfile_abort(&f);
	tap_ok(access(path, F_OK) != 0 && dir_entries(dir) == 0, "abort of a new file leaves nothing");
}

/* What a signal handler calls before the process dies: every temporary
 * still pending goes, committed files and direct outputs stay. */
static void test_unlink_pending(void)
{
	char done[PATH_MAX], a[PATH_MAX], b[PATH_MAX];
	struct lb_outfile fd, fa, fb, fnull;
	snprintf(done, sizeof(done), "%s/done.json", dir);
	snprintf(a, sizeof(a), "%s/a.json", dir);
	snprintf(b, sizeof(b), "%s/b.csv", dir);

	lb_outfile_open(&fd, done);
	fputs("kept\n", fd.fp);
	lb_outfile_commit(&fd);
	int ea = lb_outfile_open(&fa, a), eb = lb_outfile_open(&fb, b);
	int en = lb_outfile_open(&fnull, "/dev/null");
	tap_ok(!ea && !eb && !en && dir_entries(dir) == 3, "two pending temporaries beside a committed file");
	lb_outfile_unlink_pending();
	tap_ok(dir_entries(dir) == 1 && file_is(done, "kept\n"),
	       "unlink_pending removes both temporaries and keeps the committed file");
	tap_ok(access("/dev/null", W_OK) == 0, "and leaves a direct output (/dev/null) alone");
	lb_outfile_abort(&fa);
	lb_outfile_abort(&fb);
	lb_outfile_abort(&fnull);
	lb_outfile_unlink_pending(); /* nothing pending: a no-op */
	tap_ok(dir_entries(dir) == 1, "abort after unlink_pending: nothing created");
	unlink(done);
}

static void expect_fail(const char *path, const char *what)
{
	struct lb_outfile f;
	int err = lb_outfile_open(&f, path);
	tap_ok(err != 0 && f.fp == NULL, "%s: open fails (%s)", what, err ? strerror(err) : "no error");
	lb_outfile_abort(&f); /* safe after a failed open */
}

static void test_bad_paths(void)
{
	char path[PATH_MAX], base[64];
	snprintf(base, sizeof(base), "%s.tmp.", strrchr(dir, '/') + 1);

	snprintf(path, sizeof(path), "%s/missing/out.json", dir);
	expect_fail(path, "missing directory");
	tap_ok(dir_entries(dir) == 0, "missing directory: nothing created");

	expect_fail(dir, "path is a directory");
	snprintf(path, sizeof(path), "%s/", dir);
	expect_fail(path, "path is a directory with a trailing slash");
	tap_ok(dir_entries(dir) == 0 && tmp_entries_with_prefix(base) == 0, "directory: nothing created beside or in it");

	snprintf(path, sizeof(path), "%s/file", dir);
	FILE *f = fopen(path, "w");
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s/file/out.json", dir);
	expect_fail(path, "parent is a regular file");
	tap_ok(dir_entries(dir) == 1, "parent is a file: nothing created");
	snprintf(path, sizeof(path), "%s/file", dir);
	unlink(path);

	expect_fail("/proc/lb-test-outfile.json", "under /proc");
	tap_ok(access("/proc/lb-test-outfile.json", F_OK) != 0, "under /proc: nothing created");
	expect_fail("", "empty path");
}

/* Issue 15 item 2: non-regular targets, symlinks, read-only files, "-". */
static void test_targets(void)
{
	char path[PATH_MAX], lnk[PATH_MAX], link2[PATH_MAX], fifo[PATH_MAX];
	struct lb_outfile f;
	struct stat st, before;

	/* A copy of /dev/null (a character device node) is written, not replaced. */
	snprintf(path, sizeof(path), "%s/null", dir);
	if (mknod(path, S_IFCHR | 0666, makedev(1, 3)) == 0) {
		stat(path, &before);
		int err = lb_outfile_open(&f, path);
		if (!err)
			fputs("{}\n", f.fp);
		err = err ? err : lb_outfile_commit(&f);
		tap_ok(err == 0 && stat(path, &st) == 0 && S_ISCHR(st.st_mode) &&
			       st.st_ino == before.st_ino && dir_entries(dir) == 1,
		       "device node: written in place, still the same device, no temporary (%s)",
		       strerror(err));
		unlink(path);
	} else {
		tap_ok(true, "# SKIP mknod not permitted: %s", strerror(errno));
	}
	/* A copy of /dev/full: the write error comes back from commit. */
	snprintf(path, sizeof(path), "%s/full", dir);
	if (mknod(path, S_IFCHR | 0666, makedev(1, 7)) == 0) {
		int err = lb_outfile_open(&f, path);
		if (!err)
			for (int i = 0; i < 10000; i++)
				fputs("0123456789", f.fp);
		int cerr = err ? 0 : lb_outfile_commit(&f);
		tap_ok(err == 0 && cerr == ENOSPC && stat(path, &st) == 0 && S_ISCHR(st.st_mode),
		       "/dev/full copy: commit reports ENOSPC, the node stays (%s)", strerror(cerr));
		unlink(path);
	} else {
		tap_ok(true, "# SKIP mknod not permitted: %s", strerror(errno));
	}
	/* A FIFO with a reader gets the data; without one, open refuses (no hang). */
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	tap_ok(mkfifo(fifo, 0644) == 0, "mkfifo");
	int err = lb_outfile_open(&f, fifo);
	tap_ok(err == ENXIO && f.fp == NULL, "FIFO without a reader: ENXIO, not a hang (%s)",
	       strerror(err));
	int rfd = open(fifo, O_RDONLY | O_NONBLOCK);
	err = lb_outfile_open(&f, fifo);
	if (!err)
		fputs("through the fifo\n", f.fp);
	err = err ? err : lb_outfile_commit(&f);
	char buf[64] = "";
	ssize_t n = rfd >= 0 ? read(rfd, buf, sizeof(buf) - 1) : -1;
	buf[n > 0 ? n : 0] = '\0';
	tap_ok(err == 0 && strcmp(buf, "through the fifo\n") == 0 && stat(fifo, &st) == 0 &&
		       S_ISFIFO(st.st_mode) && dir_entries(dir) == 1,
	       "FIFO with a reader: data arrives, FIFO stays, no temporary");
	if (rfd >= 0)
		close(rfd);
	unlink(fifo);

	/* A symlink is followed: its target is replaced atomically, the link stays. */
	snprintf(path, sizeof(path), "%s/real.json", dir);
	snprintf(lnk, sizeof(lnk), "%s/link.json", dir);
	snprintf(link2, sizeof(link2), "%s/link2.json", dir);
	FILE *fp = fopen(path, "w");
	if (fp) {
		fputs("old\n", fp);
		fclose(fp);
	}
	tap_ok(symlink("real.json", lnk) == 0 && symlink(lnk, link2) == 0, "relative and absolute links");
	err = lb_outfile_open(&f, link2);
	if (!err)
		fputs("new\n", f.fp);
	err = err ? err : lb_outfile_commit(&f);
	tap_ok(err == 0 && lstat(lnk, &st) == 0 && S_ISLNK(st.st_mode) && lstat(link2, &st) == 0 &&
		       S_ISLNK(st.st_mode) && file_is(path, "new\n") && dir_entries(dir) == 3,
	       "link -> link -> file: both links stay, the file has the new content");
	unlink(path);
	err = lb_outfile_open(&f, lnk);
	if (!err)
		fputs("created\n", f.fp);
	err = err ? err : lb_outfile_commit(&f);
	tap_ok(err == 0 && lstat(lnk, &st) == 0 && S_ISLNK(st.st_mode) && file_is(path, "created\n"),
	       "dangling link: its target is created, the link stays");
	tap_ok(lb_outfile_same_target(link2, path) && lb_outfile_same_target(lnk, "/nonexistent") == false,
	       "same_target: a link and its target are the same; different files are not");
	unlink(lnk);
	unlink(link2);

	/* Read-only regular file: refused up front, even as root, and untouched. */
	chmod(path, 0444);
	err = lb_outfile_open(&f, path);
	tap_ok(err == EACCES && f.fp == NULL && file_is(path, "created\n") && dir_entries(dir) == 1,
	       "0444 file: EACCES at open, content kept, no temporary (%s)", strerror(err));
	lb_outfile_abort(&f);
	chmod(path, 0644);

	/* Same file under two names. */
	char dotted[PATH_MAX], hard[PATH_MAX], other[PATH_MAX];
	snprintf(dotted, sizeof(dotted), "%s/./real.json", dir);
	snprintf(hard, sizeof(hard), "%s/hard.json", dir);
	snprintf(other, sizeof(other), "%s/other.json", dir);
	tap_ok(link(path, hard) == 0 && lb_outfile_same_target(path, hard), "same_target: hard links");
	tap_ok(lb_outfile_same_target(path, dotted), "same_target: ./ in the path");
	tap_ok(!lb_outfile_same_target(path, other) && !lb_outfile_same_target(other, path),
	       "same_target: a new file is not an existing one");
	char new1[PATH_MAX];
	snprintf(new1, sizeof(new1), "%s/sub/../new.json", dir);
	mkdir(strcat(strcpy(lnk, dir), "/sub"), 0755);
	snprintf(other, sizeof(other), "%s/new.json", dir);
	tap_ok(lb_outfile_same_target(new1, other), "same_target: two spellings of one new file");
	tap_ok(lb_outfile_same_target("-", "-") && lb_outfile_same_target("-", "/dev/stdout"),
	       "same_target: '-' twice, '-' and /dev/stdout");
	rmdir(lnk);
	unlink(hard);
	unlink(path);

	/* "-" is standard output, written directly and never closed. */
	err = lb_outfile_open(&f, "-");
	tap_ok(err == 0 && f.fp == stdout, "'-' is stdout");
	if (!err)
		fputs("# written through '-'\n", f.fp);
	tap_ok(!err && lb_outfile_commit(&f) == 0 && fileno(stdout) == 1 && fflush(stdout) == 0,
	       "commit of '-' leaves stdout open");
	tap_ok(dir_entries(dir) == 0, "nothing left in the directory");
}

int main(void)
{
	if (!mkdtemp(dir))
		tap_skip_all("mkdtemp failed");
	tap_diag("test_outfile: dir=%s", dir);
	test_commit_abort();
	test_unlink_pending();
	test_bad_paths();
	test_targets();
	rmdir(dir);
	return tap_done();
}
