// SPDX-License-Identifier: GPL-2.0
/* err.c - one error helper that also speaks JSON (bpftool's p_err); option values
 * are parsed by core/opt.c and reported through it. */
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include "cli.h"
#include "core/opt.h"

bool ntp_json_errors;

int ntp_err(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ntp_json_errors) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "error", json_object_new_string(msg));
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	} else {
		fprintf(stderr, "ntprof: %s\n", msg);
	}
	return 1;
}

void ntp_note(const char *fmt, ...)
{
	va_list ap;

	fputs("ntprof: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
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
