/* SPDX-License-Identifier: MIT */
/*
 * lb_outfile.c - atomically replaced output files.
 *
 * open:   mkstemp("<path>.tmp.XXXXXX") in the target's own directory, so the
 *         final rename never crosses a filesystem.  A path that names a
 *         directory is refused up front (EISDIR): otherwise "dir" would
 *         quietly create "dir.tmp.*" next to it.  The temporary gets the
 *         mode of the file it replaces, or 0644 for a new file.
 * commit: fflush + fsync + fclose + rename, then fsync of the directory
 *         (best effort) so the new name itself is durable.
 * abort:  fclose + unlink.
 * After commit (either result) or abort the struct is cleared, so calling
 * lb_outfile_abort() on an unwind path is always safe, and so is calling it
 * after a failed open.
 */
#include "lb_outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TMP_SUFFIX ".tmp.XXXXXX"

static void clear(struct lb_outfile *f)
{
	free(f->path);
	free(f->tmp_path);
	f->fp = NULL;
	f->path = NULL;
	f->tmp_path = NULL;
}

int lb_outfile_open(struct lb_outfile *f, const char *path)
{
	struct stat st;
	mode_t mode = 0644;
	int fd, err;

	f->fp = NULL;
	f->path = NULL;
	f->tmp_path = NULL;
	if (!path || !*path)
		return EINVAL;
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return EISDIR;
		mode = st.st_mode & 07777;
	} else if (errno != ENOENT) {
		return errno; /* ENOTDIR (a parent is a file), EACCES, ... */
	}

	size_t len = strlen(path);
	f->path = strdup(path);
	f->tmp_path = malloc(len + sizeof(TMP_SUFFIX));
	if (!f->path || !f->tmp_path) {
		clear(f);
		return ENOMEM;
	}
	memcpy(f->tmp_path, path, len);
	memcpy(f->tmp_path + len, TMP_SUFFIX, sizeof(TMP_SUFFIX));

	fd = mkostemp(f->tmp_path, O_CLOEXEC); /* mkstemp + close-on-exec */
	if (fd < 0) {
		err = errno;
		clear(f);
		return err;
	}
	if (fchmod(fd, mode) != 0 || !(f->fp = fdopen(fd, "w"))) {
		err = errno;
		close(fd);
		unlink(f->tmp_path);
		clear(f);
		return err;
	}
	return 0;
}

/* fsync the directory holding path, so a completed rename survives a crash. */
static void sync_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	if (!slash)
		dir = strdup(".");
	else if (slash == path)
		dir = strdup("/");
	else
		dir = strndup(path, (size_t)(slash - path));
	if (!dir)
		return;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd); /* best effort: the data itself is already synced */
		close(fd);
	}
	free(dir);
}

int lb_outfile_commit(struct lb_outfile *f)
{
	int err = 0;
	if (!f->fp)
		return EINVAL;
	if (fflush(f->fp) != 0)
		err = errno;
	else if (ferror(f->fp))
		err = EIO; /* an earlier write failed */
	else if (fsync(fileno(f->fp)) != 0)
		err = errno;
	if (fclose(f->fp) != 0 && !err)
		err = errno;
	f->fp = NULL;
	if (!err && rename(f->tmp_path, f->path) != 0)
		err = errno;
	if (err)
		unlink(f->tmp_path);
	else
		sync_dir(f->path);
	clear(f);
	return err;
}

void lb_outfile_abort(struct lb_outfile *f)
{
	if (f->fp) {
		fclose(f->fp);
		unlink(f->tmp_path);
	}
	clear(f);
}
