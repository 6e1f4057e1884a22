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
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

int main(void)
{
	if (!mkdtemp(dir))
		tap_skip_all("mkdtemp failed");
	tap_diag("test_outfile: dir=%s", dir);
	test_commit_abort();
	test_bad_paths();
	rmdir(dir);
	return tap_done();
}
