/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ntpfile_layout.h - the byte offsets of a .ntp file's header and blocks,
 * shared by the writer (ntpfile_write.c) and the reader (ntpfile.c); the
 * layout itself, field by field: docs/ntp-format.md.
 */
#ifndef NTP_FILE_LAYOUT_H
#define NTP_FILE_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "ntpfile.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error ".ntp files are little-endian; a big-endian port needs byte swapping here"
#endif

_Static_assert(sizeof(struct ntp_record) == 272, "struct ntp_record is 272 bytes on disk");
_Static_assert(sizeof(struct ntp_total) == 104, "struct ntp_total is 104 bytes on disk (1.1)");
_Static_assert(offsetof(struct ntp_total, occ) == NTP_TOTAL_V10_SIZE, "1.1 appends to the 1.0 row");
_Static_assert(sizeof(NTP_FILE_MAGIC) - 1 == 8, "magic is 8 bytes");

/* header field offsets */
enum {
	H_MAGIC = 0, H_MAJOR = 8, H_MINOR = 10, H_HDRLEN = 12, H_RECSIZE = 16,
	H_ROLE = 20, H_TRANSPORT = 21, H_IMPL_HOST = 22, H_IMPL_TARGET = 23,
	H_SAMPLING = 24, H_FLAGS = 28, H_START_MONO = 32, H_START_REAL = 40,
	H_HOSTNAME = 48, H_KERNEL = 112, H_TOOLVER = 176,
	/* 1.2: the host queue table (0 in older files: none) */
	H_HOSTQ_OFF = 208, H_HOSTQ_COUNT = 212, H_HOSTQ_ENTSZ = 214, H_RESERVED = 216,
};
#define HEADER_BUF (NTP_HOSTQ_OFF + NTP_HOSTQ_MAX * NTP_HOSTQ_ENTRY + 4)
_Static_assert(sizeof(((struct ntp_hostq *)0)->dev) + 8 == NTP_HOSTQ_ENTRY, "a host queue entry is 40 bytes");
/* block header field offsets */
enum { B_MAGIC = 0, B_TYPE = 4, B_FLAGS = 6, B_LEN = 8, B_COUNT = 12, B_PCRC = 16, B_HCRC = 20 };
#define TOTALS_HDR 16	/* u64 as_of, u32 entry_size, u32 reserved */
#define END_HDR 24	/* u64 end_mono, u64 records, u32 entry_size, u32 reserved */

static inline void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static inline void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static inline uint16_t get16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t get64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

#endif
