// SPDX-License-Identifier: GPL-2.0
/* err.c - one error helper that also speaks JSON (bpftool's p_err), and option parsing. */
#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

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
	char *end;
	unsigned long v;

	if (!val || !*val) {
		ntp_err("option %s needs a value", opt);
		return -1;
	}
	errno = 0;
	v = strtoul(val, &end, 10);
	if (errno || *end || val[0] == '-' || v < min || v > max) {
		ntp_err("option %s: '%s' is not a whole number from %u to %u", opt, val, min, max);
		return -1;
	}
	*out = (unsigned)v;
	return 0;
}

int ntp_parse_size(const char *opt, const char *val, unsigned *out)
{
	char *end;
	unsigned long v, mul = 1;

	if (!val || !*val) {
		ntp_err("option %s needs a value", opt);
		return -1;
	}
	errno = 0;
	v = strtoul(val, &end, 10);
	if (*end == 'k' || *end == 'K')
		mul = 1024, end++;
	else if (*end == 'm' || *end == 'M')
		mul = 1024 * 1024, end++;
	if (*end == 'i' && (end[1] == 'B' || end[1] == 'b'))
		end += 2;
	else if (*end == 'B' || *end == 'b')
		end++;
	if (errno || *end || val[0] == '-' || v == 0 || v * mul > (1ul << 30)) {
		ntp_err("option %s: '%s' is not a size such as 512, 4K or 1M", opt, val);
		return -1;
	}
	*out = (unsigned)(v * mul);
	return 0;
}
