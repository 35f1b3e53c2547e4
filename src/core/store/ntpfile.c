// SPDX-License-Identifier: GPL-2.0
/*
 * ntpfile.c - the streaming reader of .ntp recordings (the writer:
 * ntpfile_write.c). Layout, byte by byte: docs/ntp-format.md.
 *
 * The reader is the hot path of `ntprof report`: it verifies each block's
 * CRC32C once and hands out records in place when the file's record size is
 * ours. A regular file is read with read() into a buffer that stays in the
 * core's cache, or through mmap windows where the page cache makes them
 * the cheaper (a file read at full speed in one thread: "Mapped or read()"
 * below; NTPROF_NO_MMAP=1 never maps); a pipe or a device is read with
 * read(). Memory is the window (or the read buffer) plus one block at most,
 * whatever the file's size. See "mmap window" below for the limits.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include "../hugemem.h"
#include "ntpfile.h"
#include "ntpfile_int.h"
#include "ntpfile_layout.h"

const char *ntp_role_name(uint8_t role)
{
	switch (role) {
	case NTP_ROLE_HOST: return "host";
	case NTP_ROLE_TARGET: return "target";
	case NTP_ROLE_BOTH: return "both";
	default: return "unknown";
	}
}

const char *ntp_transport_name(uint8_t t)
{
	switch (t) {
	case NTP_TRANSPORT_TCP: return "tcp";
	case NTP_TRANSPORT_RDMA: return "rdma";
	default: return "unknown";
	}
}

/* ================================ reader ================================ */

/*
 * Read buffers. A reader read in its caller's thread reuses one buffer,
 * READ_BUF: a full records block of the writer's and the next block's
 * header (fill), whose lines stay in the core's second-level cache from one
 * block to the next, as `cat`'s buffer does. A buffer of several blocks,
 * filled from front to back, is larger than that cache: the lines read()
 * stores into were evicted since their last use and are fetched again
 * from the level shared with the other cores, the dirty ones written back
 * (docs/performance.md). A longer block grows it (fill). A read-ahead
 * thread moves on to a new buffer rather than reuse one (a block stays
 * where it lies until the caller lets it go): AHEAD_BUF holds several
 * blocks, so that it moves on every few blocks only.
 */
#define READ_BUF ((NTP_BLOCK_HDR_LEN + NTP_BLOCK_RECORDS * sizeof(struct ntp_record) + \
		   NTP_BLOCK_HDR_LEN + 8 + 4095) / 4096 * 4096)
#define AHEAD_BUF (2u << 20)
_Static_assert(READ_BUF <= NTP_READ_BUF_MAX, "ntpfile_int.h promises READ_BUF at most");
#define NTP_RETIRED_MAX (NTP_AHEAD_SLOTS + 2)
#define NTP_SPARE_MAX 8

struct ntp_reader {
	char *path;
	int fd;				/* -1 for a memory source */
	const uint8_t *mem;		/* memory source: the whole file */
	uint8_t *buf;			/* file source: read buffer */
	size_t cap;
	uint8_t *map;			/* mmap source: the current window, or NULL */
	size_t map_len;
	size_t window;			/* mmap source: bytes per window (0: shared); unused by read() */
	size_t need_max;		/* mmap source: the most bytes fill_map was asked for, up to a full records block */
	int mapped;			/* reads through mmap windows */
	/* full speed in the caller's thread (map_while_cheap): a window
	 * mapped while the windows' pages fault seldom, else read(). A
	 * window that faulted often is let go before it is used; then
	 * read() up to offset remap_at, backoff bytes on from where it
	 * began, doubled by each such window in a row. */
	int map_cheap;
	uint64_t remap_at, backoff;
	int map_dear;			/* tests: see ntp_reader_opts */
	unsigned windows_told;		/* tests: windows judged so far under map_dear 2 */
	uint64_t map_fail_from;		/* tests: see ntp_reader_opts */
	int ahead_map;			/* see ntp_reader_opts */
	int ahead_fail;			/* tests: see ntp_reader_opts */
	uint64_t read_fail_from;	/* tests: see ntp_reader_opts */
	int stream;			/* not a regular file: a pipe, a device */
	int map_slot;			/* in the SIGBUS table, or -1 */
	const uint8_t *data;		/* buf, map or mem */
	size_t start, end;		/* unread bytes are data[start, end) */
	uint64_t off;			/* file offset of data[start] */
	uint64_t size;			/* regular file's size at open; 0 if unknown */
	int eof, done, seen_end;
	/* ntp_reader_follow: the idle time (0: not following), the file's
	 * size when last seen at its end and when it last grew (CLOCK_MONOTONIC),
	 * whether the last call waited */
	uint64_t follow_idle, follow_size, follow_grew;
	int follow_seen, waiting;
	uint64_t lost_bytes;		/* skipped looking for a sound block header (resync) */
	struct ntp_file_info info;
	struct ntp_read_stats st;
	struct ntp_total *totals;
	size_t ntotals, totals_cap;
	uint64_t totals_as_of;
	struct ntp_record *scratch;	/* copies when records are not usable in place */
	size_t scratch_cap;
	/* ntp_reader_next() cursor over the current block */
	const struct ntp_record *cur;
	size_t cur_n, cur_i;
	uint64_t totals_gen;		/* bumped by each totals row set taken */
	struct ntp_ahead *ahead;	/* blocks read by a second thread, or NULL */
	unsigned crc_split;		/* read-ahead: sixteenths of a records block the reader checks */
	int rest_due;			/* the block last handed out left rest to the caller */
	struct ntp_crc_rest rest;
	uint64_t why_over;		/* times st.why was written over (not only when empty) */
	/* read-ahead: windows or read buffers moved past while the caller may
	 * still hold a block in them, let go once it did (ntpfile_ahead.c) */
	struct retired {
		uint8_t *map;		/* a window, or a read buffer (slot -2) */
		size_t len;
		uint64_t seq;		/* blocks handed out before it was left */
		int slot;		/* in the SIGBUS table, or -1; -2: a buffer */
	} retired[NTP_RETIRED_MAX];
	size_t nretired;
	/* read buffers let go, kept for the next (buf_new): a read-ahead
	 * reader moves to a new buffer every few blocks */
	uint8_t *spare[NTP_SPARE_MAX];
	size_t nspare, spare_cap;
	/* its READ_BUF in an arena (struct ntp_buf_arena: many files'
	 * buffers, or one for readers in turn), or NULL */
	struct ntp_buf_arena *arena;
	uint8_t *arena_buf;
};

/*
 * Makes at least need bytes available at data[start] if the file has them.
 * Returns the number available (less only at the end of the file).
 *
 * Reads what the next block needs plus READ_AHEAD (so the following block
 * header and small blocks come along), not "as much as fits": what is left
 * over has to be moved to the buffer's front before the next large block,
 * and moving a megabyte per block would cost as much as the CRC. A reader
 * without read-ahead, which reuses its buffer at every block, reads the
 * next block's header only (READ_BUF_AHEAD): one read() per block still,
 * and a few bytes to move.
 */
#define READ_AHEAD (64u << 10)
#define READ_BUF_AHEAD NTP_BLOCK_HDR_LEN

static size_t fill_map(struct ntp_reader *r, size_t need);
static size_t map_again(struct ntp_reader *r, size_t need);
static struct retired *retire(struct ntp_reader *r, uint8_t *p, size_t len);

/*
 * A read buffer of cap bytes: a spare one of that size (buf_let_go), or a
 * new one. A read-ahead reader moves to a new buffer every few blocks and
 * lets the old one go once the caller is done with it; freed and
 * allocated again, each came back from the C library as fresh pages, one
 * page fault per 4 KiB at read()'s first touch, in the reading thread that
 * sets a report's pace. Read-ahead's buffers (AHEAD_BUF, 2 MiB) are huge
 * pages where the kernel has them (hugemem.h): a few of them were 770 of
 * a report's 1145 faults, about 12 ms where a fault costs 16 us
 * (docs/performance.md, "No copy of the records").
 */
static uint8_t *buf_new(struct ntp_reader *r, size_t cap)
{
	if (r->nspare && r->spare_cap == cap)
		return r->spare[--r->nspare];
	return cap < NTP_HUGE_PAGE ? malloc(cap) : ntp_huge_map(cap);
}

/* A buffer of cap bytes from buf_new (or malloc, below NTP_HUGE_PAGE) given
 * back: a fresh mapping's huge pages are sure to be whole, where memory
 * the heap had used may hold small pages already */
static void buf_drop(uint8_t *p, size_t cap)
{
	if (cap < NTP_HUGE_PAGE)
		free(p);
	else
		ntp_huge_unmap(p, cap);
}

