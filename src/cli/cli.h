/* SPDX-License-Identifier: GPL-2.0 */
/* cli.h - the ntprof subcommands and the one error helper they share. */
#ifndef NTP_CLI_H
#define NTP_CLI_H

#include <stdbool.h>

/* Set by a subcommand that writes JSON to stdout (-j -): errors then go out as JSON too. */
extern bool ntp_json_errors;

/* Room for a one-line error that names a file (PATH_MAX) and says why. */
#define NTP_ERR_LEN 8192

/* One line "ntprof: <message>" on stderr (or {"error": "..."} on stdout in JSON mode).
 * Always returns 1, so `return ntp_err(...)` is a subcommand's failing exit. */
int ntp_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* One line "ntprof: <message>" on stderr, not an error. */
void ntp_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* core/opt.h's ntp_opt_u32() and ntp_opt_size(), printing their error with ntp_err(). */
int ntp_parse_u32(const char *opt, const char *val, unsigned min, unsigned max, unsigned *out);
int ntp_parse_size(const char *opt, const char *val, unsigned *out);

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_generate(int argc, char **argv);
int cmd_btf(int argc, char **argv);

#endif
