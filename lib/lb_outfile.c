/* SPDX-License-Identifier: MIT */
/*
 * lb_outfile.c - output files: atomic replacement of regular files, direct
 * writes to everything else (see lb_outfile.h for the rules).
 *
 * open:   "-" and paths that are our stdout/stderr use that stream.  Other
 *         paths have their symlinks resolved by hand (readlink, at most
 *         MAX_LINKS levels), so the rename replaces the link's target and
 *         never the link.  An existing non-regular target is opened
 *         O_WRONLY (O_NONBLOCK for the open only: a FIFO without a reader
 *         fails with ENXIO instead of hanging).  Otherwise mkstemp
 *         "<target>.tmp.XXXXXX" in the target's own directory, so the final
 *         rename never crosses a filesystem; the temporary gets the mode of
 *         the file it replaces, or 0644 for a new file.
 * commit: fflush + fsync + fclose + rename, then fsync of the directory
 *         (best effort) so the new name itself is durable; direct: fflush
 *         (+ close when we opened it).
 * abort:  fclose + unlink of the temporary.
 * After commit (either result) or abort the struct is cleared, so calling
 * lb_outfile_abort() on an unwind path is always safe, and so is calling it
 * after a failed open.
 */
#include "lb_outfile.h"
#include "lb_cli.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TMP_SUFFIX ".tmp.XXXXXX"
#define MAX_LINKS 40 /* the kernel's own limit on nested symlinks */

/*
 * Temporaries of outputs not yet committed or aborted, for
 * lb_outfile_unlink_pending(): a signal handler gets no context, so this is
 * the module's one piece of global state.  Slots are claimed and released
 * with CAS; a full table (more outputs open at once than any command has)
 * only means the extra temporaries are not removed by a signal.
 */
#define PENDING_MAX 8
static _Atomic(char *) pending[PENDING_MAX];

static void pending_add(char *tmp)
{
	for (int i = 0; i < PENDING_MAX; i++) {
		char *none = NULL;
		/* Release: the name is complete before another thread (rt's
		 * watchdog) can see the pointer; pairs with the acquire load
		 * in lb_outfile_unlink_pending. */
		if (atomic_compare_exchange_strong_explicit(&pending[i], &none, tmp,
							    memory_order_release,
							    memory_order_relaxed))
			return;
	}
}

static void pending_del(const char *tmp)
{
	for (int i = 0; i < PENDING_MAX; i++) {
		char *mine = (char *)tmp;
		/* Relaxed: clearing publishes nothing; the caller frees the name
		 * only after this, and nobody unlinks it from then on. */
		if (atomic_compare_exchange_strong_explicit(&pending[i], &mine, NULL,
							    memory_order_relaxed,
							    memory_order_relaxed))
			return;
	}
}

void lb_outfile_unlink_pending(void)
{
	for (int i = 0; i < PENDING_MAX; i++) {
		/* Acquire: pairs with pending_add's release (see there). */
		char *tmp = atomic_load_explicit(&pending[i], memory_order_acquire);
		if (tmp)
			unlink(tmp); /* async-signal-safe */
	}
}

static void clear(struct lb_outfile *f)
{
	free(f->path);
	free(f->tmp_path);
	f->fp = NULL;
	f->path = NULL;
	f->tmp_path = NULL;
	f->direct = false;
	f->is_std = false;
}

/* The directory part of path ("." for a bare name, "/" for "/x"). */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

/*
 * Follow symlinks in the last component of `path` until it names a
 * non-link or nothing.  Returns a malloc'ed name, or NULL with errno
 * (ELOOP, ENAMETOOLONG, EACCES on a parent, ENOMEM...).
 */
static char *follow_links(const char *path)
{
	char *cur = strdup(path);
	for (int depth = 0; cur; depth++) {
		struct stat st;
		if (lstat(cur, &st) != 0) {
			if (errno == ENOENT)
				return cur; /* does not exist (yet): this is the name */
			free(cur);
			return NULL;
		}
		if (!S_ISLNK(st.st_mode))
			return cur;
		if (depth == MAX_LINKS) {
			free(cur);
			errno = ELOOP;
			return NULL;
		}
		char target[PATH_MAX];
		ssize_t n = readlink(cur, target, sizeof(target) - 1);
		if (n < 0 || n == (ssize_t)sizeof(target) - 1) {
			int err = n < 0 ? errno : ENAMETOOLONG;
			free(cur);
			errno = err;
			return NULL;
		}
		target[n] = '\0';
		char *next;
		if (target[0] == '/') {
			next = strdup(target);
		} else {
			/* Relative to the directory holding the link. */
			char *dir = dir_of(cur);
			size_t len = dir ? strlen(dir) + 1 + (size_t)n + 1 : 0;
			next = dir ? malloc(len) : NULL;
			if (next)
				snprintf(next, len, "%s/%s", dir, target);
			free(dir);
		}
		free(cur);
		cur = next;
	}
	errno = ENOMEM;
	return NULL;
}