/*
 * The read buffers of the files read at once in one thread
 * (ntp_readers_full_speed), one READ_BUF each, in huge pages (hugemem.h).
 * A join of many files holds a block of each at once; their buffers from
 * malloc took a page fault per 4 KiB at read()'s first touch, thousands
 * for a 64-file join, where 2 MiB pages take a few (docs/performance.md,
 * "Many files"); a few files' buffers took 68 each, which cost over 1 ms
 * where a fault is dear. Freed at the put of the last of its users.
 */
struct ntp_buf_arena {
	uint8_t *mem;
	size_t len, nbufs;
	size_t users;
};

struct ntp_buf_arena *ntp_buf_arena_new(size_t nbufs, size_t extra)
{
	struct ntp_buf_arena *a = calloc(1, sizeof(*a));

	if (a && !(a->mem = ntp_huge_map(a->len = nbufs * READ_BUF + extra))) {
		free(a);
		return NULL;
	}
	if (a) {
		a->nbufs = nbufs;
		a->users = 1;	/* the caller's */
	}
	return a;
}

void *ntp_buf_arena_extra(const struct ntp_buf_arena *a)
{
	return a->mem + a->nbufs * READ_BUF;
}

static uint8_t *arena_buf(struct ntp_buf_arena *a, size_t i)
{
	return a->mem + i * READ_BUF;
}

void ntp_buf_arena_put(struct ntp_buf_arena *a)
{
	if (a && !__atomic_sub_fetch(&a->users, 1, __ATOMIC_ACQ_REL)) {
		ntp_huge_unmap(a->mem, a->len);
		free(a);
	}
}

/* A reader's own buffer freed: one in the arena stays there. */
static void buf_free(struct ntp_reader *r)
{
	if (!r->buf || (r->arena && r->buf == r->arena_buf))
		return;
	buf_drop(r->buf, r->cap);
}

/* A read buffer nobody reads any more: kept for buf_new, or freed. */
static void buf_let_go(struct ntp_reader *r, uint8_t *p, size_t cap)
{
	if (r->nspare && cap < r->spare_cap) {
		buf_drop(p, cap);	/* buffers grew (a longer block, read-ahead's): not wanted again */
		return;
	}
	if (r->nspare && r->spare_cap != cap) {
		while (r->nspare)
			buf_drop(r->spare[--r->nspare], r->spare_cap);
	}
	if (r->nspare == NTP_SPARE_MAX) {
		buf_drop(p, cap);
		return;
	}
	r->spare_cap = cap;
	r->spare[r->nspare++] = p;
}

static size_t fill(struct ntp_reader *r, size_t need)
{
	size_t have = r->end - r->start;

	if (have >= need || r->fd < 0 || r->eof)
		return have;
	if (r->mapped)
		return fill_map(r, need);
	if (r->map_cheap && r->off >= r->remap_at)
		return map_again(r, need);
	/* a damaged length must not grow the buffer past what the file holds;
	 * a file still being written may have grown since its size was taken
	 * (taken again here only, at what was its end) */
	if (r->size && r->off + need > r->size && r->size > r->off) {
		struct stat sb;

		if (!fstat(r->fd, &sb) && (uint64_t)sb.st_size > r->size)
			r->size = (uint64_t)sb.st_size;
		if (r->off + need > r->size)
			need = (size_t)(r->size - r->off) + 1;	/* +1: see the end of the file */
	}
	if (r->start + need > r->cap) {
		/* move the unread bytes to the front, keeping their file offset's
		 * alignment mod 8 so records stay 8-byte aligned in place */
		size_t lead = r->off & 7, ncap = r->cap;

		/* a longer block: read-ahead's buffers double (its spares keep
		 * one size), a reader's own grows to what it reads at once */
		if (need + lead > ncap && !r->ahead)
			ncap = (need + lead + READ_BUF_AHEAD + 4095) & ~(size_t)4095;
		while (need + lead > ncap)
			ncap *= 2;
		if (r->ahead && ncap < AHEAD_BUF)
			ncap = AHEAD_BUF;
		/* with read-ahead the caller may still read blocks in the buffer:
		 * the unread bytes go to a new one, the old is let go later */
		if (ncap != r->cap || r->ahead) {
			uint8_t *nb = buf_new(r, ncap);

			if (!nb)
				return have;
			memcpy(nb + lead, r->buf + r->start, have);
			if (r->ahead)
				retire(r, r->buf, r->cap);
			else
				buf_free(r);	/* outgrown: no spare is taken without read-ahead */
			r->buf = nb;
			r->cap = ncap;
		} else {
			memmove(r->buf + lead, r->buf + r->start, have);
		}
		r->start = lead;
		r->end = lead + have;
		r->data = r->buf;
	}
	while (r->end - r->start < need) {
		size_t want = need - (r->end - r->start) + (r->ahead ? READ_AHEAD : READ_BUF_AHEAD);
		uint64_t at = r->off + (r->end - r->start);
		ssize_t n;

		if (want > r->cap - r->end)
			want = r->cap - r->end;	/* >= the bytes still needed */
		if (r->read_fail_from && at + want > r->read_fail_from) {
			/* tests: the bytes before the bad offset, then EIO */
			want = at < r->read_fail_from ? (size_t)(r->read_fail_from - at) : 0;
			errno = EIO;
		}
		n = want ? read(r->fd, r->buf + r->end, want) : -1;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r->why_over++;
			snprintf(r->st.why, sizeof(r->st.why), "read error at offset %llu: %s",
				 (unsigned long long)(r->off + (r->end - r->start)), strerror(errno));
			r->eof = 1;
			break;
		}
		if (n == 0) {
			r->eof = 1;
			break;
		}
		r->end += (size_t)n;
	}
	return r->end - r->start;
}

/*
 * ---- mmap window ----
 *
 * A regular file is mapped window by window (NTP_MAP_WINDOW bytes shared by
 * the readers open at once, more when one block needs it); the previous
 * window is unmapped first, so the resident size stays one window whatever
 * the file's size (mapped file pages count in RSS). The pages are mapped
 * by the faults of the first touch (the kernel maps the pages around the
 * one faulted in the same fault), not with MAP_POPULATE, whose walk of the
 * window page by page cost more CPU than those faults (docs/performance.md);
 * a file read at full speed in one thread touches its window every 64 KiB
 * as soon as it is mapped, to count those faults (window_dear).
 *
 * The file's size is taken again (fstat) before each window is mapped, and a
 * window never reaches past it: a file that grows while it is read (a
 * recording still being written) is read on as with read(), and one that was
 * truncated before a window is mapped simply ends there (reported as a cut
 * tail, as with read()).
 *
 * The one case mmap cannot turn into an error return: the file is truncated
 * by another process *while* a window is mapped and the reader or its caller
 * then touches a page past the new end. The kernel raises SIGBUS; there is no
 * return value to report it through, since the records are read in place by
 * the caller. ntp_reader_catch_sigbus() installs a handler that recognises a
 * fault inside a reader's window, prints one line naming the file and exits
 * with status 1 (nothing of a report has been printed yet: reports are
 * printed after the last record). Programs that do not install it get the
 * default action (killed by SIGBUS). .ntp files are written by appending and
 * never shrunk by ntprof, so this takes a second program truncating a
 * recording under the reader; the speed (no copy of every byte) is worth that
 * limit. Set NTPROF_NO_MMAP=1 in the environment to read with read() instead.
 */
#define NTP_MAP_SLOTS 64

static const uint8_t no_bytes[8];	/* data before the first window */

static struct map_slot {
	const uint8_t *volatile addr;	/* NULL: free */
	volatile size_t len;
	const char *volatile path;
} map_slots[NTP_MAP_SLOTS];

