/* SPDX-License-Identifier: GPL-2.0 */
/*
 * say.h - the collector's notes to the user (why a flavour was chosen, a
 * process picked up...): through the front end's callback when it has one
 * (ntprof-top shows them on its status line), else one line on stderr.
 */
#ifndef NTP_COLLECTOR_SAY_H
#define NTP_COLLECTOR_SAY_H

#include <stdarg.h>
#include <stdio.h>

static inline void ntp_say(void (*say)(void *ctx, const char *line), void *ctx, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline void ntp_say(void (*say)(void *ctx, const char *line), void *ctx, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (say)
		say(ctx, line);
	else
		fprintf(stderr, "ntprof: %s\n", line);
}

/* o: options with say and say_ctx (struct ntp_collector_opts, struct ntp_spdk_opts) */
#define say(o, ...) ntp_say((o)->say, (o)->say_ctx, __VA_ARGS__)

#endif
