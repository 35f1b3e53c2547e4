/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ntpfile.h - the .ntp recording format: a versioned header, records in
 * CRC32C-checked blocks, periodic and final per-group command totals.
 * The on-disk layout is documented in docs/ntp-format.md.
 *
 * Pure: no clock reads. Callers pass time in (mono_ns) so the writer's
 * "flush at least every second" rule is testable.
 */
#ifndef NTP_FILE_H
#define NTP_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "../../../bpf/ntprof_event.h"

#define NTP_FORMAT_MAJOR 1
#define NTP_FORMAT_MINOR 2	/* 1.1: totals rows carry struct ntp_group_occ;
				 * 1.2: the header may carry the host's queues */
/* A major this far ahead or more, in a header that fails its CRC, is read
 * as a damaged version field, not a newer format (docs/ntp-format.md) */
#define NTP_FORMAT_AHEAD 8

#define NTP_HOSTNAME_LEN 64
#define NTP_KERNEL_LEN 64
#define NTP_TOOLVER_LEN 32

/* The host's block-layer limits of one namespace as the recorder read them
 * in sysfs (format 1.2): what caps the commands in flight (docs/what-if.md). */
#define NTP_HOSTQ_MAX 64		/* namespaces per header; more are left out */
struct ntp_hostq {
	char dev[NTP_DEV_LEN];		/* as the host's records name it: nvmeXnY */
	uint32_t hw_queues;		/* blk-mq hardware queues (0: unknown) */
	uint32_t tags;			/* tags per hardware queue: nr_requests */
};

/* What the header says about a recording. */
struct ntp_file_info {
	uint16_t version_major;		/* filled by the reader; the writer writes NTP_FORMAT_* */
	uint16_t version_minor;
	uint8_t role;			/* enum ntp_role */
	uint8_t transport;		/* enum ntp_transport */
	uint8_t impl_host;		/* enum ntp_impl */
	uint8_t impl_target;
	uint32_t sampling;		/* -s N: one command in N */
	uint32_t record_size;		/* bytes per record on disk */
	uint64_t start_mono_ns;		/* CLOCK_MONOTONIC at start, same clock as the records */
	uint64_t start_real_ns;		/* CLOCK_REALTIME at start */
	char hostname[NTP_HOSTNAME_LEN];
	char kernel[NTP_KERNEL_LEN];
	char tool_version[NTP_TOOLVER_LEN];
	/* Extension (format 1.2): the host's queues of each namespace when the
	 * recording started; 0 entries in older files and target files. */
	uint32_t n_hostq;
	struct ntp_hostq hostq[NTP_HOSTQ_MAX];
};

/* The entry of dev (NUL-padded or terminated), or NULL. */
const struct ntp_hostq *ntp_hostq_find(const struct ntp_file_info *fi, const char *dev);
/* Adds src's entries whose dev dst does not have yet (joined files: each
 * host file carries its own namespaces). */
void ntp_hostq_merge(struct ntp_file_info *dst, const struct ntp_file_info *src);

/* One row of a totals block: exact kernel counts for a group, cumulative. */
struct ntp_total {
	struct ntp_group_key key;
	struct ntp_group_count count;
	/* Extension (format 1.1): --exact-queues stage sums, cumulative; all
	 * zero without the option and in rows read from a 1.0 file. */
	struct ntp_group_occ occ;
};
#define NTP_TOTAL_V10_SIZE 56	/* a 1.0 row: key and count */

/* ---- writer ---- */
struct ntp_writer;

/* Creates (truncates) path and writes the header. NULL and errbuf filled on error. */
struct ntp_writer *ntp_writer_open(const char *path, const struct ntp_file_info *info,
				   char *errbuf, size_t errlen);