static int map_slot_take(const char *path)
{
	for (int i = 0; i < NTP_MAP_SLOTS; i++) {
		const char *none = NULL;

		if (__atomic_compare_exchange_n(&map_slots[i].path, &none, path, 0,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			return i;
	}
	return -1;	/* more than 64 readers mapped at once: still works, not recognised */
}

static void map_slot_set(int i, const uint8_t *addr, size_t len)
{
	if (i < 0)
		return;
	map_slots[i].addr = NULL;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	map_slots[i].len = len;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	map_slots[i].addr = addr;
}

static void map_slot_free(int i)
{
	if (i < 0)
		return;
	map_slot_set(i, NULL, 0);
	__atomic_store_n(&map_slots[i].path, NULL, __ATOMIC_RELEASE);
}

/*
 * Readers open at once share NTP_MAP_WINDOW (a join of several files maps
 * NTP_MAP_WINDOW / n of each, at least MAP_WINDOW_MIN), so the resident size
 * stays about the same whatever the number of files: 64 files at 1 MiB each
 * held 64 MiB of mapped pages. A longer block than the window is mapped whole
 * (fill_map maps what a block needs), so the writer's blocks bound it too.
 */
#define MAP_WINDOW_MIN (256u << 10)
static int map_readers;

static size_t shared_window(size_t page)
{
	int n = __atomic_load_n(&map_readers, __ATOMIC_RELAXED);
	size_t w = NTP_MAP_WINDOW / (size_t)(n > 1 ? n : 1);

	if (w < MAP_WINDOW_MIN)
		w = MAP_WINDOW_MIN;
	return (w + page - 1) / page * page;
}

static const char *sigbus_prog = "ntprof";

static void put_str(char *buf, size_t *n, size_t cap, const char *s)
{
	while (*s && *n < cap)
		buf[(*n)++] = *s++;
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	const uint8_t *a = si->si_addr;

	(void)uc;
	for (int i = 0; i < NTP_MAP_SLOTS; i++) {
		const uint8_t *base = map_slots[i].addr;
		const char *path = map_slots[i].path;

		if (base && path && a >= base && a < base + map_slots[i].len) {
			char msg[512];
			size_t n = 0;

			/* async-signal-safe: no stdio */
			put_str(msg, &n, sizeof(msg) - 1, sigbus_prog);
			put_str(msg, &n, sizeof(msg) - 1, ": ");
			put_str(msg, &n, sizeof(msg) - 1, path);
			put_str(msg, &n, sizeof(msg) - 1,
				": the file was truncated while being read (SIGBUS on its mapping); no report\n");
			if (write(STDERR_FILENO, msg, n) < 0)
				_exit(1);
			_exit(1);
		}
	}
	/* not ours: the default action, on return the access faults again */
	signal(sig, SIG_DFL);
}

int ntp_reader_catch_sigbus(const char *prog)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (prog)
		sigbus_prog = prog;
	return sigaction(SIGBUS, &sa, NULL) ? -errno : 0;
}

/* Unmaps the retired windows that no block the caller holds lies in
 * (released: blocks it let go). */
void ntp_reader_reap(struct ntp_reader *r, uint64_t released)
{
	size_t k = 0;

	for (size_t i = 0; i < r->nretired; i++) {
		struct retired *w = &r->retired[i];

		if (w->seq <= released && w->slot == -2) {
			buf_let_go(r, w->map, w->len);
		} else if (w->seq <= released) {
			map_slot_free(w->slot);
			munmap(w->map, w->len);
		} else {
			r->retired[k++] = *w;
		}
	}
	r->nretired = k;
}

/* With read-ahead the caller may still read the blocks handed out from this
 * window: it is kept (and still recognised by the SIGBUS handler) until
 * they are let go. */
static struct retired *retire(struct ntp_reader *r, uint8_t *p, size_t len)
{
	struct retired *w;

	if (r->nretired == NTP_RETIRED_MAX)
		ntp_reader_reap(r, ntp_ahead_wait_released(r->ahead, r->retired[0].seq));
	w = &r->retired[r->nretired++];
	w->map = p;
	w->len = len;
	w->seq = ntp_ahead_published(r->ahead);
	w->slot = -2;
	return w;
}

static void retire_window(struct ntp_reader *r)
{
	struct retired *w = retire(r, r->map, r->map_len);

	w->slot = map_slot_take(r->path);
	map_slot_set(w->slot, w->map, w->len);
	map_slot_set(r->map_slot, NULL, 0);
	r->map = NULL;
	r->map_len = 0;
}

struct ntp_ahead *ntp_reader_ahead(const struct ntp_reader *r)
{
	return r->ahead;
}

int ntp_reader_block_kept(const struct ntp_reader *r, const struct ntp_record *recs)
{
	const uint8_t *p = (const uint8_t *)recs;

	if (r->map)
		return p >= r->map && p < r->map + r->map_len;
	/* read(): with read-ahead the buffer is retired, never moved (fill) */
	return r->ahead && r->buf && p >= r->buf && p < r->buf + r->cap;
}

static void unmap_window(struct ntp_reader *r)
{
	if (!r->map)
		return;
	if (r->ahead) {
		retire_window(r);
		return;
	}
	map_slot_set(r->map_slot, NULL, 0);
	munmap(r->map, r->map_len);
	r->map = NULL;
	r->map_len = 0;
}

/*
 * A file system that cannot map the file (ENODEV), or no address space left:
 * read it on with read() from the current offset, as if it had never been
 * mapped. The unmapped window's bytes are read again.
 */
/* From here on the file is read with read(), from the current offset, into
 * a buffer of cap bytes: READ_BUF, AHEAD_BUF for a read-ahead thread. */
static int to_read(struct ntp_reader *r, size_t cap)
{
	r->mapped = 0;
	__atomic_sub_fetch(&map_readers, 1, __ATOMIC_RELAXED);
	if (!r->buf) {	/* a file mapped again (map_again) keeps its buffer */
		r->cap = r->window ? r->window : cap;	/* tests: small buffers */
		if (!r->window && r->size && r->size > r->off && r->size - r->off + 64 < r->cap)
			r->cap = (size_t)(r->size - r->off) + 64;
		r->buf = r->arena && r->cap <= READ_BUF && !r->ahead ? r->arena_buf : buf_new(r, r->cap);
	}
	if (!r->buf || lseek(r->fd, (off_t)r->off, SEEK_SET) < 0) {
		r->why_over++;
		snprintf(r->st.why, sizeof(r->st.why), "cannot map or read at offset %llu: %s",
			 (unsigned long long)r->off, r->buf ? strerror(errno) : "out of memory");
		r->eof = 1;
		r->start = r->end = 0;
		r->data = no_bytes;
		return -1;
	}
	r->data = r->buf;
	r->start = r->end = (size_t)(r->off & 7);	/* records stay 8-byte aligned */
	return 0;
}

static size_t map_failed(struct ntp_reader *r, size_t need)
{
	r->map_cheap = 0;	/* read() for good: not mapped again (map_again) */
	return to_read(r, r->ahead ? AHEAD_BUF : READ_BUF) ? 0 : fill(r, need);
}

/*
 * Mapped or read(), for a file read at full speed in the caller's thread
 * (map_while_cheap). The kernel's copy of read() costs about what `cat`
 * costs; a mapped window costs its page faults instead, and the CRC's
 * first touch from memory. Which is less depends on the page cache: a
 * 2 MiB folio (large folios, recent kernels and file systems, memory not
 * too fragmented when the file was read in) is mapped whole by one fault,
 * 4 KiB pages by a fault per 16 (the kernel's fault-around), and the
 * folios are the kernel's choice, made when the file was written or read
 * in, and may differ from one part of a file to the next. So a window of
 * NTP_HUGE_PAGE or more is mapped whole as soon as it is made, a byte
 * touched every CHEAP_STRIDE, an NTP_HUGE_PAGE stretch at a time, and the
 * faults that took are timed and counted (the thread's minor faults,
 * getrusage): once they took longer than the read() of the bytes touched
 * would (CHEAP_COPY_NS), or at the window's end past CHEAP_FAULTS per
 * MiB, the window is let go before any of it is used and the file read
 * with read() for a while from the window's read offset (backoff), then
 * mapped again (docs/performance.md, "Mapped or read()"). The time alone
 * decides at a stretch: where a fault costs much (a hypervisor that
 * shadows the page tables), a folio of 1 MiB mapped by 256 page-table
 * entries took as long as 4 KiB pages, at a fault per MiB. The count
 * decides at the end: where faults are cheap, a window of 4 KiB pages is
 * let go as before, and one with a few small pages among 2 MiB folios is
 * kept. The window's own faults only: counted over its use, they took in
 * the caller's too (a report's first groups, 64 groups' histograms),
 * which turned files in 2 MiB folios to read().
 */
#define CHEAP_FAULTS 8
#define CHEAP_STRIDE ((size_t)64 << 10)
/* what read() of a MiB is taken to cost at least, in ns: the kernel's
 * copy at 16 GB/s (docs/performance.md, "Mapped or read()"); faults that
 * took longer are taken as slower than read() */
#define CHEAP_COPY_NS 65536

static uint64_t thread_faults(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? 0 : (uint64_t)ru.ru_minflt;
}

static uint64_t clock_ns(clockid_t id);

int ntp_map_touch_dear(uint64_t faults, uint64_t ns, uint64_t done, uint64_t len)
{
	if (ns * (1u << 20) > CHEAP_COPY_NS * done)
		return 1;	/* slower than read(), whatever the count */
	return done >= len && faults * (1u << 20) > CHEAP_FAULTS * len;
}

/* Whether mapping len bytes at p costs more than read() of them
 * (ntp_map_touch_dear), asked at the end of each NTP_HUGE_PAGE stretch. */
static int window_dear(const uint8_t *p, size_t len)
{
	uint64_t before = thread_faults(), t0 = clock_ns(CLOCK_MONOTONIC);
	size_t o = 0;

	while (o < len) {
		size_t stop = len - o > NTP_HUGE_PAGE ? o + NTP_HUGE_PAGE : len;

		for (; o < stop; o += CHEAP_STRIDE)
			(void)*(const volatile uint8_t *)(p + o);
		if (ntp_map_touch_dear(thread_faults() - before, clock_ns(CLOCK_MONOTONIC) - t0,
				       o < len ? o : len, len))
			return 1;
	}
	return 0;
}

/* The bytes read with read() after a window that faulted often, before
 * the next is mapped: a window's length, doubled by each such window in a
 * row (a file all in small pages is mapped a few windows in all, the
 * logarithm of its length). */
static size_t cheap_backoff(const struct ntp_reader *r)
{
	return r->window ? r->window : NTP_MAP_WINDOW;
}

/* fill() at remap_at: the file mapped again from the read offset, the
 * bytes in the read buffer let go (the window maps them), the buffer kept
 * for the next turn to read() (to_read). */
static size_t map_again(struct ntp_reader *r, size_t need)
{
	r->mapped = 1;
	__atomic_add_fetch(&map_readers, 1, __ATOMIC_RELAXED);
	r->start = r->end = 0;
	r->data = no_bytes;
	return fill_map(r, need);
}

static int window_to_read(struct ntp_reader *r, size_t cap);

/* window_dear, or what the tests tell instead (map_dear) */
static int window_told_dear(struct ntp_reader *r, const uint8_t *p, size_t len)
{
	switch (r->map_dear) {
	case 0:
		return window_dear(p, len);
	case 2:
		return r->windows_told++ == 0;
	default:
		return r->map_dear > 0;
	}
}

/* mmap of len bytes of fd from base, at an address that is a multiple of
 * NTP_HUGE_PAGE, where a page-table entry of the level above can map a
 * 2 MiB folio (some file systems place a mapping so, not all): address
 * space reserved on such a boundary (ntp_huge_reserve), the file mapped
 * over it. */
static void *map_aligned(int fd, size_t len, uint64_t base)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), span = (len + page - 1) / page * page;
	void *at = ntp_huge_reserve(span, PROT_NONE), *p;

	if (!at)
		return MAP_FAILED;
	p = mmap(at, len, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, (off_t)base);
	if (p == MAP_FAILED)
		munmap(at, span);
	return p;
}

