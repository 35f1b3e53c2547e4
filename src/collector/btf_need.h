/* SPDX-License-Identifier: GPL-2.0 */
/*
 * btf_need.h - before any load: has the kernel's BTF (vmlinux and the
 * modules' own, or the --btf file that replaces them for CO-RE) every
 * structure and field the programs of a role and transport read?
 * A CO-RE relocation that finds nothing only shows as the verifier's
 * "Invalid argument" at load; this names what is missing instead.
 */
#ifndef NTP_COLLECTOR_BTF_NEED_H
#define NTP_COLLECTOR_BTF_NEED_H

#include <stddef.h>

struct btf;

/* sides: NTP_HOOK_HOST | NTP_HOOK_TARGET (hooks.h); transport: enum
 * ntp_transport; file: the BTF file in use (modules without BTF of their
 * own), NULL when every module has its own. 0 when all is there; else -1
 * and why: one line naming the missing structures and fields, where they
 * were looked for and what to do. */
int ntp_btf_need_check(unsigned sides, unsigned transport, const char *file, char *why, size_t len);

/* Does b hold every structure the programs read from module mod's types
 * (names only, for `ntprof btf`)? 1 yes, 0 no, -1 the BPF object cannot be
 * read. */
int ntp_btf_need_module_types(const struct btf *b, const char *mod);

/* Where the kernel's struct bio keeps its submission time (with
 * CONFIG_BLK_CGROUP), which the programs read; the host's end to end starts
 * there when it is set (docs/stage-model.md, docs/kernel-btf.md). */
enum ntp_bio_issue {
	NTP_BIO_ISSUE_NONE,		/* neither field */
	NTP_BIO_ISSUE_BI_ISSUE,		/* bi_issue (up to 6.17): set for every bio */
	NTP_BIO_ISSUE_NS_UNSET,		/* issue_time_ns (6.18 on), and no blk-iolatency, which alone sets it */
	NTP_BIO_ISSUE_NS_IOLAT,		/* issue_time_ns, set on disks with an io.latency target */
};
/* From the kernel's BTF; -1: no kernel BTF. */
int ntp_btf_bio_issue(void);

/* Whether the kernel's struct tcp_sock has tcp_clock_cache, the clock TCP
 * keeps per socket and the NVMe/TCP packet arrivals take (arrival_note,
 * docs/hooks.md): 1 yes, 0 no (the arrivals read the clock themselves),
 * -1 no kernel BTF. */
int ntp_btf_tcp_clock(void);

#endif