/* Buffers one record; writes a block when the buffer is full. 0 or -errno. */
int ntp_writer_add(struct ntp_writer *w, const struct ntp_record *r);
/* Replaces the cumulative totals that the next flush writes (as of mono_ns). */
int ntp_writer_set_totals(struct ntp_writer *w, const struct ntp_total *t, size_t n, uint64_t mono_ns);
/* The cumulative count of records lost before they reached the recording
 * (the ring buffer was full, SPDK commands in flight past the stop's wait),
 * as of mono_ns: the next flush (or the close) writes it in a lost block
 * after the totals when it changed (docs/ntp-format.md, type 4). A
 * recording that never calls it, or only with 0, has no such block. */
int ntp_writer_set_lost(struct ntp_writer *w, uint64_t cumulative, uint64_t mono_ns);
/* Writes the pending block (and totals) if at least one second passed since the last flush. */
int ntp_writer_tick(struct ntp_writer *w, uint64_t mono_ns);
/* Writes the pending records now. */
int ntp_writer_flush(struct ntp_writer *w, uint64_t mono_ns);
/* Flushes, writes the trailer (end time, final totals) and closes. Frees w.
 * With a writer thread, waits until every queued block is written. */
int ntp_writer_close(struct ntp_writer *w, uint64_t end_mono_ns);
/* The same; *records and *lost (each may be NULL) get the final counts
 * (ntp_writer_records, ntp_writer_lost) once every block was written. */
int ntp_writer_close_count(struct ntp_writer *w, uint64_t end_mono_ns, uint64_t *records, uint64_t *lost);
/* The same; *at_close (may be NULL) is 1 when the error is the file's
 * close(2) (EIO, EDQUOT on a network file system): every block was handed
 * to write(2), but whether the file holds them is not known. */
int ntp_writer_close_why(struct ntp_writer *w, uint64_t end_mono_ns, uint64_t *records, uint64_t *lost,
			 int *at_close);
uint64_t ntp_writer_records(const struct ntp_writer *w);	/* kept: written or pending */
/* Records that did not fit: on a full disk (ENOSPC, EFBIG, EDQUOT) the
 * pending block is written in smaller blocks down to one record, what fits
 * stays a readable recording, the rest is lost and the error is sticky. */
uint64_t ntp_writer_lost(const struct ntp_writer *w);
int ntp_writer_error(const struct ntp_writer *w);	/* the sticky -errno, or 0 */
/*
 * The file's writes in a thread of their own (docs/recording.md, "Files"):
 * ntp_writer_add, _tick and _flush hand full blocks and flushes to it
 * through a queue of at most max_bytes (full blocks, a flush's records and
 * totals) and return without writing; they wait only while the queue is
 * full. A write error the thread meets is returned by the next call (add,
 * tick, flush, error) and by close. The file's bytes are those of the same
 * calls without the thread. Call before the first ntp_writer_add, with
 * max_bytes of two full blocks at least; the writer stays with one caller
 * thread (not thread-safe otherwise). 0, or -errno: no thread, the writes
 * stay in the caller's thread. The thread ends in ntp_writer_close.
 */
int ntp_writer_thread(struct ntp_writer *w, size_t max_bytes);
/* The queue of ntprof record and ntprof-top (docs/recording.md gives the
 * reasons): 30 full blocks. */
#define NTP_WRITER_QUEUE ((size_t)8 << 20)
/*
 * From now on ntp_writer_add, _tick and _flush never wait for the file (a
 * writer with its thread; nothing changes without one). A flush the queue
 * has no room for leaves its records, totals and lost count pending: a
 * later flush or the close writes them. A full block it has no room for
 * stays pending too, and the next ntp_writer_add returns -EAGAIN without
 * taking its record: the caller either waits for room where it holds
 * nothing another thread needs (ntp_writer_wait_room) and adds the record
 * again, or drops the full block (ntp_writer_drop_block) and adds it
 * again. The close still waits for the file. For ntprof-top, whose screen
 * must not wait on a file (docs/recording.md, "Files").
 */
void ntp_writer_nowait(struct ntp_writer *w);
/* Waits until the queue has room for a full block: 0, or -EINTR once
 * ntp_writer_wake was called (it stays woken: no later wait waits). The
 * close, from another thread, wakes the waiter and lets it leave first;
 * the waiter must then no longer touch w (the caller's lock tells). */