/* fill() for a mapped file: maps a window starting at the page of the read
 * offset (at the 2 MiB boundary before it: map_cheap), holding at least
 * need bytes if the file has them. */
static size_t fill_map(struct ntp_reader *r, size_t need)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t have = r->end - r->start, lead, len, window;
	uint64_t base;
	struct stat sb;
	int aligned = 0;
	void *p;

	/* the size now: grown while recording, or truncated since the last window */
	if (!fstat(r->fd, &sb))
		r->size = (uint64_t)sb.st_size;
	base = r->off & ~(uint64_t)(page - 1);
	lead = (size_t)(r->off - base);
	if (r->off >= r->size) {
		r->eof = 1;	/* at the end, or the file shrank below the offset */
		return have;
	}
	window = r->window ? r->window : shared_window(page);
	/* A shared window shorter than a block (many files open at once) was
	 * mapped for the block's header, then again for the whole block: every
	 * page mapped twice. At least the longest block asked for so far,
	 * from the read offset's page on, maps each block once. A longer
	 * block than the writer's full one (a damaged length) is mapped
	 * whole as before, without growing the windows after it. */
	if (need > r->need_max && need <= NTP_BLOCK_HDR_LEN + NTP_BLOCK_RECORDS * sizeof(struct ntp_record))
		r->need_max = need;
	if (!r->window && window < r->need_max + page)
		window = (r->need_max + 2 * page - 1) / page * page;
	/* The header's window is small: the files of a join are opened one
	 * after the other, and the first must not keep a whole share. */
	if (!r->off && window > (1u << 20))
		window = 1u << 20;
	/* A window from a 2 MiB boundary of the file, at a 2 MiB boundary of
	 * memory (map_aligned): its 2 MiB folios are mapped whole from its
	 * start on, where one cut at the read offset had two partly mapped, a
	 * fault per 16 pages each. */
	if (r->map_cheap && window >= NTP_HUGE_PAGE) {
		aligned = 1;
		base = r->off & ~(uint64_t)(NTP_HUGE_PAGE - 1);
		lead = (size_t)(r->off - base);
	}
	len = lead + need > window ? lead + need : window;
	if (len > r->size - base)
		len = (size_t)(r->size - base);
	if (len <= lead + have) {
		r->eof = 1;	/* nothing past what is mapped */
		return have;
	}
	unmap_window(r);
	if ((r->map_fail_from && r->off >= r->map_fail_from) ||
	    (r->read_fail_from && base + len > r->read_fail_from))
		return map_failed(r, need);	/* tests: as if this mmap failed */
	p = aligned ? map_aligned(r->fd, len, base) : mmap(NULL, len, PROT_READ, MAP_PRIVATE, r->fd, (off_t)base);
	if (p == MAP_FAILED)
		return map_failed(r, need);
	madvise(p, len, MADV_SEQUENTIAL);
	r->map = p;
	r->map_len = len;
	map_slot_set(r->map_slot, p, len);	/* before the first touch (SIGBUS) */
	if (aligned || (r->map_cheap && r->map_dear)) {
		if (window_told_dear(r, p, len)) {
			/* nothing of it handed out yet: read() from the read
			 * offset, the window's bytes read again */
			r->remap_at = r->off + r->backoff;
			r->backoff *= 2;
			return window_to_read(r, READ_BUF) ? 0 : fill(r, need);
		}
		r->backoff = cheap_backoff(r);
	}
	r->data = p;
	r->start = lead;
	r->end = len;
	if (len < lead + need)
		r->eof = 1;
	return r->end - r->start;
}

static void consume(struct ntp_reader *r, size_t n)
{
	r->start += n;
	r->off += n;
}

static struct ntp_reader *reader_new(const char *name)
{
	struct ntp_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->path = strdup(name);
	r->fd = -1;
	r->map_slot = -1;
	r->crc_split = 16;	/* every block checked whole here */
	if (!r->path) {
		free(r);
		return NULL;
	}
	return r;
}

/* 1.2's host queue table; older headers have zeros where its place is
 * (docs/ntp-format.md). 0, or -1 with errbuf filled. */
static int read_hostq(struct ntp_reader *r, const uint8_t *h, uint32_t hlen, char *errbuf, size_t errlen)
{
	uint32_t off = get32(h + H_HOSTQ_OFF), count = get16(h + H_HOSTQ_COUNT);
	uint32_t esize = get16(h + H_HOSTQ_ENTSZ);

	r->info.n_hostq = 0;
	if (!off && !count)
		return 0;
	if (off < NTP_HOSTQ_OFF || esize < NTP_HOSTQ_ENTRY ||
	    (uint64_t)off + (uint64_t)count * esize > hlen - 4) {
		snprintf(errbuf, errlen, "%s: corrupt header (host queue table of %u entries of %u bytes at %u, header %u bytes)",
			 r->path, count, esize, off, hlen);
		return -1;
	}
	for (uint32_t i = 0; i < count && r->info.n_hostq < NTP_HOSTQ_MAX; i++) {
		const uint8_t *e = h + off + (size_t)i * esize;
		struct ntp_hostq *q = &r->info.hostq[r->info.n_hostq++];

		memcpy(q->dev, e, NTP_DEV_LEN - 1);
		q->dev[NTP_DEV_LEN - 1] = '\0';
		q->hw_queues = get32(e + NTP_DEV_LEN);
		q->tags = get32(e + NTP_DEV_LEN + 4);
	}
	return 0;
}

const struct ntp_hostq *ntp_hostq_find(const struct ntp_file_info *fi, const char *dev)
{
	for (uint32_t i = 0; i < fi->n_hostq && i < NTP_HOSTQ_MAX; i++)
		if (!strncmp(fi->hostq[i].dev, dev, NTP_DEV_LEN))
			return &fi->hostq[i];
	return NULL;
}

void ntp_hostq_merge(struct ntp_file_info *dst, const struct ntp_file_info *src)
{
	if (dst == src)
		return;
	for (uint32_t i = 0; i < src->n_hostq && i < NTP_HOSTQ_MAX && dst->n_hostq < NTP_HOSTQ_MAX; i++)
		if (!ntp_hostq_find(dst, src->hostq[i].dev))
			dst->hostq[dst->n_hostq++] = src->hostq[i];
}

