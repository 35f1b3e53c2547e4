/* SPDX-License-Identifier: GPL-2.0 */
/*
 * out.h - the one way ntprof writes a report-like output (a JSON report, a
 * comparison, a screen): nothing an output replaces is lost, and a failed
 * write is an error, never a silent exit 0.
 *
 * - "-" is stdout; every other path is written to a temporary file beside
 *   it and renamed into place only once everything was written, so a full
 *   disk or a crash leaves the old file (or none), never half a report.
 * - A path naming one of the command's inputs or another of its outputs
 *   (the same file: same device and inode, hard links included) is
 *   refused, and so is a symbolic link to a file or a directory (whose
 *   target could be any file, a recording).
 * - Devices and pipes (/dev/full, a FIFO, /dev/stdout into a pipe) are
 *   written in place.
 * - The output is kept in memory and written with write() at the close, so
 *   a failure is seen with its errno (ENOSPC, EPIPE), not lost in a stdio
 *   buffer whose error flag a later successful flush does not report.
 */
#ifndef NTP_CORE_OUT_H
#define NTP_CORE_OUT_H

#include <stddef.h>
#include <stdio.h>

struct ntp_out {
	FILE *f;		/* write here (a memory stream, written out at the close) */
	const char *path;	/* as given ("-" for stdout) */
	char *tmp;		/* the temporary file renamed onto path; NULL when in place */
	int fd;			/* where the close writes */
	char *buf;
	size_t len;
};

/* 1 when a and b both exist and are the same file (device and inode). */
int ntp_same_file(const char *a, const char *b);

/* Checks path against the others (inputs and other outputs; NULL entries
 * are skipped; "-" never matches): 0, or -1 with a one-line reason naming
 * the path. Also refuses a directory and a symbolic link to a file or a
 * directory (one to a device or a pipe is fine). */
int ntp_out_check(const char *path, const char *const *others, size_t n, char *err, size_t errlen);
/* ntp_out_check(), and refuses an existing file that starts with the
 * recording magic (NTP_FILE_MAGIC, docs/ntp-format.md): a report, a
 * comparison or a screen never replaces a recording, whichever the command
 * reads ("ntprof report -j a.ntp b.ntp" taken for a flag). */
int ntp_out_check_report(const char *path, const char *const *others, size_t n, char *err,
			 size_t errlen);

/* ntp_out_check_report(), then opens path ("-": stdout) for writing. 0, or -1 with
 * a one-line reason. */
int ntp_out_open(struct ntp_out *o, const char *path, const char *const *others, size_t n,
		 char *err, size_t errlen);
/* Flushes and checks every write; renames the temporary file into place.
 * 0, or -1 with a one-line reason (the temporary file is removed, the old
 * file at path is left as it was). Stdout is flushed, not closed. */
int ntp_out_close(struct ntp_out *o, char *err, size_t errlen);
/* Gives up: removes the temporary file, leaves path as it was. */
void ntp_out_discard(struct ntp_out *o);

/* fflush(f) and ferror(f): 0, or -1 with errno set (EIO when the stream
 * lost the error's errno). For streams kept open (stdout of a batch mode). */
int ntp_out_flush(FILE *f);

#endif