int ntp_writer_wait_room(struct ntp_writer *w);
void ntp_writer_wake(struct ntp_writer *w);	/* from any thread while w is open */
/* Drops the pending full block (nowait), if any: its records are counted
 * lost as of mono_ns, in the file's lost block with ntp_writer_set_lost's
 * count (docs/ntp-format.md, type 4), and no longer among
 * ntp_writer_records. Returns how many. */
uint64_t ntp_writer_drop_block(struct ntp_writer *w, uint64_t mono_ns);
uint64_t ntp_writer_dropped(const struct ntp_writer *w);	/* records dropped so far */
/* Bytes of records and totals the writer holds now: its queue, the written
 * blocks' buffers kept for reuse, the block being filled. With a thread,
 * at most its max_bytes and one full block (and the jobs' few bytes each). */
size_t ntp_writer_held(struct ntp_writer *w);

/* ---- reader: streaming, memory independent of the file's size ---- */
struct ntp_reader;

struct ntp_read_stats {
	uint64_t records;		/* whole records returned */
	uint64_t dropped;		/* records of damaged blocks and of a cut tail (as far as known) */
	uint64_t skipped_blocks;	/* blocks of an unknown type */
	uint64_t damaged_blocks;	/* blocks skipped because their payload failed its CRC */
	int truncated;			/* the file ended inside a block or without a trailer */
	int corrupt;			/* a block failed its CRC or length check; after a bad
					 * payload under a sound header reading goes on */
	uint64_t end_mono_ns;		/* trailer's end time, or the last flush's time */
	uint64_t lost_before;		/* records lost before reaching the recording, as the
					 * last lost block read says (type 4; 0: none) */
	char why[160];			/* how the file ended, for a one-line note; "" when whole */
};

/* Opens and checks the header. NULL with a one-line reason naming the file on error
 * (missing, empty, wrong magic, newer major version, bad header). */
struct ntp_reader *ntp_reader_open(const char *path, char *errbuf, size_t errlen);
/* Extension (perf): how a file is read. ntp_reader_open() maps regular files
 * (NTPROF_NO_MMAP=1 in the environment reads them with read()). */
struct ntp_reader_opts {
	int no_mmap;			/* read with read() even a regular file */
	size_t map_window;		/* bytes per mmap window; 0: NTP_MAP_WINDOW shared by
					 * the readers open at once (at least 1 MiB each);
					 * also the first read buffer after mmap (tests) */
	uint64_t map_fail_from;		/* tests: windows from this offset on fail to map,
					 * so the switch to read() is exercised; 0: never */
	int ahead_map;			/* read-ahead and ntp_reader_read_alone map windows
					 * too, instead of read() (tests, measurements;
					 * NTPROF_AHEAD_MMAP=1) */
	int ahead_fail;			/* tests: the read-ahead thread does not start, as
					 * when pthread_create fails */
	uint64_t read_fail_from;	/* tests: the bytes from this offset on cannot be
					 * read, as past a bad sector: read() gets them
					 * with EIO, a window that would reach them is
					 * not mapped (read() takes over); 0: never */
	struct ntp_buf_arena *arena;	/* no_mmap: read() into its buffer (ntp_buf_arena_new),
					 * not one of the reader's own; for readers
					 * open one after another */
	int map_dear;			/* tests: under ntp_reader_map_while_cheap, 1:
					 * every window faults too often (let go, read()
					 * instead), 2: the first one only, -1: none
					 * does; 0: as counted */
};
#define NTP_MAP_WINDOW (16u << 20)
/* nbufs read() buffers of a block, in huge pages where the kernel has
 * them (hugemem.h): a first touch of one page fault, where each reader's
 * own buffer took one per 4 KiB (docs/performance.md). Readers open one
 * after another share the first (ntp_reader_opts arena: the alignment's
 * samples, join_align.c); ntp_readers_full_speed gives its file i the
 * i-th. extra bytes more, zeroed, past the buffers, for the caller
 * (ntp_buf_arena_extra, 64-byte aligned): the rest of a huge page a
 * buffer's first touch zeroes anyway. NULL if mmap failed: the readers
 * then take their own. Freed at the put of the last of the caller and the
 * readers that took it. */
