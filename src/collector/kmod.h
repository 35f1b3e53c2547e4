/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmod.h - is a kernel module there, and as what: loaded, or built into the
 * kernel (CONFIG_INFINIBAND=y puts ib_core in vmlinux, its types in vmlinux
 * BTF and nowhere else).
 */
#ifndef NTP_COLLECTOR_KMOD_H
#define NTP_COLLECTOR_KMOD_H

#include <stdbool.h>

enum ntp_kmod {
	NTP_KMOD_ABSENT,
	NTP_KMOD_LOADED,	/* a loadable module, loaded */
	NTP_KMOD_BUILTIN,	/* built into the kernel */
};

/* Module mod ("ib_core"; '-' and '_' alike) of kernel release under root
 * ("" or NULL for /: the tests give a directory standing for it). */
enum ntp_kmod ntp_kmod_state(const char *root, const char *release, const char *mod);

/* Of the running kernel */
bool ntp_module_builtin(const char *mod);

#endif
