// SPDX-License-Identifier: GPL-2.0
/* logcap.c - stderr kept in memory while the screen is ncurses'. */
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#include "logcap.h"

static int saved_fd = -1, mem_fd = -1;

/* Back to the saved stderr, then what was kept: only async-signal-safe
 * calls (dup2, close, lseek, read, write), so a fatal signal's handler may
 * use it too. */
static void release(void)
{
	char buf[4096];
	ssize_t n;

	if (saved_fd < 0)
		return;
	dup2(saved_fd, STDERR_FILENO);
	close(saved_fd);
	saved_fd = -1;
	if (lseek(mem_fd, 0, SEEK_SET) == 0)
		while ((n = read(mem_fd, buf, sizeof(buf))) > 0)
			if (write(STDERR_FILENO, buf, (size_t)n) != n)
				break;
	close(mem_fd);
	mem_fd = -1;
}

void top_logcap_release_from_signal(void)
{
	release();
}

void top_logcap_hold(int on)
{
	fflush(stderr);
	if (on && saved_fd < 0) {
		mem_fd = memfd_create("ntprof-top-stderr", MFD_CLOEXEC);
		saved_fd = dup(STDERR_FILENO);
		if (mem_fd < 0 || saved_fd < 0 || dup2(mem_fd, STDERR_FILENO) < 0) {
			/* No capture possible: messages may smear the screen, Ctrl-L repaints. */
			if (mem_fd >= 0)
				close(mem_fd);
			if (saved_fd >= 0)
				close(saved_fd);
			mem_fd = saved_fd = -1;
		}
		return;
	}
	if (!on)
		release();
}