struct ntp_buf_arena;
struct ntp_buf_arena *ntp_buf_arena_new(size_t nbufs, size_t extra);
void *ntp_buf_arena_extra(const struct ntp_buf_arena *a);
void ntp_buf_arena_put(struct ntp_buf_arena *a);
struct ntp_reader *ntp_reader_open_opts(const char *path, const struct ntp_reader_opts *o,
					char *errbuf, size_t errlen);
/* Installs a SIGBUS handler for the one failure a mapped file cannot report
 * by return value: truncated by another process while mapped. A fault inside
 * a reader's window prints "PROG: FILE: the file was truncated while being
 * read ..." and exits with status 1; other SIGBUS keep the default action.
 * 0 or -errno. */
int ntp_reader_catch_sigbus(const char *prog);
const struct ntp_file_info *ntp_reader_info(const struct ntp_reader *r);
const char *ntp_reader_path(const struct ntp_reader *r);
/* 1 and *out filled; 0 at the end (clean or at a damaged tail: see stats);
 * -EAGAIN while following (ntp_reader_follow). */
int ntp_reader_next(struct ntp_reader *r, struct ntp_record *out);
/* Latest totals seen so far (the trailer's once the end is reached). */
const struct ntp_total *ntp_reader_totals(const struct ntp_reader *r, size_t *n, uint64_t *as_of_mono_ns);
const struct ntp_read_stats *ntp_reader_stats(const struct ntp_reader *r);
/* Whether the source is not a regular file (a pipe, a device): its
 * blocks may come one at a time, as a live recorder writes them, and a
 * caller showing them should not hold one back for the next. */
int ntp_reader_stream(const struct ntp_reader *r);
/*
 * Follows a recording still being written, as `tail -f` does
 * (docs/recording.md, "Files"): from now on, at the end of the whole
 * blocks the file holds and before its trailer, ntp_reader_next_block and
 * ntp_reader_next return -EAGAIN instead of ending: nothing is consumed (a
 * block or header the writer is still writing is left for later, not
 * counted cut), and a later call reads the blocks written since. Once the
 * file has not grown for idle_ns (before the first wait its mtime tells
 * when it last did) the reader ends there as it would without following:
 * cut short, said in its stats. A regular file only, without read-ahead
 * (ntp_reader_read_ahead then declines): 0, or -1 (a pipe, whose read()
 * waits for the writer anyway; memory; read-ahead running; idle_ns 0).
 */
int ntp_reader_follow(struct ntp_reader *r, uint64_t idle_ns);
uint64_t ntp_reader_following(const struct ntp_reader *r);	/* its idle_ns; 0: not following */
int ntp_reader_waiting(const struct ntp_reader *r);	/* the last block call returned -EAGAIN */
/* The rows of the latest totals block or trailer that lies whole in the
 * last max_tail bytes of a regular file, read from there (not from its
 * start): the groups the recording counted up to then. Their number, the
 * rows malloc'd in *out (NULL: none); 0 when the file has no such block
 * (it is all within the tail); -1 when a longer file has none within the
 * tail (unknown), the file cannot be read or is no regular file (a FIFO
 * is not waited for), or out of memory. */
ssize_t ntp_file_last_totals(const char *path, size_t max_tail, struct ntp_total **out);
void ntp_reader_close(struct ntp_reader *r);

/* Opens a recording held in memory (tests, the fuzzer); name is used in messages.
 * buf must stay valid until ntp_reader_close(). */
struct ntp_reader *ntp_reader_open_mem(const void *buf, size_t len, const char *name,
				       char *errbuf, size_t errlen);
