// SPDX-License-Identifier: GPL-2.0
/* esc.c - control bytes of outside names as \xNN (see esc.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "esc.h"

/* Bytes to escape at s: 0, 1 (C0 or DEL) or 2 (a UTF-8 encoded C1). */
static int ctl_len(const unsigned char *s)
{
	if (*s < 0x20 || *s == 0x7f)
		return 1;
	if (*s == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f)
		return 2;
	return 0;
}

char *ntp_escape(const char *in, char *out, size_t outlen)
{
	const unsigned char *s = (const unsigned char *)(in ? in : "");
	size_t o = 0;

	if (!outlen)
		return out;
	for (; *s; s++) {
		int k = ctl_len(s);

		if (!k) {
			if (o + 1 >= outlen)
				break;
			out[o++] = (char)*s;
			continue;
		}
		if (o + 4 * (size_t)k >= outlen)
			break;
		for (int i = 0; i < k; i++, o += 4)
			snprintf(out + o, 5, "\\x%02x", s[i]);
		s += k - 1;
	}
	out[o] = 0;
	return out;
}

int ntp_needs_escape(const char *in)
{
	for (const unsigned char *s = (const unsigned char *)in; s && *s; s++)
		if (ctl_len(s))
			return 1;
	return 0;
}

const char *ntp_esc(const char *in)
{
	static __thread char buf[8][NTP_ESC_LEN];
	static __thread unsigned next;

	return ntp_escape(in, buf[next++ % 8], NTP_ESC_LEN);
}

void ntp_put_escaped_line(FILE *f, const char *prog, const char *msg)
{
	size_t cap = 4 * strlen(msg) + 1;	/* every byte as \xNN at most */
	char *safe = ntp_needs_escape(msg) ? malloc(cap) : NULL;

	fprintf(f, "%s: %s\n", prog, safe ? ntp_escape(msg, safe, cap) : msg);
	free(safe);
}
