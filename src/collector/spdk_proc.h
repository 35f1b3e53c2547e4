/* SPDX-License-Identifier: GPL-2.0 */
/*
 * spdk_proc.h - the running processes of an SPDK binary and the sampling
 * variable in each: found through /proc (exe, maps), written through
 * /proc/PID/mem, held by one recorder at a time through a lock file.
 */
#ifndef NTP_SPDK_PROC_H
#define NTP_SPDK_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Where ntprof's lock files live: one per SPDK process, spdk-<pid>.lock,
 * flock()ed by the recorder that writes its sampling variable. */
#ifndef NTP_SPDK_LOCK_DIR
#define NTP_SPDK_LOCK_DIR "/run/ntprof"
#endif

/* Processes whose /proc/PID/exe is bin (same device and inode). Returns how
 * many were written to out, -1 when bin cannot be stat()ed. */
int ntp_spdk_pids(const char *bin, pid_t *out, int max);

/* The address of the defined symbol var in pid: the mapped file that defines
 * it (its path to lib) and mapping base - base vaddr + st_value. hint (may be
 * NULL): files to try first. 0, or -1 when no mapped file defines it. */
int ntp_spdk_var_addr(pid_t pid, const char *var, char *const *hint, int n_hint, uint64_t *addr,
		      char *lib, size_t liblen);

/* The same for any defined symbol, with its size (st_size). */
int ntp_spdk_sym_addr(pid_t pid, const char *var, char *const *hint, int n_hint, uint64_t *addr,
		      uint64_t *size, char *lib, size_t liblen);

int ntp_spdk_var_read(pid_t pid, uint64_t addr, uint32_t *v);
/* len bytes at addr in pid, through /proc/PID/mem: 0, or -1. */
int ntp_spdk_mem_read(pid_t pid, uint64_t addr, void *buf, size_t len);
int ntp_spdk_var_write(pid_t pid, uint64_t addr, uint32_t v);

/* Takes the lock of pid's variable: an fd to keep open while the variable
 * is ours, or -1: errno EWOULDBLOCK with *holder the recorder that has it
 * (0 if unknown), else why the lock file could not be made. */
int ntp_spdk_lock(pid_t pid, pid_t *holder);
void ntp_spdk_unlock(int fd);

#endif
