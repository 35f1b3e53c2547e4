/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ntprof_hash.h - the coordinated-sampling hash, shared bit for bit by the BPF
 * programs, user space and the SPDK patch. Defined in docs/sampling-hash.md,
 * with test vectors in tests/unit/test_hash.c.
 *
 * Inputs are what both machines see in the command capsule on the wire: the
 * 16-bit command id, the 64-bit starting LBA and the 16-bit 0-based number of
 * logical blocks. No block size is needed, so host and target agree even
 * before either knows the namespace's LBA format.
 */
#ifndef NTPROF_HASH_H
#define NTPROF_HASH_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#ifndef NTP_HASH_INLINE
#define NTP_HASH_INLINE static inline __attribute__((always_inline))
#endif

/* splitmix64's finaliser: every input bit flips about half the output bits. */
NTP_HASH_INLINE __u64 ntp_hash_mix64(__u64 x)
{
	x += 0x9E3779B97F4A7C15ULL;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
	return x ^ (x >> 31);
}

NTP_HASH_INLINE __u64 ntp_sample_hash(__u16 cid, __u64 slba, __u16 nlb)
{
	__u64 k = ntp_hash_mix64(slba);

	return ntp_hash_mix64(k ^ (((__u64)cid << 16) | (__u64)nlb));
}

/* One command in n is sampled; n = 0 or 1 samples every command. */
NTP_HASH_INLINE int ntp_sample_pick(__u16 cid, __u64 slba, __u16 nlb, __u32 n)
{
	if (n <= 1)
		return 1;
	return ntp_sample_hash(cid, slba, nlb) % n == 0;
}

#endif /* NTPROF_HASH_H */
