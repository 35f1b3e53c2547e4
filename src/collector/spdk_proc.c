// SPDX-License-Identifier: GPL-2.0
/*
 * spdk_proc.c - SPDK processes, their sampling variable, and the lock that
 * keeps two recorders from fighting over it.
 *
 * The lock is an flock() on NTP_SPDK_LOCK_DIR/spdk-<pid>.lock, holding the
 * recorder's pid as text for the refusal's message. The kernel drops an
 * flock with its last file descriptor, so a recorder that is killed
 * (SIGKILL) frees the lock at once; what it leaves is the variable itself,
 * still N, until the next recorder takes it over and sets it back to 0 when
 * it stops (docs/spdk.md). The files stay: unlinking a lock file others may
 * have open races with them taking it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include "spdk_elf.h"
#include "spdk_proc.h"

int ntp_spdk_pids(const char *bin, pid_t *out, int max)
{
	struct stat b, s;
	struct dirent *de;
	int n = 0;
	DIR *d;

	if (stat(bin, &b))
		return -1;
	d = opendir("/proc");
	if (!d)
		return -1;
	while ((de = readdir(d)) && n < max) {
		char p[64];
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0 || pid == getpid())
			continue;
		snprintf(p, sizeof(p), "/proc/%ld/exe", pid);
		if (!stat(p, &s) && s.st_dev == b.st_dev && s.st_ino == b.st_ino)
			out[n++] = (pid_t)pid;
	}
	closedir(d);
	return n;
}

/* The start of the mapping of file offset 0 of path in pid's maps. */
static int map_base(pid_t pid, const char *path, uint64_t *base)
{
	char p[64], line[PATH_MAX + 128];
	int found = -1;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/maps", (int)pid);
	f = fopen(p, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		int pos = 0;
		char *file;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &lo, &hi, &off, &pos) < 3 || !pos)
			continue;
		file = line + pos;
		file[strcspn(file, "\n")] = 0;
		if (off == 0 && !strcmp(file, path)) {
			*base = lo;
			found = 0;
			break;
		}
	}
	fclose(f);
	return found;
}

static int try_file(pid_t pid, const char *file, const char *var, uint64_t *addr, uint64_t *size)
{
	uint64_t value, vbase, base;

	if (ntp_elf_symbol_sized(file, var, &value, size, &vbase) || map_base(pid, file, &base))
		return -1;
	*addr = base - vbase + value;
	return 0;
}

int ntp_spdk_var_addr(pid_t pid, const char *var, char *const *hint, int n_hint, uint64_t *addr,
		      char *lib, size_t liblen)
{
	uint64_t size;

	return ntp_spdk_sym_addr(pid, var, hint, n_hint, addr, &size, lib, liblen);
}

int ntp_spdk_sym_addr(pid_t pid, const char *var, char *const *hint, int n_hint, uint64_t *addr,
		      uint64_t *size, char *lib, size_t liblen)
{
	char p[64], line[PATH_MAX + 128], last[PATH_MAX] = "";
	int found = -1;
	FILE *f;

	for (int i = 0; i < n_hint; i++)
		if (!try_file(pid, hint[i], var, addr, size)) {
			snprintf(lib, liblen, "%s", hint[i]);
			return 0;
		}
	snprintf(p, sizeof(p), "/proc/%d/maps", (int)pid);
	f = fopen(p, "re");
	if (!f)
		return -1;
	while (found && fgets(line, sizeof(line), f)) {
		unsigned long long off;
		int pos = 0;
		char *file;

		if (sscanf(line, "%*x-%*x %*s %llx %*s %*s %n", &off, &pos) < 1 || !pos)
			continue;
		file = line + pos;
		file[strcspn(file, "\n")] = 0;
		if (file[0] != '/' || off != 0 || !strcmp(file, last))
			continue;
		snprintf(last, sizeof(last), "%s", file);
		if (!try_file(pid, file, var, addr, size)) {
			snprintf(lib, liblen, "%s", file);
			found = 0;
		}
	}
	fclose(f);
	return found;
}

static int mem_io(pid_t pid, uint64_t addr, uint32_t *v, bool write)
{
	char p[64];
	ssize_t r;
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/mem", (int)pid);
	fd = open(p, (write ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (fd < 0)
		return -1;
	r = write ? pwrite(fd, v, sizeof(*v), (off_t)addr) : pread(fd, v, sizeof(*v), (off_t)addr);
	close(fd);
	return r == (ssize_t)sizeof(*v) ? 0 : -1;
}

int ntp_spdk_mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	char p[64];
	ssize_t r;
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/mem", (int)pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	r = pread(fd, buf, len, (off_t)addr);
	close(fd);
	return r == (ssize_t)len ? 0 : -1;
}

int ntp_spdk_var_read(pid_t pid, uint64_t addr, uint32_t *v)
{
	return mem_io(pid, addr, v, false);
}

int ntp_spdk_var_write(pid_t pid, uint64_t addr, uint32_t v)
{
	return mem_io(pid, addr, &v, true);
}

int ntp_spdk_lock(pid_t pid, pid_t *holder)
{
	char buf[32];
	const char *dir = getenv("NTPROF_LOCK_DIR") ? getenv("NTPROF_LOCK_DIR") : NTP_SPDK_LOCK_DIR;
	char path[PATH_MAX];
	int fd, len;
	ssize_t r;

	*holder = 0;
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -1;
	snprintf(path, sizeof(path), "%s/spdk-%d.lock", dir, (int)pid);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int e = errno;

		r = pread(fd, buf, sizeof(buf) - 1, 0);
		if (r > 0) {
			buf[r] = 0;
			*holder = (pid_t)atoi(buf);
		}
		close(fd);
		errno = e;
		return -1;
	}
	len = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) || pwrite(fd, buf, len, 0) != len) {
		/* the lock holds without the text; only the message would lack the pid */
	}
	return fd;
}

void ntp_spdk_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}
