/* SPDX-License-Identifier: GPL-2.0 */
/* thread.h - starting a helper thread that leaves the process's signals to the caller's thread. */
#ifndef NTP_THREAD_H
#define NTP_THREAD_H

#include <pthread.h>

/*
 * pthread_create(th, fn, arg) with every signal blocked in the new thread
 * but the faults (SIGBUS, SIGSEGV, SIGFPE, SIGILL: raised in the thread
 * that makes them, SIGBUS of a truncated mapping among them) and those of
 * keep (0-terminated, may be NULL). So SIGINT, SIGTERM and SIGWINCH reach
 * the caller's thread, whose wait they end (a quit, a resize), not a
 * helper that would not look. Returns pthread_create's error (0: started).
 */
int ntp_thread_start(pthread_t *th, void *(*fn)(void *), void *arg, const int *keep);

#endif