/*
 * The fast path: the next verified records block as an array (no copy when
 * the file's record size is ours). *recs stays valid until the next call.
 * 1 with *n >= 1; 0 at the end; -EAGAIN while following (ntp_reader_follow).
 * Do not mix with ntp_reader_next().
 */
int ntp_reader_next_block(struct ntp_reader *r, const struct ntp_record **recs, size_t *n);

/*
 * Extension (perf): a second thread reads, maps and CRC-checks the blocks
 * while the caller works on the previous ones (docs/performance.md). Blocks,
 * stats and totals come out exactly as without it, in the same order, each
 * as of the block last handed out. Call before reading any block: 0 started,
 * 1 not (a memory source, a block already read, no thread); the reader
 * works on either way. The thread ends in ntp_reader_close().
 */
int ntp_reader_read_ahead(struct ntp_reader *r);
/*
 * Extension (perf): the caller reads this file at full speed in its own
 * thread, as one of many files (ntp_readers_full_speed decides): read()
 * into one buffer that stays in the core's cache instead of mmap windows
 * (docs/performance.md; NTPROF_AHEAD_MMAP=1 keeps the windows, to
 * compare). Call before reading any block: 0 done or not needed (not
 * mapped, read-ahead running), 1 not (a block already read, or read()
 * failed to take over: the reader says why at its end).
 */
int ntp_reader_read_alone(struct ntp_reader *r);
/*
 * Extension (perf): the caller reads this file at full speed in its own
 * thread, as one of few files: mapped where its windows fault seldom (the
 * page cache's 2 MiB folios, each mapped by one fault: no copy at all),
 * with read() for a while after a window that faults often, then mapped
 * again (docs/performance.md, "Mapped or read()"). Call before reading any
 * block: 0 done or not needed (not mapped, read-ahead running or
 * read-ahead's windows asked for), 1 not (a block already read: mapped
 * on, as before).
 */
int ntp_reader_map_while_cheap(struct ntp_reader *r);
/*
 * Extension (perf): how a caller that reads n files at full speed (a
 * report, compare, dump; not ntprof-top's replay at the recording's pace)
 * reads them, decided here for every such caller; call before reading any
 * block. Each file is read ahead by a thread of its own where that pays
 * (ntp_read_ahead_wanted(n)), else, up to NTP_AHEAD_FILES files, in the
 * caller's thread mapped while that is cheap, then with read()
 * (ntp_reader_map_while_cheap). Of more files,
 * r[most] (the caller's pick: a report's lone target of many hosts, which
 * holds about half of all records; SIZE_MAX: none) is read ahead
 * where two CPUs can run; the others, and it where not, with read().
 * A regular file shorter than NTP_AHEAD_MIN_BYTES (its size at open) is
 * never read ahead, but read in the caller's thread as where no thread
 * pays: a thread's start (its stack, its arena of the C library) costs
 * more CPU and time than the overlap of so few blocks saves
 * (docs/performance.md, "A second thread reads the blocks").
 */
#define NTP_AHEAD_MIN_BYTES ((uint64_t)2 << 20)
void ntp_readers_full_speed(struct ntp_reader *const *r, size_t n, size_t most);
/* Whether read-ahead pays for nfiles readers open at once: at least two CPUs
 * to run on (the process's affinity), at most NTP_AHEAD_FILES files (each
 * thread holds NTP_AHEAD_SLOTS blocks), and NTPROF_THREADS not "0". */
#define NTP_AHEAD_FILES 4
#define NTP_AHEAD_SLOTS 8
int ntp_read_ahead_wanted(size_t nfiles);

/* ---- on-disk constants (docs/ntp-format.md) ---- */
#define NTP_FILE_MAGIC		"NTPROF\x89\n"	/* 8 bytes */
#define NTP_HEADER_LEN		256		/* the header without a host queue table, CRC included */
#define NTP_HOSTQ_OFF		256		/* where 1.2 puts the host queue table in a longer header */
#define NTP_HOSTQ_ENTRY		40		/* bytes per entry: dev[32], hw_queues, tags */
#define NTP_HEADER_MAX		65536		/* larger headers are refused as corrupt */
#define NTP_BLOCK_MAGIC		0x4B4C4250u	/* "PBLK" little-endian */
#define NTP_BLOCK_HDR_LEN	24
#define NTP_BLOCK_MAX_PAYLOAD	(16u << 20)	/* a longer block is corrupt */
#define NTP_BLOCK_RECORDS	1024		/* records per block the writer packs at most: 278 KB
					 * (older files: up to 4096); docs/performance.md */
