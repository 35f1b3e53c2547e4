/* SPDX-License-Identifier: GPL-2.0 */
/*
 * esc.h - names from outside (file names, the host name and kernel in a
 * recording's header) made safe to print on a terminal: control bytes
 * (C0, DEL, and the C1 controls UTF-8 encodes as 0xC2 0x80..0x9F) become
 * \xNN, so a crafted name cannot move the cursor, retitle the window or
 * fake a line of output. Other bytes, UTF-8 included, are kept.
 */
#ifndef NTP_CORE_ESC_H
#define NTP_CORE_ESC_H

#include <stddef.h>
#include <stdio.h>

/* Writes the escaped in to out (always NUL-terminated when outlen > 0; cut
 * at a whole escape). Returns out. */
char *ntp_escape(const char *in, char *out, size_t outlen);
/* 1 when in holds a byte ntp_escape() rewrites. */
int ntp_needs_escape(const char *in);
/* ntp_escape() into one of 8 rotating per-thread buffers of NTP_ESC_LEN
 * bytes: for printf arguments, valid until 8 more calls in the thread. */
#define NTP_ESC_LEN 1024
const char *ntp_esc(const char *in);
/* "prog: msg" and a newline on f, msg escaped whatever its length (an
 * error or note that names files or hosts); msg as it is when there is no
 * memory for the escape. */
void ntp_put_escaped_line(FILE *f, const char *prog, const char *msg);

#endif
