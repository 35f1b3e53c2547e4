// SPDX-License-Identifier: GPL-2.0
/* opt.c - option values shared by the command line and ntprof-top (opt.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../bpf/ntprof_event.h"
#include "opt.h"

static int __attribute__((format(printf, 2, 3))) fail(char *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, NTP_OPT_ERR_LEN, fmt, ap);
	va_end(ap);
	return -1;
}

int ntp_opt_u32(const char *opt, const char *val, unsigned min, unsigned max, unsigned *out, char *err)
{
	char *end;
	unsigned long v;

	if (!val || !*val)
		return fail(err, "option %s needs a value", opt);
	errno = 0;
	v = strtoul(val, &end, 10);
	if (errno || *end || val[0] == '-' || v < min || v > max)
		return fail(err, "option %s: '%s' is not a whole number from %u to %u", opt, val, min, max);
	*out = (unsigned)v;
	return 0;
}

int ntp_opt_double(const char *opt, const char *val, double min, double max, double *out, char *err)
{
	char *end;
	double v;

	if (!val || !*val)
		return fail(err, "option %s needs a value", opt);
	errno = 0;
	v = strtod(val, &end);
	if (errno || end == val || *end || !(v >= min && v <= max))
		return fail(err, "option %s: '%s' is not a number from %g to %g", opt, val, min, max);
	*out = v;
	return 0;
}

int ntp_opt_size(const char *opt, const char *val, unsigned *out, char *err)
{
	char *end;
	unsigned long v, mul = 1;

	if (!val || !*val)
		return fail(err, "option %s needs a value", opt);
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
	if (errno || end == val || *end || val[0] == '-' || v == 0 || v > (1ul << 30) / mul)
		return fail(err, "option %s: '%s' is not a size such as 512, 4K or 1M", opt, val);
	*out = (unsigned)(v * mul);
	return 0;
}

int ntp_opt_sizes(const char *opt, const char *val, uint32_t *sizes, unsigned max, unsigned *n, char *err)
{
	char buf[1024], *save = NULL, *tok;
	unsigned before = *n;

	if (!val || !*val)
		return fail(err, "option %s needs a value", opt);
	if (strlen(val) >= sizeof(buf))
		return fail(err, "option %s: '%.40s...' is too long", opt, val);
	snprintf(buf, sizeof(buf), "%s", val);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned b;

		if (*n >= max)
			return fail(err, "option %s: at most %u sizes", opt, max);
		if (ntp_opt_size(opt, tok, &b, err))
			return -1;
		sizes[(*n)++] = b;
	}
	if (*n == before)
		return fail(err, "option %s: needs at least one size", opt);
	return 0;
}

int ntp_opt_role(const char *opt, const char *val, uint8_t *out, char *err)
{
	if (!strcmp(val, "host"))
		*out = NTP_ROLE_HOST;
	else if (!strcmp(val, "target"))
		*out = NTP_ROLE_TARGET;
	else if (!strcmp(val, "both"))
		*out = NTP_ROLE_BOTH;
	else
		return fail(err, "option %s: '%s' is not host, target or both", opt, val);
	return 0;
}

int ntp_opt_transport(const char *opt, const char *val, uint8_t *out, char *err)
{
	if (!strcmp(val, "tcp"))
		*out = NTP_TRANSPORT_TCP;
	else if (!strcmp(val, "rdma"))
		*out = NTP_TRANSPORT_RDMA;
	else
		return fail(err, "option %s: '%s' is not tcp or rdma", opt, val);
	return 0;
}

int ntp_opt_io_type(const char *opt, const char *val, int *out, char *err)
{
	if (!strcmp(val, "read"))
		*out = NTP_IO_READ;
	else if (!strcmp(val, "write"))
		*out = NTP_IO_WRITE;
	else
		return fail(err, "option %s: '%s' is not read or write", opt, val);
	return 0;
}

int ntp_opt_session(const char *opt, const char *val, char *out, char *err)
{
	if (strncmp(val, "nvme", 4) || strlen(val) >= NTP_DEV_LEN || strchr(val, '/'))
		return fail(err, "option %s: '%s' is not a namespace name such as nvme0n1", opt, val);
	snprintf(out, NTP_DEV_LEN, "%s", val);
	return 0;
}
