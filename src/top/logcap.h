/* SPDX-License-Identifier: GPL-2.0 */
/*
 * logcap.h - keeps libbpf's messages (and anything else written to stderr:
 * the collector's notes, sanitizer reports) off the screen while curses owns
 * it. The collector installs its own libbpf_set_print() filter, which
 * writes to stderr, so the capture is at the file descriptor: fd 2 goes to
 * an in-memory file while curses is up and is copied out afterwards (htop's
 * redirectStderr does the same).
 */
#ifndef NTP_TOP_LOGCAP_H
#define NTP_TOP_LOGCAP_H

void top_logcap_hold(int on);	/* on: stderr into memory; off: back, then print what was kept */
/* The same as off, from a fatal signal's handler (async-signal-safe calls only). */
void top_logcap_release_from_signal(void);

#endif
