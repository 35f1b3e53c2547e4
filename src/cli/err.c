// SPDX-License-Identifier: GPL-2.0
/* err.c - one error helper that also speaks JSON (bpftool's p_err); option values
 * are parsed by core/opt.c and reported through it. Messages are not cut (a
 * long path is the message), and their control bytes are escaped (core/esc.h):
 * they name files and hosts taken from outside. */
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "cli.h"
#include "core/render/esc.h"
#include "core/opt.h"

bool ntp_json_errors;

int ntp_err(const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (len < 0) {
		fputs("ntprof: out of memory\n", stderr);
		return 1;
	}
	if (ntp_json_errors) {
		/* json-c escapes control bytes itself */
		json_object *o = json_object_new_object();

		json_object_object_add(o, "error", json_object_new_string(msg));
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		fflush(stdout);
		json_object_put(o);
	} else {
		ntp_put_escaped_line(stderr, "ntprof", msg);
	}
	free(msg);
	return 1;
}

void ntp_note(const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (len < 0)
		return;
	ntp_put_escaped_line(stderr, "ntprof", msg);
	free(msg);
}

int ntp_parse_u32(const char *opt, const char *val, unsigned min, unsigned max, unsigned *out)
{
	char err[NTP_OPT_ERR_LEN];

	return ntp_opt_u32(opt, val, min, max, out, err) ? ntp_err("%s", err), -1 : 0;
}

int ntp_parse_size(const char *opt, const char *val, unsigned *out)
{
	char err[NTP_OPT_ERR_LEN];

	return ntp_opt_size(opt, val, out, err) ? ntp_err("%s", err), -1 : 0;
}