static int parse_header(struct ntp_reader *r, char *errbuf, size_t errlen)
{
	const char *p = r->path;
	size_t have = fill(r, 16);
	const uint8_t *h = r->data + r->start;
	uint16_t major, minor;
	uint32_t hlen, recsize;

	if (r->st.why[0]) {
		snprintf(errbuf, errlen, "%s: %s", p, r->st.why);
		return -1;
	}
	if (have == 0) {
		snprintf(errbuf, errlen, "%s: empty file, not an ntprof recording", p);
		return -1;
	}
	if (memcmp(h, NTP_FILE_MAGIC, have < 8 ? have : 8)) {
		snprintf(errbuf, errlen, "%s: not an ntprof recording (wrong magic)", p);
		return -1;
	}
	if (have < 16) {
		snprintf(errbuf, errlen, "%s: truncated header (%zu bytes)", p, have);
		return -1;
	}
	major = get16(h + H_MAJOR);
	minor = get16(h + H_MINOR);
	/* A version this reader does not read, in a header whose CRC as this
	 * format's fails (a header_len this format allows, its bytes there):
	 * a bit flipped in the version, or a newer layout whose CRC is
	 * elsewhere. A major far ahead of this one (or 0) is taken as the
	 * flip; one a few majors ahead is named both ways, for a newer
	 * format's header may differ in every byte after its version
	 * (docs/ntp-format.md). */
	if (major > NTP_FORMAT_MAJOR || major < 1) {
		hlen = get32(h + H_HDRLEN);
		if (hlen >= NTP_HEADER_LEN && hlen <= NTP_HEADER_MAX && !(hlen % 4) && fill(r, hlen) >= hlen) {
			h = r->data + r->start;
			if (get32(h + hlen - 4) != ntp_crc32c(0, h, hlen - 4)) {
				if (major < 1 || major > NTP_FORMAT_MAJOR + NTP_FORMAT_AHEAD)
					snprintf(errbuf, errlen, "%s: corrupt header (CRC mismatch; its version reads %u.%u)",
						 p, major, minor);
				else
					snprintf(errbuf, errlen, "%s: recorded in format %u.%u by a newer ntprof, or its header "
						 "is damaged (its CRC as format %u.x fails); this ntprof reads format %u.x",
						 p, major, minor, NTP_FORMAT_MAJOR, NTP_FORMAT_MAJOR);
				return -1;
			}
		}
	}
	if (major > NTP_FORMAT_MAJOR) {
		snprintf(errbuf, errlen, "%s: recorded in format %u.%u by a newer ntprof; this ntprof reads format %u.x, upgrade it",
			 p, major, minor, NTP_FORMAT_MAJOR);
		return -1;
	}
	if (major < 1) {
		snprintf(errbuf, errlen, "%s: format %u.%u is not supported", p, major, minor);
		return -1;
	}
	hlen = get32(h + H_HDRLEN);
	if (hlen < NTP_HEADER_LEN || hlen > NTP_HEADER_MAX || hlen % 4) {
		snprintf(errbuf, errlen, "%s: corrupt header (header length %u)", p, hlen);
		return -1;
	}
	have = fill(r, hlen);
	h = r->data + r->start;
	if (have < hlen) {
		snprintf(errbuf, errlen, "%s: truncated header (%zu of %u bytes)", p, have, hlen);
		return -1;
	}
	if (get32(h + hlen - 4) != ntp_crc32c(0, h, hlen - 4)) {
		snprintf(errbuf, errlen, "%s: corrupt header (CRC mismatch)", p);
		return -1;
	}
	recsize = get32(h + H_RECSIZE);
	if (recsize < sizeof(struct ntp_record) || recsize > NTP_RECORD_MAX) {
		snprintf(errbuf, errlen, "%s: corrupt header (record size %u, expected at least %zu)",
			 p, recsize, sizeof(struct ntp_record));
		return -1;
	}
	if (h[H_ROLE] < NTP_ROLE_HOST || h[H_ROLE] > NTP_ROLE_BOTH) {
		snprintf(errbuf, errlen, "%s: corrupt header (role %u)", p, h[H_ROLE]);
		return -1;
	}
	if (get32(h + H_SAMPLING) == 0) {
		snprintf(errbuf, errlen, "%s: corrupt header (sampling 0)", p);
		return -1;
	}
	r->info.version_major = major;
	r->info.version_minor = minor;
	r->info.record_size = recsize;
	r->info.role = h[H_ROLE];
	r->info.transport = h[H_TRANSPORT];
	r->info.impl_host = h[H_IMPL_HOST];
	r->info.impl_target = h[H_IMPL_TARGET];
	r->info.sampling = get32(h + H_SAMPLING);
	r->info.start_mono_ns = get64(h + H_START_MONO);
	r->info.start_real_ns = get64(h + H_START_REAL);
	memcpy(r->info.hostname, h + H_HOSTNAME, NTP_HOSTNAME_LEN - 1);
	memcpy(r->info.kernel, h + H_KERNEL, NTP_KERNEL_LEN - 1);
	memcpy(r->info.tool_version, h + H_TOOLVER, NTP_TOOLVER_LEN - 1);
	if (read_hostq(r, h, hlen, errbuf, errlen))
		return -1;
	consume(r, hlen);
	r->st.end_mono_ns = r->info.start_mono_ns;
	return 0;
}

struct ntp_reader *ntp_reader_open(const char *path, char *errbuf, size_t errlen)
{
	const char *no_mmap = getenv("NTPROF_NO_MMAP");
	struct ntp_reader_opts o = { 0 };

	const char *ahead_map = getenv("NTPROF_AHEAD_MMAP");

	if (no_mmap && *no_mmap && strcmp(no_mmap, "0"))
		o.no_mmap = 1;
	if (ahead_map && *ahead_map && strcmp(ahead_map, "0"))
		o.ahead_map = 1;
	return ntp_reader_open_opts(path, &o, errbuf, errlen);
}

struct ntp_reader *ntp_reader_open_opts(const char *path, const struct ntp_reader_opts *o,
					char *errbuf, size_t errlen)
{
	struct ntp_reader *r = reader_new(path);
	struct stat sb;

	if (!r) {
		snprintf(errbuf, errlen, "%s: out of memory", path);
		goto fail;
	}
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		snprintf(errbuf, errlen, "%s: cannot open: %s", path, strerror(errno));
		goto fail;
	}
	if (fstat(r->fd, &sb))
		memset(&sb, 0, sizeof(sb));
	if (S_ISDIR(sb.st_mode)) {
		snprintf(errbuf, errlen, "%s: is a directory", path);
		goto fail;
	}
	if (S_ISREG(sb.st_mode))
		r->size = (uint64_t)sb.st_size;
	posix_fadvise(r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	r->ahead_fail = o->ahead_fail;
	r->read_fail_from = o->read_fail_from;
	r->stream = !S_ISREG(sb.st_mode);
	if (S_ISREG(sb.st_mode) && !o->no_mmap) {
		size_t page = (size_t)sysconf(_SC_PAGESIZE);

		r->mapped = 1;
		__atomic_add_fetch(&map_readers, 1, __ATOMIC_RELAXED);
		r->window = (o->map_window + page - 1) / page * page;	/* 0: shared */
		r->map_fail_from = o->map_fail_from;
		r->ahead_map = o->ahead_map;
		r->map_dear = o->map_dear;
		r->map_slot = map_slot_take(r->path);
		r->data = no_bytes;
		if (parse_header(r, errbuf, errlen))
			goto fail;
		return r;
	}
	/* a full records block and the next read fit; less for a small file */
	r->cap = READ_BUF;
	if (r->size && r->size + 64 < r->cap)
		r->cap = (size_t)r->size + 64;
	if (o->arena) {
		r->arena = o->arena;
		r->arena_buf = arena_buf(o->arena, 0);
		__atomic_add_fetch(&o->arena->users, 1, __ATOMIC_ACQ_REL);
	}
	if (!(r->buf = r->arena ? r->arena_buf : buf_new(r, r->cap))) {
		snprintf(errbuf, errlen, "%s: out of memory", path);
		goto fail;
	}
	r->data = r->buf;
	if (parse_header(r, errbuf, errlen))
		goto fail;
	return r;
fail:
	ntp_reader_close(r);
	return NULL;
}

struct ntp_reader *ntp_reader_open_mem(const void *buf, size_t len, const char *name,
				       char *errbuf, size_t errlen)
{
	struct ntp_reader *r = reader_new(name);

	if (!r) {
		snprintf(errbuf, errlen, "%s: out of memory", name);
		return NULL;
	}
	r->mem = buf;
	r->data = buf;
	r->end = len;
	r->eof = 1;
	if (parse_header(r, errbuf, errlen)) {
		ntp_reader_close(r);
		return NULL;
	}
	return r;
}

const struct ntp_file_info *ntp_reader_info(const struct ntp_reader *r) { return &r->info; }
const char *ntp_reader_path(const struct ntp_reader *r) { return r->path; }
const struct ntp_read_stats *ntp_reader_stats(const struct ntp_reader *r)
{
	return r->ahead ? ntp_ahead_stats(r->ahead) : &r->st;
}

const struct ntp_read_stats *ntp_reader_stats_direct(const struct ntp_reader *r) { return &r->st; }

