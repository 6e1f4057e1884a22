/* SPDX-License-Identifier: MIT */
/*
 * lb_outfile.h - output files written atomically: data goes to a temporary
 * file in the same directory ("<path>.tmp.XXXXXX"), which is fsync'ed and
 * renamed over <path> on commit, or removed on abort.  A reader therefore
 * sees either the old file or the complete new one, never a half-written one.
 */
#ifndef LB_OUTFILE_H
#define LB_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

struct lb_outfile {
	FILE *fp;        /* write here */
	char *path;      /* final name */
	char *tmp_path;  /* temporary name */
};

/*
 * Open the temporary file.  Returns 0 or an errno value (the directory does
 * not exist or is not writable, ...); on error nothing is left on disk.
 * Also usable as an up-front check that `path` can be written at all.
 */
int lb_outfile_open(struct lb_outfile *f, const char *path);

/* Flush, fsync, close and rename into place.  0 or errno; on error the
 * temporary is removed and nothing is left at `path` that was not there. */
int lb_outfile_commit(struct lb_outfile *f);

/* Close and remove the temporary. */
void lb_outfile_abort(struct lb_outfile *f);

#endif /* LB_OUTFILE_H */
