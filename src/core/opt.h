/* SPDX-License-Identifier: GPL-2.0 */
/*
 * opt.h - option values shared by `ntprof record`, `ntprof generate` and
 * ntprof-top: one parser per kind of value, so the same option takes the same
 * spellings and fails with the same words everywhere. Each returns 0, or -1
 * with a one-line message naming the option in err; the front end prints it
 * with its own prefix (ntp_err() in the CLI, "ntprof-top: " in top).
 */
#ifndef NTP_OPT_H
#define NTP_OPT_H

#include <stddef.h>
#include <stdint.h>

#define NTP_OPT_ERR_LEN 256

/* A whole number from min to max. */
int ntp_opt_u32(const char *opt, const char *val, unsigned min, unsigned max, unsigned *out, char *err);
/* A decimal number from min to max. */
int ntp_opt_double(const char *opt, const char *val, double min, double max, double *out, char *err);
/* "4K", "128k", "1M", "4KiB", "512" -> bytes, 1 B to 1 GiB. */
int ntp_opt_size(const char *opt, const char *val, unsigned *out, char *err);
/* "4K,128K": appends to sizes[*n], at most max in all. */
int ntp_opt_sizes(const char *opt, const char *val, uint32_t *sizes, unsigned max, unsigned *n, char *err);
/* host|target|both -> enum ntp_role; tcp|rdma -> enum ntp_transport; read|write -> enum ntp_io_type. */
int ntp_opt_role(const char *opt, const char *val, uint8_t *out, char *err);
int ntp_opt_transport(const char *opt, const char *val, uint8_t *out, char *err);
int ntp_opt_io_type(const char *opt, const char *val, int *out, char *err);
/* A namespace name such as nvme0n1, copied to out (NTP_DEV_LEN bytes). */
int ntp_opt_session(const char *opt, const char *val, char *out, char *err);

#endif