const struct ntp_total *ntp_reader_totals(const struct ntp_reader *r, size_t *n, uint64_t *as_of_mono_ns)
{
	if (r->ahead)
		return ntp_ahead_totals(r->ahead, n, as_of_mono_ns);
	return ntp_reader_totals_direct(r, n, as_of_mono_ns, NULL);
}

const struct ntp_total *ntp_reader_totals_direct(const struct ntp_reader *r, size_t *n,
						 uint64_t *as_of_mono_ns, uint64_t *gen)
{
	if (gen)
		*gen = r->totals_gen;
	if (n)
		*n = r->ntotals;
	if (as_of_mono_ns)
		*as_of_mono_ns = r->totals_as_of;
	return r->totals;
}

/*
 * The end of a file read past a bad block header (resync) with no trailer
 * after it to count the records lost: about one record per record's size of
 * the bytes skipped, and the reason says that this count is an estimate.
 */
static void lost_estimate(struct ntp_reader *r)
{
	uint64_t est = r->lost_bytes / r->info.record_size;
	size_t n = strlen(r->st.why);

	r->st.dropped += est;
	snprintf(r->st.why + n, sizeof(r->st.why) - n, "; %llu bytes skipped, about %llu records (an estimate)",
		 (unsigned long long)r->lost_bytes, (unsigned long long)est);
	r->lost_bytes = 0;
}

static void stop(struct ntp_reader *r, int corrupt, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void stop(struct ntp_reader *r, int corrupt, const char *fmt, ...)
{
	va_list ap;

	if (corrupt)
		r->st.corrupt = 1;
	else
		r->st.truncated = 1;
	if (!r->st.why[0]) {
		va_start(ap, fmt);
		vsnprintf(r->st.why, sizeof(r->st.why), fmt, ap);
		va_end(ap);
	}
	if (r->lost_bytes)
		lost_estimate(r);
	r->done = 1;
}

/* Checks the block header at data[start]: 0 ok, -1 bad. */
static int block_header_ok(const struct ntp_reader *r, const uint8_t *h)
{
	uint32_t len = get32(h + B_LEN);

	if (get32(h + B_MAGIC) != NTP_BLOCK_MAGIC || get32(h + B_HCRC) != ntp_crc32c(0, h, B_HCRC))
		return -1;
	if (len > NTP_BLOCK_MAX_PAYLOAD)
		return -1;
	if (get16(h + B_TYPE) == NTP_BLOCK_RECORDS_T &&
	    (uint64_t)get32(h + B_COUNT) * r->info.record_size != len)
		return -1;
	return 0;
}

/* A block whose payload fails its CRC under a sound header (its own CRC):
 * the length is known, so only that block is dropped and reading goes on;
 * the file is marked damaged and the first such block named. */
static void mark_damaged(struct ntp_read_stats *st, uint64_t at)
{
	st->corrupt = 1;
	st->damaged_blocks++;
	if (!st->why[0])
		snprintf(st->why, sizeof(st->why), "block at offset %llu fails its CRC",
			 (unsigned long long)at);
}

static void damaged(struct ntp_reader *r, uint64_t at)
{
	mark_damaged(&r->st, at);
}

void ntp_read_stats_damaged(struct ntp_read_stats *st, const struct ntp_crc_rest *rest)
{
	st->records -= rest->count;
	st->dropped += rest->count;
	mark_damaged(st, rest->at);
}

int ntp_crc_rest_ok(const struct ntp_crc_rest *rest, const struct ntp_record *recs)
{
	const uint8_t *p = (const uint8_t *)recs;

	return ntp_crc32c(rest->crc, p + rest->from, rest->len - rest->from) == rest->want;
}

void ntp_reader_split_crc(struct ntp_reader *r, unsigned sixteenths)
{
	r->crc_split = sixteenths;
}

const struct ntp_crc_rest *ntp_reader_crc_rest(const struct ntp_reader *r)
{
	return r->rest_due ? &r->rest : NULL;
}

uint64_t ntp_reader_why_over(const struct ntp_reader *r)
{
	return r->why_over;
}

int ntp_reader_stream(const struct ntp_reader *r)
{
	return r->stream;
}

ssize_t ntp_file_last_totals(const char *path, size_t max_tail, struct ntp_total **out)
{
	/* O_NONBLOCK: a FIFO's open() would wait for a writer that may never
	 * come; it is not a regular file and is refused below */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	uint8_t *buf = NULL;
	ssize_t got = -1, rows = 0;
	int found = 0;
	size_t len;
	struct stat sb;
	off_t from;

	*out = NULL;
	if (fd < 0)
		return -1;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode))
		goto done;
	len = (uint64_t)sb.st_size < max_tail ? (size_t)sb.st_size : max_tail;
	from = sb.st_size - (off_t)len;
	if (!(buf = malloc(len ? len : 1)))
		goto done;
	for (size_t have = 0; have < len;) {
		ssize_t n = pread(fd, buf + have, len - have, from + (off_t)have);

		if (n <= 0) {
			len = have;	/* shorter now: what was read */
			break;
		}
		have += (size_t)n;
	}
	got = 0;
	/* from the back: the latest sound totals block or trailer, whole within the tail */
	for (size_t at = len >= NTP_BLOCK_HDR_LEN ? len - NTP_BLOCK_HDR_LEN + 1 : 0; at-- > 0;) {
		const uint8_t *h = buf + at, *p = h + NTP_BLOCK_HDR_LEN;
		uint32_t blen = get32(h + B_LEN), count = get32(h + B_COUNT), esize;
		uint16_t type = get16(h + B_TYPE);
		size_t head = type == NTP_BLOCK_END ? END_HDR : TOTALS_HDR;

		if (get32(h + B_MAGIC) != NTP_BLOCK_MAGIC || (type != NTP_BLOCK_TOTALS && type != NTP_BLOCK_END) ||
		    get32(h + B_HCRC) != ntp_crc32c(0, h, B_HCRC) || blen < head ||
		    blen > len - at - NTP_BLOCK_HDR_LEN || get32(h + B_PCRC) != ntp_crc32c(0, p, blen))
			continue;
		esize = get32(p + (type == NTP_BLOCK_END ? 16 : 8));
		if (esize < NTP_TOTAL_V10_SIZE || (uint64_t)count * esize + head != blen)
			continue;
		if (count && !(*out = calloc(count, sizeof(**out)))) {
			got = -1;
			break;
		}
		for (uint32_t i = 0; i < count; i++) {
			memcpy(&(*out)[i], p + head + (size_t)i * esize,
			       esize < sizeof(struct ntp_total) ? esize : sizeof(struct ntp_total));
			(*out)[i].key.dev[NTP_DEV_LEN - 1] = '\0';
		}
		rows = count;
		found = 1;
		break;
	}
	/* no block within a tail shorter than the file: unknown, not none */
	if (got == 0 && !found && (uint64_t)len < (uint64_t)sb.st_size)
		got = -1;
	else if (got == 0)
		got = rows;
done:
	free(buf);
	close(fd);
	return got;
}

int ntp_reader_follow(struct ntp_reader *r, uint64_t idle_ns)
{
	if (r->fd < 0 || r->stream || r->ahead || !idle_ns)
		return -1;
	r->follow_idle = idle_ns;
	return 0;
}

uint64_t ntp_reader_following(const struct ntp_reader *r)
{
	return r->follow_idle;
}

int ntp_reader_waiting(const struct ntp_reader *r)
{
	return r->waiting;
}

static int take_totals(struct ntp_reader *r, const uint8_t *p, uint32_t len, uint32_t count,
		       size_t headlen, uint32_t esize, uint64_t as_of);
static void check_count(struct ntp_reader *r, uint64_t written, uint64_t at);

/*
 * A bad block header at `at` that is the trailer's, but for the header:
 * the type and length it claims are the trailer's, the block ends the file
 * and its payload passes the CRC the header names. Only the header was
 * damaged (a byte of its magic, count or own CRC): the trailer is read as
 * such (its end time, totals and count of records written, against which
 * the records read are checked), rather than skipped, its bytes counted as
 * records lost. The file stays marked damaged, its reason says what was.
 */
static int trailer_past_bad_header(struct ntp_reader *r, uint64_t at, int named)
{
	const uint8_t *h = r->data + r->start, *p;
	uint32_t len = get32(h + B_LEN), count = get32(h + B_COUNT);
	size_t whole = NTP_BLOCK_HDR_LEN + (size_t)len, n;
	uint64_t end, written;

	if (get16(h + B_TYPE) != NTP_BLOCK_END || len < END_HDR || len > NTP_BLOCK_MAX_PAYLOAD)
		return 0;
	if (fill(r, whole + 1) != whole)
		return 0;	/* cut inside, or more follows: not the trailer */
	h = r->data + r->start;
	p = h + NTP_BLOCK_HDR_LEN;
	if (get32(h + B_PCRC) != ntp_crc32c(0, p, len) ||
	    take_totals(r, p, len, count, END_HDR, get32(p + 16), get64(p)))
		return 0;
	end = get64(p);
	written = get64(p + 8);
	consume(r, whole);
	n = strlen(r->st.why);
	if (named)
		snprintf(r->st.why + n, sizeof(r->st.why) - n,
			 ", the trailer's: its payload is sound and was read");
	r->st.end_mono_ns = end;
	check_count(r, written, at);
	r->seen_end = 1;
	return 1;
}

