/* SPDX-License-Identifier: GPL-2.0 */
/*
 * repair.h - for the fuzzers: recompute the CRCs of a .ntp image (header and
 * every block whose bytes are all there), so mutations reach the code
 * behind the CRC checks instead of dying at them. Layout: docs/ntp-format.md.
 */
#ifndef NTP_FUZZ_REPAIR_H
#define NTP_FUZZ_REPAIR_H

#include <stdint.h>
#include <string.h>
#include "core/store/ntpfile.h"

static inline void ntp_fuzz_repair(uint8_t *p, size_t len)
{
	uint32_t hlen, crc;
	size_t off;

	if (len < 16)
		return;
	memcpy(&hlen, p + 12, 4);
	if (hlen < 8 || hlen > len)
		return;
	crc = ntp_crc32c(0, p, hlen - 4);
	memcpy(p + hlen - 4, &crc, 4);
	for (off = hlen; off + NTP_BLOCK_HDR_LEN <= len;) {
		uint32_t blen;

		memcpy(&blen, p + off + 8, 4);
		if (blen <= len - off - NTP_BLOCK_HDR_LEN) {
			crc = ntp_crc32c(0, p + off + NTP_BLOCK_HDR_LEN, blen);
			memcpy(p + off + 16, &crc, 4);
		}
		crc = ntp_crc32c(0, p + off, 20);
		memcpy(p + off + 20, &crc, 4);
		if (blen > len - off - NTP_BLOCK_HDR_LEN)
			break;
		off += NTP_BLOCK_HDR_LEN + blen;
	}
}

#endif
