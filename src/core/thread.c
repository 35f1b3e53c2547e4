// SPDX-License-Identifier: GPL-2.0
/* thread.c - starting a helper thread that leaves the process's signals to the caller's thread (thread.h). */
#include <signal.h>
#include "thread.h"

int ntp_thread_start(pthread_t *th, void *(*fn)(void *), void *arg, const int *keep)
{
	static const int faults[] = { SIGBUS, SIGSEGV, SIGFPE, SIGILL };
	sigset_t all, old;
	int err;

	sigfillset(&all);
	for (unsigned i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
		sigdelset(&all, faults[i]);
	for (; keep && *keep; keep++)
		sigdelset(&all, *keep);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = pthread_create(th, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}