/*
 * A block header that fails its check hides the block's length, but not
 * where the next block starts: search on for the next sound header (its
 * magic, its own CRC, a length that fits the limits and its count) and read
 * on from there. One flipped bit then costs the records of its own block, as
 * a bad payload does, instead of every later one. How many records the
 * skipped bytes held is known at the trailer, which counts the records
 * written (ntp_reader_next_block's NTP_BLOCK_END); without a trailer it is
 * estimated from the bytes. A false header inside the skipped bytes would
 * need the magic and a matching CRC32C of its 20 bytes: one chance in 2^32
 * per magic-like 4 bytes. Returns 1 at a sound header, 0 at the end.
 */
static int resync(struct ntp_reader *r, uint64_t at)
{
	static const uint8_t magic[4] = { 'P', 'B', 'L', 'K' };	/* NTP_BLOCK_MAGIC, LE */

	int named = !r->st.why[0];

	r->st.corrupt = 1;
	r->st.damaged_blocks++;
	if (named)
		snprintf(r->st.why, sizeof(r->st.why), "bad block header at offset %llu",
			 (unsigned long long)at);
	if (trailer_past_bad_header(r, at, named))
		return 0;
	consume(r, 1);
	r->lost_bytes++;
	for (;;) {
		size_t have = fill(r, NTP_BLOCK_HDR_LEN), skip, i = 0;
		const uint8_t *p = r->data + r->start;

		if (have < NTP_BLOCK_HDR_LEN) {
			/* no sound header to the end: the rest is lost too */
			consume(r, have);
			r->lost_bytes += have;
			return 0;
		}
		for (;;) {
			const uint8_t *hit = memmem(p + i, have - i, magic, sizeof(magic));
			size_t pos;

			if (!hit) {
				skip = have - (sizeof(magic) - 1);	/* a magic may straddle */
				break;
			}
			pos = (size_t)(hit - p);
			if (pos + NTP_BLOCK_HDR_LEN > have) {
				skip = pos;		/* the candidate at the start of the next fill */
				break;
			}
			if (!block_header_ok(r, hit)) {
				consume(r, pos);
				r->lost_bytes += pos;
				return 1;
			}
			i = pos + 1;
		}
		consume(r, skip);
		r->lost_bytes += skip;
	}
}

/* The trailer's count of records written against those read and dropped:
 * records lost where a block header was damaged (resync) are counted here,
 * and a file missing whole blocks is found out. */
static void check_count(struct ntp_reader *r, uint64_t written, uint64_t at)
{
	uint64_t known = r->st.records + r->st.dropped;

	r->lost_bytes = 0;	/* accounted for: no estimate at the end */
	if (written <= known)
		return;
	r->st.dropped += written - known;
	r->st.corrupt = 1;
	if (!r->st.why[0])
		snprintf(r->st.why, sizeof(r->st.why),
			 "the trailer at offset %llu counts %llu records, %llu were found",
			 (unsigned long long)at, (unsigned long long)written, (unsigned long long)known);
}

static int take_totals(struct ntp_reader *r, const uint8_t *p, uint32_t len, uint32_t count,
		       size_t headlen, uint32_t esize, uint64_t as_of)
{
	/* rows of any minor: 1.0's end at the counts, a newer one may be longer */
	size_t take = esize < sizeof(struct ntp_total) ? esize : sizeof(struct ntp_total);

	if (esize < NTP_TOTAL_V10_SIZE || (uint64_t)count * esize + headlen != len)
		return -1;
	if (count > r->totals_cap) {
		struct ntp_total *nt = realloc(r->totals, count * sizeof(*nt));

		if (!nt)
			return -1;
		r->totals = nt;
		r->totals_cap = count;
	}
	for (uint32_t i = 0; i < count; i++) {
		memset(&r->totals[i], 0, sizeof(struct ntp_total));
		memcpy(&r->totals[i], p + headlen + (size_t)i * esize, take);
		r->totals[i].key.dev[NTP_DEV_LEN - 1] = '\0';
	}
	r->ntotals = count;
	r->totals_as_of = as_of;
	r->totals_gen++;
	if (as_of > r->st.end_mono_ns)
		r->st.end_mono_ns = as_of;
	return 0;
}

int ntp_reader_next_block(struct ntp_reader *r, const struct ntp_record **recs, size_t *n)
{
	if (r->ahead)
		return ntp_ahead_block(r->ahead, recs, n);
	return ntp_reader_block_direct(r, recs, n);
}

/* Whether a records block's payload at p is handed out where it lies. */
static int in_place(const struct ntp_reader *r, const uint8_t *p)
{
	return r->info.record_size == sizeof(struct ntp_record) && !((uintptr_t)p & 7);
}

/* A block payload's CRC: one read() has just copied it into this
 * thread's buffer, in its core's cache, where the folding beside the
 * crc32 streams is faster (crc32c.c); a window's bytes come from memory. */
