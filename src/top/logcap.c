// SPDX-License-Identifier: GPL-2.0
/* logcap.c - libbpf's messages, captured while the screen is ncurses'. */
#include <bpf/libbpf.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "logcap.h"

#define LOGCAP_MAX (256 * 1024)	/* enough for a verifier log; more is dropped and counted */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *buf;
static size_t len, dropped;
static int holding;

static int capture(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[4096];
	int n;

	if (level == LIBBPF_DEBUG)
		return 0;
	pthread_mutex_lock(&lock);
	if (!holding) {
		pthread_mutex_unlock(&lock);
		return vfprintf(stderr, fmt, ap);
	}
	n = vsnprintf(line, sizeof(line), fmt, ap);
	if (n > (int)sizeof(line) - 1)
		n = sizeof(line) - 1;
	if (n > 0 && !buf)
		buf = malloc(LOGCAP_MAX);
	if (n > 0 && buf && len + n <= LOGCAP_MAX) {
		memcpy(buf + len, line, n);
		len += n;
	} else if (n > 0) {
		dropped += n;
	}
	pthread_mutex_unlock(&lock);
	return n;
}

void top_logcap_install(void)
{
	libbpf_set_print(capture);
}

void top_logcap_hold(int on)
{
	pthread_mutex_lock(&lock);
	holding = on;
	pthread_mutex_unlock(&lock);
}

void top_logcap_flush(void)
{
	pthread_mutex_lock(&lock);
	if (len)
		fwrite(buf, 1, len, stderr);
	if (dropped)
		fprintf(stderr, "ntprof-top: %zu more bytes of libbpf messages dropped\n", dropped);
	free(buf);
	buf = NULL;
	len = dropped = 0;
	pthread_mutex_unlock(&lock);
}