#define NTP_RECORD_MAX		65536		/* larger record_size is refused */

enum ntp_block_type {
	NTP_BLOCK_RECORDS_T = 1,	/* count records of record_size bytes */
	NTP_BLOCK_TOTALS = 2,		/* cumulative per-group kernel counts as of a time */
	NTP_BLOCK_END = 3,		/* trailer: end time, records written, final totals */
	NTP_BLOCK_LOST = 4,		/* records lost before the recording, cumulative as of a time */
};
#define NTP_LOST_HDR 16		/* a lost block's payload: u64 as_of, u64 records lost */
/* Why records are lost before reaching a recording, in the words of the report's note. */
#define NTP_LOST_WHY "ring buffer full, SPDK commands still in flight after the stop's wait, or blocks ntprof-top dropped while its file lagged"

/* ---- helpers ---- */
uint32_t ntp_crc32c(uint32_t crc, const void *buf, size_t len);
uint32_t ntp_crc32c_sw(uint32_t crc, const void *buf, size_t len);	/* table version only */
/* ntp_crc32c of a buffer this core has just written (read()'s copy): where
 * the CPU has it, the folding beside three crc32 streams, faster from the
 * core's cache and slower from memory than the folding alone. */
uint32_t ntp_crc32c_cached(uint32_t crc, const void *buf, size_t len);
/* The implementations of ntp_crc32c (crc32c.c), for tests and benchmarks:
 * ntp_crc32c_by runs one (the table version where this CPU cannot run it),
 * ntp_crc32c_has says whether this CPU can. ntp_crc32c runs the last this
 * CPU has up to NTP_CRC_FOLD512, ntp_crc32c_cached NTP_CRC_FOLD512X3 in
 * its place. */
enum ntp_crc_impl {
	NTP_CRC_TABLE,		/* slicing by 8 */
	NTP_CRC_HW1,		/* crc32 instruction (SSE4.2), one stream */
	NTP_CRC_HW3,		/* three streams joined by PCLMULQDQ */
	NTP_CRC_FOLD256,	/* folding with VPCLMULQDQ, AVX2 registers */
	NTP_CRC_FOLD512,	/* folding with VPCLMULQDQ, AVX-512 registers */
	NTP_CRC_FOLD512X3,	/* the same beside three crc32 streams */
	NTP_CRC_IMPLS
};
bool ntp_crc32c_has(enum ntp_crc_impl impl);
uint32_t ntp_crc32c_by(enum ntp_crc_impl impl, uint32_t crc, const void *buf, size_t len);
const char *ntp_role_name(uint8_t role);	/* "host", "target", "both" */
const char *ntp_transport_name(uint8_t t);	/* "tcp", "rdma" */

/* A record into L1 ahead of its turn (the merge: a file's next record, met
 * among many files' records), its lines from L2, where the reader's CRC pass
 * left them. A block's own records read in order need none (docs/performance.md).
 * Always inlined: GCC takes a function of prefetches alone for a const one
 * (no effect it knows of) and drops a call to it that it did not inline,
 * prefetches and all. */
static inline __attribute__((always_inline)) void ntp_prefetch_record(const struct ntp_record *r)
{
	const char *x = (const char *)r;

	_Static_assert(sizeof(*r) <= 4 * 64 + 64, "a record spans at most 5 lines");
	__builtin_prefetch(x);
	__builtin_prefetch(x + 64);
	__builtin_prefetch(x + 128);
	__builtin_prefetch(x + 192);
	__builtin_prefetch(x + sizeof(*r) - 1);
}

#endif