static uint32_t block_crc(const struct ntp_reader *r, const uint8_t *p, size_t len)
{
	return r->mapped || r->fd < 0 ? ntp_crc32c(0, p, len) : ntp_crc32c_cached(0, p, len);
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Following (ntp_reader_follow): the reader is at the end of the whole
 * blocks the file holds and has not seen its trailer. 1: the writer may
 * still add to it (it grew less than the idle time ago; before the first
 * wait its mtime says when), so the caller waits: the bytes of a block
 * being written are let go, read again whole at the next call (a block the
 * writer took back on a full disk is written again in smaller ones, ntpfile.h).
 * 0: it stopped growing, the file ends here as without following.
 */
static int tail_wait(struct ntp_reader *r)
{
	uint64_t now, size;
	struct stat sb;

	if (!r->follow_idle || r->seen_end || fstat(r->fd, &sb))
		return 0;
	now = clock_ns(CLOCK_MONOTONIC);
	size = (uint64_t)sb.st_size;
	if (size < r->off)
		return 0;	/* shorter than what was read: written anew, not grown */
	if (!r->follow_seen) {
		uint64_t real = clock_ns(CLOCK_REALTIME);
		uint64_t mt = (uint64_t)sb.st_mtim.tv_sec * 1000000000ull + (uint64_t)sb.st_mtim.tv_nsec;
		uint64_t age = real > mt ? real - mt : 0;	/* a clock ahead of ours: now */

		r->follow_seen = 1;
		r->follow_size = size;
		r->follow_grew = age < now ? now - age : 0;
	} else if (size != r->follow_size) {
		r->follow_size = size;
		r->follow_grew = now;
	}
	if (now - r->follow_grew >= r->follow_idle)
		return 0;
	r->eof = 0;
	r->end = r->start;
	if (!r->mapped)
		lseek(r->fd, (off_t)r->off, SEEK_SET);
	r->waiting = 1;
	return 1;
}

int ntp_reader_block_direct(struct ntp_reader *r, const struct ntp_record **recs, size_t *n)
{
	r->waiting = 0;
	while (!r->done) {
		size_t have = fill(r, NTP_BLOCK_HDR_LEN);
		const uint8_t *h = r->data + r->start, *p;
		uint64_t at = r->off;
		uint32_t len, count;
		uint16_t type;

		if (have < NTP_BLOCK_HDR_LEN && tail_wait(r))
			return -EAGAIN;
		if (have == 0) {
			if (!r->seen_end)
				stop(r, 0, "ends without a trailer after %llu bytes (the writer did not finish)",
				     (unsigned long long)at);
			r->done = 1;
			break;
		}
		if (r->seen_end) {
			/* bytes after the trailer: ignored, the trailer says the file is whole */
			r->done = 1;
			break;
		}
		if (have < NTP_BLOCK_HDR_LEN) {
			stop(r, 0, "cut inside a block header at offset %llu", (unsigned long long)at);
			break;
		}
		if (block_header_ok(r, h)) {
			resync(r, at);
			continue;	/* at a sound header, or at the end */
		}
		type = get16(h + B_TYPE);
		len = get32(h + B_LEN);
		count = get32(h + B_COUNT);
		have = fill(r, NTP_BLOCK_HDR_LEN + (size_t)len);
		h = r->data + r->start;
		if (have < NTP_BLOCK_HDR_LEN + (size_t)len && tail_wait(r))
			return -EAGAIN;
		if (have < NTP_BLOCK_HDR_LEN + (size_t)len) {
			if (type == NTP_BLOCK_RECORDS_T)
				r->st.dropped += count;
			stop(r, 0, "cut inside a block at offset %llu", (unsigned long long)at);
			break;
		}
		p = h + NTP_BLOCK_HDR_LEN;
		r->rest_due = 0;
		if (r->crc_split < 16 && type == NTP_BLOCK_RECORDS_T && count && in_place(r, p)) {
			/* read-ahead: the caller checks the rest (ntpfile_ahead.c) */
			uint32_t from = (uint32_t)((uint64_t)len * r->crc_split / 16) & ~7u;

			r->rest = (struct ntp_crc_rest){ .crc = block_crc(r, p, from), .want = get32(h + B_PCRC),
							 .from = from, .len = len, .count = count, .at = at };
			r->rest_due = 1;
		} else if (get32(h + B_PCRC) != block_crc(r, p, len)) {
			if (type == NTP_BLOCK_RECORDS_T)
				r->st.dropped += count;
			consume(r, NTP_BLOCK_HDR_LEN + (size_t)len);
			damaged(r, at);
			continue;
		}
		consume(r, NTP_BLOCK_HDR_LEN + (size_t)len);
		switch (type) {
		case NTP_BLOCK_RECORDS_T:
			if (!count)
				continue;
			r->st.records += count;
			if (in_place(r, p)) {
				*recs = (const struct ntp_record *)p;
			} else {
				if (count > r->scratch_cap) {
					struct ntp_record *ns = realloc(r->scratch, count * sizeof(*ns));

					if (!ns) {
						stop(r, 0, "out of memory");
						return 0;
					}
					r->scratch = ns;
					r->scratch_cap = count;
				}
				for (uint32_t i = 0; i < count; i++)
					memcpy(&r->scratch[i], p + (size_t)i * r->info.record_size,
					       sizeof(struct ntp_record));
				*recs = r->scratch;
			}
			*n = count;
			return 1;
		case NTP_BLOCK_TOTALS:
			if (len < TOTALS_HDR ||
			    take_totals(r, p, len, count, TOTALS_HDR, get32(p + 8), get64(p))) {
				stop(r, 1, "bad totals block at offset %llu", (unsigned long long)at);
				return 0;
			}
			break;
		case NTP_BLOCK_END:
			if (len < END_HDR ||
			    take_totals(r, p, len, count, END_HDR, get32(p + 16), get64(p))) {
				stop(r, 1, "bad trailer at offset %llu", (unsigned long long)at);
				return 0;
			}
			r->st.end_mono_ns = get64(p);
			check_count(r, get64(p + 8), at);
			r->seen_end = 1;
			break;
		case NTP_BLOCK_LOST:
			/* cumulative: the latest replaces the ones before */
			if (len < NTP_LOST_HDR) {
				stop(r, 1, "bad lost block at offset %llu", (unsigned long long)at);
				return 0;
			}
			r->st.lost_before = get64(p + 8);
			break;
		default:
			r->st.skipped_blocks++;	/* a newer minor version's block: skip it */
			break;
		}
	}
	return 0;
}

/* A mapped reader that has handed out no block to read() from here on:
 * the header's window goes, the bytes after it are read again. */
static int window_to_read(struct ntp_reader *r, size_t cap)
{
	unmap_window(r);
	return to_read(r, cap);
}

int ntp_reader_read_ahead(struct ntp_reader *r)
{
	if (r->ahead)
		return 0;
	if (r->fd < 0 || r->st.records || r->cur_n || r->done || r->follow_idle)
		return 1;	/* memory needs no reading; a block already handed out; following */
	/*
	 * The thread reads with read(), not through windows: the faults of
	 * the windows' pages would be taken by whichever thread touches a
	 * page first, the parser too, where read()'s copy stays in the
	 * reading thread (docs/performance.md).
	 */
	if (r->mapped && !r->ahead_map && window_to_read(r, AHEAD_BUF))
		return 1;
	r->ahead = ntp_ahead_new(r);
	if (r->ahead)
		ntp_reader_split_crc(r, ntp_ahead_crc_split());
	if (r->ahead && (r->ahead_fail || ntp_ahead_start(r->ahead))) {
		ntp_ahead_free(r->ahead);
		r->ahead = NULL;
		/* no caller will finish a split CRC: every block checked whole */
		ntp_reader_split_crc(r, 16);
		/* read in this thread: a block's buffer, not read-ahead's
		 * (nothing read into it yet) */
		if (!r->mapped && r->buf && !r->window && r->start == r->end && r->cap > READ_BUF) {
			uint8_t *nb = malloc(READ_BUF);

			if (nb) {
				buf_free(r);
				r->buf = nb;
				r->data = nb;
				r->cap = READ_BUF;
			}
		}
	}
	return r->ahead ? 0 : 1;
}

/*
 * A file read at full speed in the caller's thread, one of few: read()
 * into a buffer that stays in the core's cache, where the CRC and the
 * records find it, costs less than the faults of a window's pages and the
 * CRC's first touch of them (docs/performance.md). Many files are
 * mapped: their buffers would hold a block each and more.
 */
int ntp_reader_read_alone(struct ntp_reader *r)
{
	if (!r->mapped || r->ahead_map || r->ahead)
		return 0;
	if (r->fd < 0 || r->st.records || r->cur_n || r->done)
		return 1;	/* a block already handed out: mapped on */
	return window_to_read(r, READ_BUF) ? 1 : 0;
}

int ntp_reader_map_while_cheap(struct ntp_reader *r)
{
	if (!r->mapped || r->ahead_map || r->ahead)
		return 0;
	if (r->st.records || r->cur_n || r->done)
		return 1;	/* a block already handed out: mapped on */
	r->map_cheap = 1;
	r->backoff = cheap_backoff(r);
	return 0;
}

/*
 * One thread: a few files each mapped where its windows fault seldom,
 * else read with read() (ntp_reader_map_while_cheap, window_dear), where
 * the CRC reads a block from the cache the copy left it in. Many files
 * with read() from the start (ntp_reader_read_alone): a block of each is
 * held while the merge takes its records (a buffer of one block each),
 * and small files seldom hold a 2 MiB folio. Either way a file's read()
 * buffer is one of the arena's (struct ntp_buf_arena); r[most], the
 * caller's pick (a report's lone target of many hosts, about half of all
 * records), is read ahead by a thread where two CPUs can run
 * (docs/performance.md). A short file is read in this thread either way.
 */
void ntp_readers_full_speed(struct ntp_reader *const *r, size_t n, size_t most)
{
	int ahead = ntp_read_ahead_wanted(n), tried = 0;
	struct ntp_buf_arena *a = NULL;

	for (size_t i = 0; i < n; i++) {
		/* a file shorter than NTP_AHEAD_MIN_BYTES is read in this thread
		 * whatever the CPUs: the thread's start costs more than it saves
		 * (a pipe's length is not known: read ahead) */
		int long_file = r[i]->stream || r[i]->size >= NTP_AHEAD_MIN_BYTES;

		if (ahead && long_file) {
			ntp_reader_read_ahead(r[i]);
			continue;
		}
		if (i == most && n > NTP_AHEAD_FILES && long_file && ntp_read_ahead_wanted(1) &&
		    !ntp_reader_read_ahead(r[i]))
			continue;
		/* each file read with read() here takes buffer i of the arena */
		if (!tried++)
			a = ntp_buf_arena_new(n, 0);
		if (a && !r[i]->arena && !r[i]->buf) {
			r[i]->arena = a;
			r[i]->arena_buf = arena_buf(a, i);
			a->users++;
		}
		if (n <= NTP_AHEAD_FILES)
			ntp_reader_map_while_cheap(r[i]);
		else
			ntp_reader_read_alone(r[i]);
	}
	ntp_buf_arena_put(a);	/* freed here if no reader took a buffer */
}

int ntp_reader_next(struct ntp_reader *r, struct ntp_record *out)
{
	if (r->cur_i == r->cur_n) {
		int ret;

		r->cur_i = r->cur_n = 0;
		ret = ntp_reader_next_block(r, &r->cur, &r->cur_n);
		if (ret != 1)
			return ret;	/* 0, or -EAGAIN (following) */
	}
	memcpy(out, &r->cur[r->cur_i++], sizeof(*out));
	return 1;
}

void ntp_reader_close(struct ntp_reader *r)
{
	if (!r)
		return;
	ntp_ahead_free(r->ahead);	/* the thread stops before its window goes */
	r->ahead = NULL;
	ntp_reader_reap(r, UINT64_MAX);
	unmap_window(r);
	map_slot_free(r->map_slot);
	if (r->mapped)
		__atomic_sub_fetch(&map_readers, 1, __ATOMIC_RELAXED);
	if (r->fd >= 0)
		close(r->fd);
	buf_free(r);
	ntp_buf_arena_put(r->arena);
	while (r->nspare)
		buf_drop(r->spare[--r->nspare], r->spare_cap);
	free(r->scratch);
	free(r->totals);
	free(r->path);
	free(r);
}
