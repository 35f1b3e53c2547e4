/* SPDX-License-Identifier: GPL-2.0 */
/* logcap.h - keeps libbpf's messages off the screen while curses is up:
 * they are kept in memory and printed to stderr once the terminal is back. */
#ifndef NTP_TOP_LOGCAP_H
#define NTP_TOP_LOGCAP_H

void top_logcap_install(void);		/* libbpf_set_print into the capture */
void top_logcap_hold(int on);		/* on: keep messages; off: print directly */
void top_logcap_flush(void);		/* prints what was kept to stderr, frees it */

#endif