/* The stream (stdout, stderr) whose file `st` is, or NULL. */
static FILE *std_stream_for(const struct stat *st)
{
	static const int fds[] = { STDOUT_FILENO, STDERR_FILENO };
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		struct stat s;
		if (fstat(fds[i], &s) == 0 && s.st_dev == st->st_dev && s.st_ino == st->st_ino)
			return fds[i] == STDOUT_FILENO ? stdout : stderr;
	}
	return NULL;
}

static int open_std(struct lb_outfile *f, FILE *stream, const char *path)
{
	f->path = strdup(path);
	if (!f->path)
		return ENOMEM;
	f->fp = stream;
	f->direct = true;
	f->is_std = true;
	return 0;
}

/* An existing device, FIFO, socket...: write it in place, never replace it. */
static int open_direct(struct lb_outfile *f, const char *path)
{
	int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return errno; /* ENXIO: a FIFO with no reader */
	/* Blocking again for the writes (a pipe reader may be slower than us). */
	int flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0 ||
	    !(f->path = strdup(path)) || !(f->fp = fdopen(fd, "w"))) {
		int err = errno ? errno : ENOMEM;
		close(fd);
		clear(f);
		return err;
	}
	f->direct = true;
	return 0;
}

/* A regular file we must not replace: no write permission for anyone we are. */
static int check_writable(const char *path, const struct stat *st)
{
	if (geteuid() == 0) /* root passes access(); the mode still says "read-only" */
		return (st->st_mode & 0222) ? 0 : EACCES;
	return faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) == 0 ? 0 : errno;
}

int lb_outfile_open(struct lb_outfile *f, const char *path)
{
	struct stat st;
	mode_t mode = 0644;
	int fd, err;

	f->fp = NULL;
	f->path = NULL;
	f->tmp_path = NULL;
	f->direct = false;
	f->is_std = false;
	if (!path || !*path)
		return EINVAL;
	if (strcmp(path, "-") == 0)
		return open_std(f, stdout, path);
	if (stat(path, &st) == 0) {
		FILE *stream = std_stream_for(&st);
		if (stream)
			return open_std(f, stream, path);
		if (S_ISDIR(st.st_mode))
			return EISDIR;
		if (!S_ISREG(st.st_mode))
			return open_direct(f, path);
		err = check_writable(path, &st);
		if (err)
			return err;
		mode = st.st_mode & 07777;
	} else if (errno != ENOENT) {
		return errno; /* ENOTDIR (a parent is a file), EACCES, ELOOP... */
	}

	char *target = follow_links(path);
	if (!target)
		return errno;
	size_t len = strlen(target);
	f->path = target;
	f->tmp_path = malloc(len + sizeof(TMP_SUFFIX));
	if (!f->tmp_path) {
		clear(f);
		return ENOMEM;
	}
	memcpy(f->tmp_path, target, len);
	memcpy(f->tmp_path + len, TMP_SUFFIX, sizeof(TMP_SUFFIX));

	/* The signals that end a command (they unlink the pending temporaries)
	 * are held off between creating the temporary and registering it, so
	 * one landing in between cannot leave the file behind. */
	sigset_t stop, old;
	lb_stop_signal_set(&stop);
	pthread_sigmask(SIG_BLOCK, &stop, &old);
	fd = mkostemp(f->tmp_path, O_CLOEXEC); /* mkstemp + close-on-exec */
	err = errno;
	if (fd >= 0)
		pending_add(f->tmp_path);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (fd < 0) {
		clear(f);
		return err;
	}
	if (fchmod(fd, mode) != 0 || !(f->fp = fdopen(fd, "w"))) {
		err = errno;
		close(fd);
		unlink(f->tmp_path);
		pending_del(f->tmp_path);
		clear(f);
		return err;
	}
	return 0;
}

