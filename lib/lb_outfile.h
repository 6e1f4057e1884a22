/* SPDX-License-Identifier: MIT */
/*
 * lb_outfile.h - output files that never leave a half-written file and
 * never replace what they should not.
 *
 * What the path names decides how it is written:
 *  - "-": standard output, written in place.
 *  - a new name, or an existing regular file: atomically.  Data goes to a
 *    temporary in the same directory ("<name>.tmp.XXXXXX"), which is
 *    fsync'ed and renamed over <name> on commit, or removed on abort; a
 *    reader sees the old file or the complete new one, never a half.
 *  - a symbolic link: followed (every level); the file it points to is
 *    what gets replaced atomically, the link itself stays.  A dangling link
 *    creates its target.
 *  - an existing non-regular file (character device such as /dev/null, a
 *    FIFO, a socket, a terminal, /dev/stdout): opened and written directly,
 *    never replaced.  A FIFO without a reader is refused (ENXIO) instead of
 *    blocking.  A path that is this process's standard output or error
 *    (/dev/stdout, /proc/self/fd/1, the file a shell redirected stdout to)
 *    writes through that stream, after what the program already printed.
 *  - a directory: refused (EISDIR).  An existing regular file without
 *    write permission: refused (EACCES), even for root, whom the kernel
 *    would let replace it: a 0444 file is the user saying "keep this".
 * Every refusal happens in lb_outfile_open(), so callers open their outputs
 * BEFORE the run and a bad path costs nothing.
 */
#ifndef LB_OUTFILE_H
#define LB_OUTFILE_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

struct lb_outfile {
	FILE *fp;        /* write here */
	char *path;      /* final name (symlinks resolved) */
	char *tmp_path;  /* temporary name; NULL when written directly */
	bool direct;     /* non-regular target or a standard stream: no temporary */
	bool is_std;     /* fp is stdout/stderr: flushed, never closed */
};

/*
 * Prepare writing `path` (see above).  Returns 0 or an errno value (EISDIR,
 * EACCES, ENOENT for a missing directory, ENXIO for a FIFO nobody reads...);
 * on error nothing is left on disk.  Also usable as an up-front check that
 * `path` can be written at all.
 */
int lb_outfile_open(struct lb_outfile *f, const char *path);

/* Flush, fsync, close and rename into place (atomic case), or flush and
 * close (direct case).  0 or errno; on error the temporary is removed and
 * nothing is left at `path` that was not there. */
int lb_outfile_commit(struct lb_outfile *f);

/* Close and remove the temporary (nothing to remove when direct). */
void lb_outfile_abort(struct lb_outfile *f);

/*
 * Remove the temporary of every output opened and not yet committed or
 * aborted, in this process.  Async-signal-safe (unlink() only): for a
 * signal handler or a watchdog about to end the process, so that nothing
 * half-written is left behind.  The FILEs stay open; the process is
 * expected to exit.
 */
void lb_outfile_unlink_pending(void);

/*
 * Install handlers for SIGINT, SIGTERM, SIGHUP and SIGQUIT that run
 * lb_outfile_unlink_pending() and then die of the signal (default action
 * restored and the signal raised again): a command ended by any of them
 * leaves its finished files or nothing, never a temporary.  For commands
 * with no use for the signals themselves (the driver's LB_SIGNALS_END:
 * aim7, rt; compare); LB_SIGNALS_FINISH reports the finished runs first.
 */
void lb_outfile_unlink_on_signals(void);

/* That handler's body, for a handler of the caller's own: remove the
 * pending temporaries, restore the default action and raise `sig` again
 * (async-signal-safe). */
void lb_outfile_die_of_signal(int sig);

/* *set = the signals that end a command (SIGINT, SIGTERM, SIGHUP, SIGQUIT),
 * for code that holds them off around a step that must not be cut. */
void lb_stop_signal_set(sigset_t *set);

/* Catch every one of those signals with `handler`: sigaction() with
 * `flags` (SA_RESTART, or 0 so that a sleep is cut short) and `mask` as the
 * handler's mask (NULL: nothing more blocked while it runs). */
void lb_stop_signals_catch(void (*handler)(int), int flags, const sigset_t *mask);

/*
 * Whether two output paths name the same file, so that one output would
 * overwrite the other: equal after following symlinks and resolving the
 * directory ("./a.json" and "a.json", a link and its target), the same
 * existing inode (hard links, /dev/stdout and "-"), or both "-".  Call it
 * for every pair of a command's outputs before opening them and refuse
 * the command (exit 2) when it says true.
 */
bool lb_outfile_same_target(const char *a, const char *b);

/*
 * The check above as a command needs it: when both paths are given and name
 * the same file, the one-line usage error naming both options, exit 2.
 */
void lb_outfile_refuse_same(const char *opt_a, const char *a, const char *opt_b, const char *b);

/*
 * The stream for a command's human-readable report, given its two outputs
 * (either may be unopened): stderr when one of them writes to standard
 * output ('-', /dev/stdout), so that stdout carries the result file alone
 * and stays parseable; stdout otherwise.
 */
FILE *lb_outfile_report_stream(const struct lb_outfile *a, const struct lb_outfile *b);

/*
 * lb_outfile_open() as a command needs it before its run: on failure, abort
 * `other` (an output the command opened before this one, or NULL) and exit
 * 2 with one line naming the option, the path, the reason and what is
 * accepted.
 */
void lb_outfile_open_or_exit(const char *opt, const char *path, struct lb_outfile *f,
			     struct lb_outfile *other);

/*
 * lb_outfile_commit() as a command needs it after its run: on failure, one
 * line on stderr naming the command (`cmd`, e.g. "slab", or NULL), the
 * option, the path as given and the reason ("lockbench slab: --json:
 * cannot write '/dev/full': No space left on device").  Returns 0 or the
 * errno value.
 */
int lb_outfile_commit_or_say(struct lb_outfile *f, const char *cmd, const char *opt,
			     const char *path);

#endif /* LB_OUTFILE_H */
