// SPDX-License-Identifier: GPL-2.0
/* out.c - checked, all-or-nothing writing of reports (see out.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../store/ntpfile.h"
#include "out.h"

/* The directory resolved (realpath) and the last name: two spellings of a
 * file that does not exist yet (X and ./X) compare equal. NULL when the
 * directory cannot be resolved. */
static char *canon(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir, *real, *out = NULL;

	dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
	real = dir ? realpath(dir, NULL) : NULL;
	if (real && asprintf(&out, "%s/%s", real, slash ? slash + 1 : path) < 0)
		out = NULL;
	free(real);
	free(dir);
	return out;
}

int ntp_same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	char *ca, *cb;
	int same;

	if (!a || !b || !strcmp(a, "-") || !strcmp(b, "-"))
		return 0;
	if (!strcmp(a, b))
		return 1;
	if (!stat(a, &sa) && !stat(b, &sb))
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	ca = canon(a);
	cb = canon(b);
	same = ca && cb && !strcmp(ca, cb);
	free(ca);
	free(cb);
	return same;
}

int ntp_out_check(const char *path, const char *const *others, size_t n, char *err, size_t errlen)
{
	struct stat st;

	if (!strcmp(path, "-"))
		return 0;
	if (!*path) {
		snprintf(err, errlen, "an empty output file name");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (!others[i])
			continue;
		if (ntp_same_file(path, others[i])) {
			snprintf(err, errlen, "%s: refusing to write over %s (the same file)", path, others[i]);
			return -1;
		}
	}
	if (lstat(path, &st))
		return 0;
	if (S_ISLNK(st.st_mode)) {
		struct stat t;

		/* A link could point at a recording: refused, unless it leads to
		 * a device or a pipe (/dev/stdout into a pipe, /dev/null). */
		if (stat(path, &t) || S_ISREG(t.st_mode) || S_ISDIR(t.st_mode)) {
			snprintf(err, errlen, "%s: is a symbolic link%s; refusing to write through it", path,
				 stat(path, &t) ? "" : S_ISREG(t.st_mode) ? " to a file" : " to a directory");
			return -1;
		}
		return 0;
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: is a directory", path);
		return -1;
	}
	return 0;
}

int ntp_out_check_report(const char *path, const char *const *others, size_t n, char *err,
			 size_t errlen)
{
	char head[sizeof(NTP_FILE_MAGIC) - 1];
	struct stat st;
	ssize_t k;
	int fd;

	if (ntp_out_check(path, others, n, err, errlen))
		return -1;
	if (!strcmp(path, "-") || stat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;	/* unreadable: the write decides */
	k = read(fd, head, sizeof(head));
	close(fd);
	if (k == (ssize_t)sizeof(head) && !memcmp(head, NTP_FILE_MAGIC, sizeof(head))) {
		snprintf(err, errlen, "%s: is an ntprof recording; refusing to write over it "
			 "(remove it first)", path);
		return -1;
	}
	return 0;
}

/* A temporary file beside path, with the mode a plain create would give. */
static int open_tmp(struct ntp_out *o, char *err, size_t errlen)
{
	size_t len = strlen(o->path);
	mode_t mask;

	o->tmp = malloc(len + 16);
	if (!o->tmp) {
		snprintf(err, errlen, "%s: out of memory", o->path);
		return -1;
	}
	snprintf(o->tmp, len + 16, "%s.tmp-XXXXXX", o->path);
	o->fd = mkostemp(o->tmp, O_CLOEXEC);
	if (o->fd < 0) {
		/* the report is written beside its name, then renamed: the
		 * directory must be writable, not only the file */
		snprintf(err, errlen, "%s: cannot create a temporary file beside it: %s", o->path,
			 strerror(errno));
		free(o->tmp);
		o->tmp = NULL;
		return -1;
	}
	mask = umask(0);
	umask(mask);
	if (fchmod(o->fd, 0666 & ~mask)) {
		snprintf(err, errlen, "%s: cannot create: %s", o->path, strerror(errno));
		ntp_out_discard(o);
		return -1;
	}
	return 0;
}

int ntp_out_open(struct ntp_out *o, const char *path, const char *const *others, size_t n,
		 char *err, size_t errlen)
{
	struct stat st;

	memset(o, 0, sizeof(*o));
	o->path = path;
	o->fd = -1;
	if (ntp_out_check_report(path, others, n, err, errlen))
		return -1;
	if (!strcmp(path, "-")) {
		o->fd = STDOUT_FILENO;
	} else if (stat(path, &st) || S_ISREG(st.st_mode)) {
		if (open_tmp(o, err, errlen))
			return -1;
	} else {
		/* A device or a pipe (perhaps through a link such as /dev/stdout):
		 * no rename possible, written in place. What was opened is checked
		 * again: a regular file swapped in since the check is refused. */
		struct stat t;

		o->fd = open(path, O_WRONLY | O_CLOEXEC);
		if (o->fd < 0) {
			snprintf(err, errlen, "%s: cannot open for writing: %s", path, strerror(errno));
			return -1;
		}
		if (fstat(o->fd, &t) || S_ISREG(t.st_mode)) {
			snprintf(err, errlen, "%s: changed into a regular file while opened; refusing", path);
			ntp_out_discard(o);
			return -1;
		}
	}
	/* Written in memory, then with write() at the close, which knows the
	 * errno of a failed write (stdio may only keep an error flag). */
	o->f = open_memstream(&o->buf, &o->len);
	if (!o->f) {
		snprintf(err, errlen, "%s: out of memory", path);
		ntp_out_discard(o);
		return -1;
	}
	return 0;
}

int ntp_out_flush(FILE *f)
{
	int bad = fflush(f) != 0, e = errno;

	if (!bad && !ferror(f))
		return 0;
	errno = bad && e ? e : EIO;
	return -1;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t k = write(fd, p, len);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		p += k;
		len -= (size_t)k;
	}
	return 0;
}

int ntp_out_close(struct ntp_out *o, char *err, size_t errlen)
{
	int e = 0;

	if (!o->f)
		return 0;
	if (fclose(o->f))
		e = errno ? -errno : -ENOMEM;
	o->f = NULL;
	/* what the program printed on stdout before comes first */
	if (!e && o->fd == STDOUT_FILENO && ntp_out_flush(stdout))
		e = -errno;
	if (!e)
		e = write_all(o->fd, o->buf, o->len);
	/* The data reaches the disk before the name does: after a crash the
	 * path holds the old file or the whole new one. */
	if (!e && o->tmp && fsync(o->fd))
		e = -errno;
	if (o->fd != STDOUT_FILENO) {
		if (close(o->fd) && !e)
			e = -errno;
		o->fd = -1;
	}
	if (!e && o->tmp && rename(o->tmp, o->path))
		e = -errno;
	if (e) {
		if (o->fd == STDOUT_FILENO)
			snprintf(err, errlen, "cannot write to stdout: %s", strerror(-e));
		else
			snprintf(err, errlen, "%s: cannot write: %s", o->path, strerror(-e));
		ntp_out_discard(o);
		return -1;
	}
	free(o->tmp);
	o->tmp = NULL;
	free(o->buf);
	o->buf = NULL;
	return 0;
}

void ntp_out_discard(struct ntp_out *o)
{
	if (o->f)
		fclose(o->f);
	o->f = NULL;
	free(o->buf);
	o->buf = NULL;
	if (o->fd >= 0 && o->fd != STDOUT_FILENO)
		close(o->fd);
	o->fd = -1;
	if (o->tmp) {
		unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
	}
}