/* fsync the directory holding path, so a completed rename survives a crash. */
static void sync_dir(const char *path)
{
	char *dir = dir_of(path);
	if (!dir)
		return;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd); /* best effort: the data itself is already synced */
		close(fd);
	}
	free(dir);
}

static int commit_direct(struct lb_outfile *f)
{
	int err = 0;
	if (fflush(f->fp) != 0)
		err = errno;
	else if (ferror(f->fp))
		err = EIO; /* an earlier write failed (ENOSPC on /dev/full...) */
	if (!f->is_std && fclose(f->fp) != 0 && !err)
		err = errno;
	clear(f);
	return err;
}

int lb_outfile_commit(struct lb_outfile *f)
{
	int err = 0;
	if (!f->fp)
		return EINVAL;
	if (f->direct)
		return commit_direct(f);
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
	/* After the rename: a signal in between only unlinks a gone name. */
	pending_del(f->tmp_path);
	if (!err)
		sync_dir(f->path);
	clear(f);
	return err;
}

void lb_outfile_abort(struct lb_outfile *f)
{
	if (f->fp && f->direct) {
		if (!f->is_std)
			fclose(f->fp);
	} else if (f->fp) {
		fclose(f->fp);
		unlink(f->tmp_path);
		pending_del(f->tmp_path);
	}
	clear(f);
}

/*
 * A name for comparing outputs: symlinks followed, then the directory
 * resolved with realpath() (it must exist for the output to be writable)
 * and the last component appended.  NULL when it cannot be resolved.
 */
static char *canonical_name(const char *path)
{
	char *target = follow_links(path);
	if (!target)
		return NULL;
	char *dir = dir_of(target);
	const char *slash = strrchr(target, '/');
	const char *base = slash ? slash + 1 : target;
	char *real = dir ? realpath(dir, NULL) : NULL;
	char *out = NULL;
	if (real) {
		size_t len = strlen(real) + 1 + strlen(base) + 1;
		out = malloc(len);
		if (out)
			snprintf(out, len, "%s/%s", strcmp(real, "/") ? real : "", base);
	}
	free(real);
	free(dir);
	free(target);
	return out;
}

/* stat() of an output name; "-" is our standard output. */
static int stat_output(const char *path, struct stat *st)
{
	return strcmp(path, "-") == 0 ? fstat(STDOUT_FILENO, st) : stat(path, st);
}

bool lb_outfile_same_target(const char *a, const char *b)
{
	struct stat sa, sb;
	if (!a || !b)
		return false;
	if (strcmp(a, b) == 0)
		return true;
	if (stat_output(a, &sa) == 0 && stat_output(b, &sb) == 0)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	if (!strcmp(a, "-") || !strcmp(b, "-"))
		return false; /* stdout exists; the other does not */
	char *ca = canonical_name(a), *cb = canonical_name(b);
	bool same = ca && cb && strcmp(ca, cb) == 0;
	free(ca);
	free(cb);
	return same;
}

void lb_outfile_refuse_same(const char *opt_a, const char *a, const char *opt_b, const char *b)
{
	if (a && b && lb_outfile_same_target(a, b))
		lb_usage_error("%s '%s' and %s '%s' name the same file; accepted: two different "
			       "files", opt_a, a, opt_b, b);
}

static bool writes_stdout(const struct lb_outfile *f)
{
	return f->is_std && f->fp == stdout;
}

FILE *lb_outfile_report_stream(const struct lb_outfile *a, const struct lb_outfile *b)
{
	return writes_stdout(a) || writes_stdout(b) ? stderr : stdout;
}

int lb_outfile_commit_or_say(struct lb_outfile *f, const char *cmd, const char *opt,
			     const char *path)
{
	int err = lb_outfile_commit(f);
	if (err)
		fprintf(stderr, "%s%s%s: %s: cannot write '%s': %s\n", lb_cli_prog(), cmd ? " " : "",
			cmd ? cmd : "", opt, path, strerror(err));
	return err;
}

void lb_outfile_open_or_exit(const char *opt, const char *path, struct lb_outfile *f,
			     struct lb_outfile *other)
{
	int err = lb_outfile_open(f, path);
	if (!err)
		return;
	if (other)
		lb_outfile_abort(other);
	lb_usage_error("%s: cannot write '%s': %s%s; accepted: '-' (standard output), a writable "
		       "file, device or FIFO, or a new file in an existing, writable directory", opt,
		       path, strerror(err), err == ENXIO ? " (a FIFO nobody reads)" : "");
}
