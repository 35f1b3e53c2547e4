/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ntprof_common.bpf.h - maps, knobs and helpers shared by the host and target
 * hooks of ntprof.bpf.c and ntprof_rdma.bpf.c.
 *
 * Both files include this one, and bpftool gen object links them into one
 * object (mk/bpf.mk). The maps and globals below (NTP_SHARED) are defined
 * in ntprof.bpf.c, which defines NTP_BPF_DEFINE_SHARED first, and declared
 * extern in the other file: one map, one variable once linked.
 */
#ifndef NTP_COMMON_BPF_H
#define NTP_COMMON_BPF_H

#ifdef NTP_BPF_DEFINE_SHARED
#define NTP_SHARED
#define NTP_INIT(...) = __VA_ARGS__
#else
#define NTP_SHARED extern
#define NTP_INIT(...)
#endif

#define NTP_MAX_SIZES_BPF 16
/* data_ready events remembered per host socket or target queue. A command older than the ring
 * gets the oldest remembered time, too late: its wait in the socket is cut
 * short and the rest lands on the wire. While a target's worker is blocked
 * (docs/backpressure.md) every command of the queue depth waits in its
 * socket, one data_ready each: the ring must hold a deep queue's worth. */
#define NTP_ARRIVALS 64

/* ---- set before load (const volatile: the verifier prunes what they disable) ---- */
NTP_SHARED const volatile int filter_io NTP_INIT(-1);		/* -1 all, else enum ntp_io_type */
NTP_SHARED const volatile __u32 filter_n_sizes NTP_INIT(0);
NTP_SHARED const volatile __u32 filter_sizes[NTP_MAX_SIZES_BPF] NTP_INIT({});
/* --session: the disk names its commands run on (the namespace's head and,
 * with native multipath, its hidden paths nvmeXcYnZ), resolved in user space;
 * filter_n_devs == 0: all. Compared as 8-byte words, without a byte loop. */
#define NTP_MAX_DEVS 8
NTP_SHARED const volatile __u32 filter_n_devs NTP_INIT(0);
NTP_SHARED const volatile __u64 filter_devs[NTP_MAX_DEVS][NTP_DEV_LEN / 8] NTP_INIT({});
/* The target side of a session: the backing device of the namespace the
 * host's --session maps to (or --target-session), as target_dev() names it;
 * resolved in user space (src/collector/session.c). Off: every namespace. */
NTP_SHARED const volatile bool filter_has_tdev NTP_INIT(false);
NTP_SHARED const volatile __u64 filter_tdev[NTP_DEV_LEN / 8] NTP_INIT({});
/* --exact-queues: track every command, not only the sampled ones, and sum
 * its stage times into group_occ when it leaves its side. Unsampled commands
 * never reach the ring buffer. Off: the verifier prunes all of it. */
NTP_SHARED const volatile bool exact_queues NTP_INIT(false);
/* -t: the transport whose hooks are loaded (enum ntp_transport); the shared
 * tracepoint hooks stamp it on the record and pick the transport's context. */
NTP_SHARED const volatile __u8 ntp_transport NTP_INIT(NTP_TRANSPORT_TCP);
/* The kernel takes atomic_fetch_add (BPF_FETCH, 5.12); user space probes it.
 * Without it (5.10) the verifier rejects the instruction, and only pruning by
 * this constant keeps it out of what the verifier visits. */
NTP_SHARED const volatile bool has_atomic_fetch NTP_INIT(true);
/* The address of nvme_tcp_data_ready (/proc/kallsyms), fentry flavour only,
 * 0: unknown. A socket whose sk_data_ready is it is a host queue's, its
 * nvme_tcp_queue in sk_user_data: the socket send hooks need no per-thread
 * context from nvme_tcp_try_send, whose hooks are then not loaded
 * (src/collector/hooks.c, ntp_hook_unneeded). */
NTP_SHARED const volatile __u64 host_sk_ready NTP_INIT(0);
/* The address of nvmet_tcp_data_ready, fentry flavour recording the NVMe/TCP
 * target only, 0: unknown. A target queue's socket has it in sk_data_ready
 * and its nvmet_tcp_queue in sk_user_data; a command's queue is
 * container_of(req, struct nvmet_tcp_cmd, req)->queue: the target's hooks
 * then need no per-thread context from nvmet_tcp_io_work, whose hooks are
 * not loaded (src/collector/hooks.c, ntp_hook_unneeded). */
NTP_SHARED const volatile __u64 tgt_sk_ready NTP_INIT(0);

/* ---- live knobs (.bss, mmapped: user space writes them while running) ---- */
NTP_SHARED volatile __u32 sampling_n NTP_INIT(1000);		/* -s N; ntprof-top's `s` key */
NTP_SHARED volatile __u64 seq_host NTP_INIT(0);
NTP_SHARED volatile __u64 seq_target NTP_INIT(0);

/* The next per-side sequence number. Before 5.12 the add cannot return the
 * old value: add (a plain XADD), then read, so two CPUs that sample in the
 * same instant may read the same number (seq only orders records for people;
 * nothing joins or counts by it). */
static __always_inline __u64 next_seq(volatile __u64 *ctr)
{
	if (has_atomic_fetch)
		return __sync_fetch_and_add(ctr, 1);
	/* the barrier keeps clang from merging the two adds into one fetching add */
	asm volatile("" ::: "memory");
	__sync_fetch_and_add(ctr, 1);
	return *ctr - 1;
}

/* ---- output ---- */
NTP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} events SEC(".maps");
/* Bytes waiting in events past which emit wakes the reader at once: half
 * the ring. User space sets it with the ring's size (ring_size,
 * src/collector/collector.c), so a smaller ring still wakes it. */
NTP_SHARED const volatile __u64 ring_wake_bytes NTP_INIT(2 << 20);

/* Every command, sampled or not, per group: exact rates. Most groups count
 * in their slot of cpu_state; group_counts holds those whose slot another
 * group owns (count_group). */
NTP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct ntp_group_key);
	__type(value, struct ntp_group_count);
} group_counts SEC(".maps");

/* struct ntp_cpu_state (bpf/ntprof_event.h): the group slots and the
 * device-name caches of this CPU, one lookup (cpu_state_of) */
NTP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ntp_cpu_state);
} cpu_state SEC(".maps");

static __always_inline struct ntp_cpu_state *cpu_state_of(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&cpu_state, &zero);
}

/* --exact-queues: every command's stage times, per group (ntprof_occ.h). */
NTP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct ntp_group_key);
	__type(value, struct ntp_group_occ);
} group_occ SEC(".maps");

enum ntp_stat {
	NTP_STAT_LOST = 0,		/* ring buffer full: record dropped */
	NTP_STAT_MISSED_HOST,		/* closed when its request was reused */
	NTP_STAT_MISSED_TARGET,
	NTP_STAT_TABLE_FULL,		/* no room to track a sampled command */
	NTP_STAT_COUNT,
};

NTP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NTP_STAT_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* Sampled commands in flight, keyed by struct request * (host) and by
 * struct nvmet_req * (target): a table of fixed slots, two per set, the set
 * chosen by a multiplicative hash of the key. Every hook of every command
 * asks it whether its command is sampled: an array lookup the verifier
 * inlines (a few instructions, no helper call, no hashing of the key by the
 * kernel) where a hash map took a call, jhash and a bucket walk; and a
 * sampled command claims and frees a slot in place, instead of a hash map's
 * insert (a copy of the record) and delete. A command finds no slot when
 * both of its set hold commands in flight (counted as table full). */
#define NTP_CMD_SET_BITS 13
#define NTP_MAX_INFLIGHT (2 << NTP_CMD_SET_BITS)	/* slots per side */

struct ntp_cmd_slot {
	__u64 key;		/* 0: free */
	struct ntp_record r;
};

NTP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NTP_MAX_INFLIGHT);
	__type(key, __u32);
	__type(value, struct ntp_cmd_slot);
} host_cmds SEC(".maps");

NTP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NTP_MAX_INFLIGHT);
	__type(key, __u32);
	__type(value, struct ntp_cmd_slot);
} target_cmds SEC(".maps");

/* How many slots of each table hold a command (sampled, or any with
 * --exact-queues): counted in cmd_claim, freed in cmd_del. With none, no
 * hook of that side has anything to stamp: cmd_find returns at once, and
 * the hooks that exist only for sampled commands (the host's packet
 * arrivals and receive context, the socket sends' PDU reads) return
 * before any helper call (docs/performance.md, "What the unsampled path
 * does"). An unsampled command then costs its hash, its per-CPU counter
 * and the backpressure accounting, which is kept for every command. The
 * count must never read 0 while a slot is taken (its command would be
 * lost): the free is a compare-and-exchange of the slot's key, so two
 * frees of one key count once. Without BPF atomics (5.10,
 * has_atomic_fetch) that cannot be had: no gate, every hook looks. A
 * count too high (a command whose end was missed, until its request is
 * reused) only costs the lookups of before. */
NTP_SHARED volatile __u64 host_live NTP_INIT(0);
NTP_SHARED volatile __u64 target_live NTP_INIT(0);

/* The table's count. map is &host_cmds or &target_cmds, a constant in
 * every inlined caller: the compiler folds the choice. */
#define cmds_live(map) ((map) == (void *)&host_cmds ? &host_live : &target_live)

/* 0: nothing in map's table (only where the count is exact, see above). */
#define cmds_none(map) (has_atomic_fetch && !*cmds_live(map))

/* The low 32 bits of a key as a plain number. A key taken from a typed
 * argument (tp_btf, fentry) is a pointer to the verifier, which allows no
 * multiplication of one ("math between ptr_ pointer and ... is not
 * allowed"); a 32-bit move of it is a number to a privileged program (the
 * verifier's is_pointer_value is false with allow_ptr_leaks). Written in
 * assembly: clang would clear the high half with shifts, which the verifier
 * refuses on a pointer too. Only the set comes from it: a slot holds and
 * compares the whole key. */
static __always_inline __u64 key_lo32(__u64 key)
{
	register __u64 in asm("r1") = key;
	register __u64 out asm("r2");

	asm volatile("w2 = w1" : "=r"(out) : "r"(in));
	return out;
}

/* The index of x among 1 << bits: Fibonacci hashing, the top bits of x
 * times 2^64 / golden ratio. x is a number (key_lo32 of a pointer key). */
static __always_inline __u32 fib_index(__u64 x, int bits)
{
	return (__u32)((x * 0x9E3779B97F4A7C15ULL) >> (64 - bits));
}

/* The index of a pointer key (a queue, a request, a CQ) in a table of
 * 1 << bits slots or sets: the command tables below, send_stash
 * (ntprof.bpf.c) and rdma_cqs (ntprof_rdma_cq.bpf.h) share it. */
static __always_inline __u32 queue_slot(__u64 key, int bits)
{
	return fib_index(key_lo32(key), bits);
}

static __always_inline struct ntp_cmd_slot *cmd_slot(void *map, __u64 key, __u32 way)
{
	__u32 i = queue_slot(key, NTP_CMD_SET_BITS) * 2 + way;

	return bpf_map_lookup_elem(map, &i);
}

/* The slot of the sampled command key, NULL: not sampled (or not tracked). */
static __always_inline struct ntp_cmd_slot *cmd_find_slot(void *map, __u64 key)
{
	struct ntp_cmd_slot *s;

	if (cmds_none(map))
		return NULL;
	s = cmd_slot(map, key, 0);

	if (s && s->key == key)
		return s;
	s = cmd_slot(map, key, 1);
	if (s && s->key == key)
		return s;
	return NULL;
}

/* The record of the sampled command key, NULL: not sampled (or not tracked). */
static __always_inline struct ntp_record *cmd_find(void *map, __u64 key)
{
	struct ntp_cmd_slot *s = cmd_find_slot(map, key);

	return s ? &s->r : NULL;
}

/* The command of slot s (found for key: cmd_find_slot) leaves the table. */
static __always_inline void cmd_free(void *map, struct ntp_cmd_slot *s, __u64 key)
{
	if (!has_atomic_fetch) {
		/* only if still key's: between cmd_find_slot and here another
		 * CPU may have freed the slot and another command claimed it */
		if (s->key == key)
			s->key = 0;
		return;
	}
	/* counted once even if two CPUs free the same key (cmds_live) */
	if (__sync_val_compare_and_swap(&s->key, key, 0) == key)
		__sync_fetch_and_add(cmds_live(map), -1);
}

/* The command leaves the table (after close_missed, the same key is free). */
static __always_inline void cmd_del(void *map, __u64 key)
{
	struct ntp_cmd_slot *s = cmd_find_slot(map, key);

	if (s)
		cmd_free(map, s, key);
}

/* The same for the record r that cmd_find returned for key, without
 * searching the table again: its slot holds it. */
static __always_inline void cmd_del_rec(void *map, __u64 key, struct ntp_record *r)
{
	cmd_free(map, (struct ntp_cmd_slot *)((void *)r - __builtin_offsetof(struct ntp_cmd_slot, r)), key);
}

/* Take a free slot of the set for key: atomically where the kernel has
 * compare-and-exchange (BPF atomics, 5.12, as has_atomic_fetch), so two CPUs
 * that sample in the same instant cannot fill the same slot; before it, a
 * plain store (two sampled commands of one set within the same few
 * instructions on two CPUs: a mixed record, not a fault). */
static __always_inline int cmd_take(struct ntp_cmd_slot *s, __u64 key)
{
	if (!s || s->key)
		return 0;
	if (!has_atomic_fetch) {
		s->key = key;
		return 1;
	}
	if (__sync_val_compare_and_swap(&s->key, 0, key))
		return 0;
	return 1;
}

/* A zeroed record in the table for key (no command of that key may be in it:
 * close_missed first), NULL when its set is full. Claimed before it is
 * filled: no hook of the command runs before the one that claims it. */
static __always_inline struct ntp_record *cmd_claim(void *map, __u64 key)
{
	struct ntp_cmd_slot *s = cmd_slot(map, key, 0);

	if (!cmd_take(s, key)) {
		s = cmd_slot(map, key, 1);
		if (!cmd_take(s, key))
			return NULL;
	}
	if (has_atomic_fetch)
		__sync_fetch_and_add(cmds_live(map), 1);
	__builtin_memset(&s->r, 0, sizeof(s->r));
	return &s->r;
}

/*
 * Per-thread context: which NVMe/TCP queue the current thread is sending on
 * (host: inside nvme_tcp_try_send; target: inside nvmet_tcp_io_work), and the
 * arrival time of the data the host's receive callback is parsing. Keyed by
 * thread id, not CPU: the send path can sleep on the socket lock and migrate.
 */
struct ntp_thread_ctx {
	__u64 queue;		/* struct nvme_tcp_queue * or struct nvmet_tcp_queue * */
	__u64 arrival_ns;	/* host receive: arrival of the chunk being parsed */
	__u64 send_ns;		/* entry of the socket send in progress */
	__u64 bp_key;		/* target RDMA: the CQ (struct ib_cq *) being polled */
	__u8 side;		/* enum ntp_side of queue */
	__u8 bp_slept;		/* target: the storage submission in progress slept */
	__u32 arrival_seq;	/* host receive: last byte of the chunk being parsed... */
	__u64 arrival_sk;	/* ...on this socket; its arrival is looked up only for a sampled command */
	__u64 bp_sub;		/* target: the queue whose storage submission this thread is in, 0: none */
	__u64 stash_q;		/* kprobe flavour: the queue of the socket send in progress, 0: none */
	__u64 stash_sp;		/* ...its entry's stack pointer (its kretprobe's, give or take the return address) */
	__u8 stash_side;	/* ...enum ntp_side */
};

/* LRU: an entry per thread that ever sent or received on an NVMe/TCP queue
 * stays (cleared, not deleted: an in-place write is cheaper than the delete
 * and re-insert of every call); threads that come and go age out. */
NTP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct ntp_thread_ctx);
} send_ctx SEC(".maps");

NTP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct ntp_thread_ctx);
} recv_ctx SEC(".maps");

/*
 * Packet arrival, per host socket or target queue (arrival_note): each time the TCP stack queues data on an
 * NVMe/TCP socket it calls the driver's sk_data_ready callback
 * (nvme_tcp_data_ready / nvmet_tcp_data_ready) from the receive softirq. We
 * remember (rcv_nxt, time) for the last NTP_ARRIVALS calls; the arrival time of
 * byte S of the stream is the time of the oldest call whose rcv_nxt is past S.
 * The time is TCP's own clock of the segment, the socket's tcp_clock_cache:
 * tcp_rcv_established (tcp_rcv_state_process in other states) sets it from
 * ktime_get_ns, the clock bpf_ktime_get_ns reads too, when it begins the
 * segment, and a send TCP makes while processing it (tcp_write_xmit) may set
 * it again, under the same socket lock: an instant of the segment's receive
 * processing, before the driver's work item runs, with no clock read of ours
 * on every packet. A kernel without the field (bpf_core_field_exists), or a
 * socket whose clock is still 0, takes bpf_ktime_get_ns at the call. Socket
 * timestamps were not used: skb->tstamp is only set when something enabled
 * SO_TIMESTAMP.
 */
struct ntp_arrivals {
	__u64 sk;		/* target: the queue's socket (the entry is keyed by the queue) */
	__u32 seq[NTP_ARRIVALS];
	__u64 ts[NTP_ARRIVALS];
	__u64 bp[NTP_ARRIVALS];	/* target: the queue's blocked-time reading (ntp_bp_read) then */
	__u32 head;
};

NTP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, struct ntp_arrivals);
} arrivals SEC(".maps");

static const struct ntp_arrivals arrivals_zero = {};

/* The arrivals of most sockets and queues, without arrivals' lookup: a
 * slot per key, chosen by the multiplicative hash of the key
 * (queue_slot), which the key owns from its first arrival on: an array
 * lookup the verifier inlines (no helper call, no jhash, no bucket walk,
 * no LRU list) at every packet and at each sampled command's look-up of
 * its arrival. A key takes a free slot with a compare-and-exchange of its
 * value and keeps it (nothing tells when a socket or a queue is gone; a
 * reused address goes on in its slot: the arrivals are ordered by their
 * signed 32-bit sequence distance and a command takes none from before its
 * submission, arrival_note); a key whose slot
 * another owns, and every key where the kernel has no BPF atomics
 * (has_atomic_fetch), keep their arrivals in the LRU map as before. A key
 * that does not own its slot never will: writer and reader always look in
 * the same place. */
#define NTP_ARRIVAL_SLOT_BITS 10

struct ntp_arrival_slot {
	__u64 key;		/* the owner, 0: free; 64 bits: drop_atomic_fetch (src/collector/collector.c) */
	struct ntp_arrivals a;
};

/* Whether the slot whose owner is *owner is key's: it is when it holds
 * key, or (take) when it is free (0) and key takes it with a compare-and-
 * exchange (arrival_slot, bp_thr; rx_slot and send_stash in ntprof.bpf.c). */
static __always_inline bool slot_owned(__u64 *owner, __u64 key, bool take)
{
	if (*owner == key)
		return true;
	return take && !*owner && !__sync_val_compare_and_swap(owner, 0, key);
}

NTP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << NTP_ARRIVAL_SLOT_BITS);
	__type(key, __u32);
	__type(value, struct ntp_arrival_slot);
} arrival_slot SEC(".maps");

/* key's arrivals in its slot if it owns it; take: take the slot when free. */
static __always_inline struct ntp_arrivals *arrival_slot_of(__u64 key, bool take)
{
	__u32 i = queue_slot(key, NTP_ARRIVAL_SLOT_BITS);
	struct ntp_arrival_slot *s;

	if (!has_atomic_fetch || !key)
		return NULL;
	s = bpf_map_lookup_elem(&arrival_slot, &i);
	return s && slot_owned(&s->key, key, take) ? &s->a : NULL;
}

/* ---- helpers ---- */

/* A field read: a plain load through the BTF pointer a tp_btf or fentry
 * program has (the verifier makes it a load that cannot fault: no helper
 * call), else bpf_probe_read_kernel (raw_tp, kprobe: no typed pointers).
 * btf is a constant of the inlined caller, so only one branch is compiled
 * into each program. */
#define NTP_RD(btf, p, f) ((btf) ? (p)->f : BPF_CORE_READ(p, f))
#define NTP_RD2(btf, p, f, g) ((btf) ? (p)->f->g : BPF_CORE_READ(p, f, g))

static __always_inline void stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		*v += 1;
}

static __always_inline __u32 tid(void)
{
	return (__u32)bpf_get_current_pid_tgid();
}

static __always_inline void set_ts(struct ntp_record *r, int slot, __u64 t)
{
	if (slot < 0 || slot >= NTP_TS_SLOTS)
		return;
	r->ts[slot] = t;
	r->ts_valid |= 1u << slot;
}

/* First time wins: a phase that takes several calls keeps its first one. */
static __always_inline void set_ts_once(struct ntp_record *r, int slot, __u64 t)
{
	if (slot < 0 || slot >= NTP_TS_SLOTS)
		return;
	if (!(r->ts_valid & (1u << slot)))
		set_ts(r, slot, t);
}

static __always_inline int has_ts(const struct ntp_record *r, int slot)
{
	return (r->ts_valid >> slot) & 1;
}

static __always_inline int io_of(__u8 opcode)
{
	if (opcode == 0x02)
		return NTP_IO_READ;
	if (opcode == 0x01)
		return NTP_IO_WRITE;
	return NTP_IO_OTHER;
}

static __always_inline int io_wanted(int io)
{
	if (io == NTP_IO_OTHER)
		return 0;
	return filter_io < 0 || filter_io == io;
}

static __always_inline int size_wanted(__u32 len)
{
	if (!filter_n_sizes)
		return 1;
	for (int i = 0; i < NTP_MAX_SIZES_BPF; i++) {
		if (i >= filter_n_sizes)
			break;
		if (filter_sizes[i] == len)
			return 1;
	}
	return 0;
}

static __always_inline int dev_wanted(const char *dev)
{
	const __u64 *d = (const __u64 *)dev;

	if (!filter_n_devs)
		return 1;
	for (__u32 i = 0; i < NTP_MAX_DEVS; i++) {
		if (i >= filter_n_devs)
			break;
		if (d[0] == filter_devs[i][0] && d[1] == filter_devs[i][1] &&
		    d[2] == filter_devs[i][2] && d[3] == filter_devs[i][3])
			return 1;
	}
	return 0;
}

static __always_inline int tdev_wanted(const char *dev)
{
	const __u64 *d = (const __u64 *)dev;

	if (!filter_has_tdev)
		return 1;
	return d[0] == filter_tdev[0] && d[1] == filter_tdev[1] && d[2] == filter_tdev[2] &&
	       d[3] == filter_tdev[3];
}

/*
 * The group's counters in its slot of this CPU's state cs (cpu_state_of),
 * NULL: the slot is another group's (or being claimed), or the kernel has
 * no BPF atomics (has_atomic_fetch). Every command of every group is counted, so
 * the per-CPU hash's lookup (a helper call hashing the 40-byte key with
 * jhash, a bucket walk and a byte-wise compare of the key in the kernel)
 * was the unsampled path's largest cost (docs/performance.md, "What the
 * unsampled path does"); here a multiplicative hash of the key's five
 * words picks the slot, and five compares confirm it. A slot is claimed
 * once, with a compare-and-exchange from FREE: another program on this
 * CPU that runs in between (an interrupt, a softirq) finds it CLAIMING and
 * counts in the hash, so a key is never half written where it counts; the
 * claim's end is a compare-and-exchange too, which orders the key's stores
 * before OWNED for user space's reads on every CPU. A slot is never freed:
 * a recorder sees a few dozen groups, and one that finds its slot taken
 * counts in group_counts, always there, on that CPU.
 */
static __always_inline struct ntp_group_count *group_slot_of(const struct ntp_group_key *k,
							      struct ntp_cpu_state *cs)
{
	const __u64 *w = (const __u64 *)k, *o;
	struct ntp_group_slot *s;
	__u64 x = w[0], state;
	__u32 i;

	if (!has_atomic_fetch)
		return NULL;
	x = (x ^ w[1]) * 0x9E3779B97F4A7C15ULL;
	x = (x ^ w[2]) * 0x9E3779B97F4A7C15ULL;
	x = (x ^ w[3]) * 0x9E3779B97F4A7C15ULL;
	i = fib_index(x ^ w[4], NTP_GROUP_SLOT_BITS);
	s = &cs->slot[i & (NTP_GROUP_SLOTS - 1)];
	state = s->state;
	if (state == NTP_GROUP_SLOT_OWNED) {
		o = (const __u64 *)&s->key;
		if (o[0] == w[0] && o[1] == w[1] && o[2] == w[2] && o[3] == w[3] && o[4] == w[4])
			return &s->count;
		return NULL;
	}
	if (state != NTP_GROUP_SLOT_FREE ||
	    __sync_val_compare_and_swap(&s->state, NTP_GROUP_SLOT_FREE, NTP_GROUP_SLOT_CLAIMING) !=
		    NTP_GROUP_SLOT_FREE)
		return NULL;
	__builtin_memcpy(&s->key, k, sizeof(*k));
	__sync_val_compare_and_swap(&s->state, NTP_GROUP_SLOT_CLAIMING, NTP_GROUP_SLOT_OWNED);
	return &s->count;
}

/* cs: this CPU's state (cpu_state_of) */
static __always_inline void count_group(__u8 side, __u8 io, __u32 len, const char *dev,
					struct ntp_cpu_state *cs)
{
	struct ntp_group_key k = {};
	struct ntp_group_count zero = {}, *c;

	k.side = side;
	k.io = io;
	k.len = len;
	__builtin_memcpy(k.dev, dev, NTP_DEV_LEN);
	c = group_slot_of(&k, cs);
	if (c) {
		c->commands += 1;
		c->bytes += len;
		return;
	}
	c = bpf_map_lookup_elem(&group_counts, &k);
	if (!c) {
		bpf_map_update_elem(&group_counts, &k, &zero, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&group_counts, &k);
		if (!c)
			return;
	}
	c->commands += 1;
	c->bytes += len;
}

/* --exact-queues: the command leaves its side; add its stage times to its
 * group (per CPU: no lock, user space sums the CPUs). */
static __always_inline void occ_account(const struct ntp_record *r)
{
	struct ntp_group_key k = {};
	struct ntp_group_occ zero = {}, *o;

	k.side = r->side;
	k.io = io_of(r->opcode);
	k.len = r->len;
	__builtin_memcpy(k.dev, r->dev, NTP_DEV_LEN);
	o = bpf_map_lookup_elem(&group_occ, &k);
	if (!o) {
		bpf_map_update_elem(&group_occ, &k, &zero, BPF_NOEXIST);
		o = bpf_map_lookup_elem(&group_occ, &k);
		if (!o)
			return;
	}
	ntp_occ_add(o, r);
}

/* No wake-up per record: a wake-up is an irq_work (a self-IPI) and a
 * scheduler wake-up on the I/O path; user space polls every 100 ms anyway.
 * Only a ring filling up wakes the reader at once: asked every 32nd record
 * of a side (its seq), a helper call the other 31 do without on the
 * sampled path; half the default ring (ring_wake_bytes) is far more than the
 * 64 records of both sides between two questions; a ring made small
 * (NTPROF_RING_KIB) may fill before it is asked, its losses counted
 * (NTP_STAT_LOST). */
static __always_inline void emit(struct ntp_record *r)
{
	__u64 flags = BPF_RB_NO_WAKEUP;

	r->cpu = bpf_get_smp_processor_id();
	if (!(r->seq & 31) && bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) > ring_wake_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	if (bpf_ringbuf_output(&events, r, sizeof(*r), flags))
		stat_inc(NTP_STAT_LOST);
}

/* The previous sampled command on this request never showed its end (a
 * missed kprobe, an aborted command): close it, emit it, count it, so the next
 * command on the same request cannot write into it. */
static __always_inline void close_missed(void *map, __u64 key, __u32 stat)
{
	struct ntp_record *old = cmd_find(map, key);

	if (!old)
		return;
	old->flags |= NTP_REC_F_CLOSED_MISSED;
	if (old->side == NTP_SIDE_TARGET && !has_ts(old, NTP_TS_T_RSP_SENT) &&
	    has_ts(old, NTP_TS_T_STORAGE_DONE))
		old->flags |= NTP_REC_F_RSP_FALLBACK;
	/* --exact-queues: summed with the fallback, as the model does with a
	 * sampled one, or counted incomplete; an unsampled one is not emitted */
	if (exact_queues)
		occ_account(old);
	if (!(old->flags & NTP_REC_F_UNSAMPLED)) {
		emit(old);
		stat_inc(stat);
	}
	cmd_del_rec(map, key, old);
}

/* The command leaves its side: its record goes out if it was sampled. r is
 * cmd_find's record of key. */
static __always_inline void leave_side(void *map, __u64 key, struct ntp_record *r)
{
	if (exact_queues)
		occ_account(r);
	if (!(r->flags & NTP_REC_F_UNSAMPLED))
		emit(r);
	cmd_del_rec(map, key, r);
}

/* ---- packet arrival (see struct ntp_arrivals) ---- */

/* ---- storage backpressure (docs/backpressure.md) ----
 * Per target queue (TCP: its struct nvmet_tcp_queue; RDMA: its completion
 * queue), the
 * cumulative time its worker slept inside a storage submission
 * (nvmet_bdev_execute_rw, which sleeps in blk_mq_get_tag when the drive has
 * no free tag). A reading at t is total + (t - since) while asleep, so the
 * blocked time over any span of the queue is a difference of two readings. */
struct ntp_bp {
	__u64 total;		/* ns of finished sleeps */
	__u64 since;		/* start of the sleep in progress, 0: none */
};

NTP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, struct ntp_bp);
} bp_queues SEC(".maps");

/* Set at the first sleep of any queue's worker inside a submission, by
 * ntp_bp_enter before it adds the queue's entry (the only place entries
 * are added): until then no queue has an entry in bp_queues, and a
 * reading without one is 0. The same value, without the lookup: on a
 * target whose drive never ran out of tags, the per-packet, per-command
 * and per-CQ-event readings (docs/backpressure.md) cost a load each. */
NTP_SHARED volatile __u32 bp_ever NTP_INIT(0);

/* Set by user space once every program is attached (src/collector/
 * collector.c, try_flavour): the programs attach one by one, in parallel
 * threads, so an entry hook may run for a while before its exit hook
 * exists. A mark an entry leaves for its exit (a thread inside a
 * submission, inside a queue's io_work or RDMA receive callback, inside a
 * socket send) made in that window is never cleared, and a stale
 * "inside a submission" makes every later voluntary sleep of that worker
 * (its idle sleep between work items) a blocked span of its queue
 * (docs/backpressure.md, "Entries before their exits"). Until set, those
 * entries leave no mark. bp_armed: the submission's pair, set only when
 * both its entry and its exit are attached. */
NTP_SHARED volatile __u32 ntp_armed NTP_INIT(0);
NTP_SHARED volatile __u32 bp_armed NTP_INIT(0);

static __always_inline __u64 ntp_bp_read(__u64 key, __u64 now)
{
	struct ntp_bp *b;
	__u64 v;

	if (!bp_ever)
		return 0;
	b = bpf_map_lookup_elem(&bp_queues, &key);
	if (!b)
		return 0;
	v = b->total;
	if (b->since && b->since <= now)
		v += now - b->since;
	return v;
}

/* sched_switch's gate (docs/backpressure.md): per bucket of thread ids
 * (tid % NTP_BP_BUCKETS), how many of its threads may be inside a storage
 * submission. A switch of a thread whose bucket is 0 is no queue worker in a
 * submission: one load of a global array (a direct map value, no helper
 * call), a compare, and out; only the rest look their context up. Keyed by
 * thread, not CPU, so a worker that migrates keeps its count. Incremented
 * when a thread's context gets its submission (bp_sub goes from 0 to a
 * queue), decremented when the submission's exit clears it: a count never
 * falls below the number of its threads inside (a missed exit, a context
 * overwritten or evicted only leaves it too high, which costs a lookup). */
#define NTP_BP_BUCKETS 1024
NTP_SHARED volatile __u32 bp_busy[NTP_BP_BUCKETS];

/* One of these per-bucket counts (bp_busy, send_busy below): thread t's
 * bucket moves by d; or whether any thread of t's bucket may be inside. */
static __always_inline void bucket_add(volatile __u32 *counts, __u32 t, int d)
{
	__sync_fetch_and_add(&counts[t % NTP_BP_BUCKETS], d);
}

static __always_inline int bucket_maybe(volatile __u32 *counts, __u32 t)
{
	return counts[t % NTP_BP_BUCKETS] != 0;
}

static __always_inline void bp_busy_add(__u32 t, int d)
{
	bucket_add(bp_busy, t, d);
}

static __always_inline int bp_busy_maybe(__u32 t)
{
	return bucket_maybe(bp_busy, t);
}

/* The submission a thread is in, without a lookup of its context: per
 * bucket of thread ids (as bp_busy), the one thread of the bucket that is
 * inside a storage submission, its queue (the key of bp_queues) and whether
 * it slept. The submission's entry takes its bucket when it is free (a
 * compare-and-exchange of the thread id: two threads of one bucket cannot
 * both take it), its exit and sched_switch find it there with a load and a
 * compare; the exit frees it. A thread whose bucket another thread holds,
 * and every thread where the kernel has no BPF atomics (has_atomic_fetch),
 * keeps the submission in its context (bp_sub) as before. Only the owning
 * thread writes a taken bucket: sched_switch runs in the thread that
 * leaves its CPU. */
struct ntp_bp_thr {
	__u64 tid;		/* 0: free; 64 bits: drop_atomic_fetch (src/collector/collector.c) rewrites 64-bit atomics only */
	__u64 slept;		/* the submission slept (blocked from then on) */
	__u64 queue;
};

/* an array map: the verifier inlines its lookup (no helper call) */
NTP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NTP_BP_BUCKETS);
	__type(key, __u32);
	__type(value, struct ntp_bp_thr);
} bp_thr SEC(".maps");

/* Thread t's bucket if t holds it, else NULL. */
static __always_inline struct ntp_bp_thr *bp_thr_of(__u32 t)
{
	__u32 i = t % NTP_BP_BUCKETS;
	struct ntp_bp_thr *b;

	if (!has_atomic_fetch || !t)
		return NULL;
	b = bpf_map_lookup_elem(&bp_thr, &i);
	return b && b->tid == t ? b : NULL;
}

/* Thread t enters a submission of queue: 1 when its bucket holds it. */
static __always_inline int bp_thr_enter(__u32 t, __u64 queue)
{
	__u32 i = t % NTP_BP_BUCKETS;
	struct ntp_bp_thr *b;

	if (!has_atomic_fetch || !t)
		return 0;
	b = bpf_map_lookup_elem(&bp_thr, &i);
	if (!b)
		return 0;
	if (!slot_owned(&b->tid, t, true))
		return 0;
	b->queue = queue;
	b->slept = 0;
	return 1;
}

/* The owner frees its bucket. Only the thread id is cleared: the next owner
 * writes queue and slept after its compare-and-exchange, and a store of
 * ours to them could otherwise land after that (a weakly ordered CPU). */
static __always_inline void bp_thr_free(struct ntp_bp_thr *b)
{
	b->tid = 0;
}

/* A context hook of thread t began or ended (a queue worker's io_work, an
 * RDMA receive callback): no submission of t can be in progress; a bucket
 * t still holds is a submission whose exit was missed (a kretprobe
 * skipped), freed as the context's bp_sub is, lest the worker's next sleep
 * count as blocked. */
static __always_inline void bp_thr_drop(__u32 t)
{
	struct ntp_bp_thr *b = bp_thr_of(t);

	if (b)
		bp_thr_free(b);
}

/* The kretprobe of a socket send's gate (kprobe flavour, sock_stash in
 * bpf/ntprof.bpf.c): per bucket of thread ids, how many threads may be
 * inside an NVMe/TCP socket send, as bp_busy above. The kretprobe of every
 * other send of the machine costs a load and a compare. */
NTP_SHARED volatile __u32 send_busy[NTP_BP_BUCKETS];

static __always_inline void ntp_bp_enter(__u64 key, __u64 now)
{
	struct ntp_bp *b, zero = {};

	if (!bp_ever)
		bp_ever = 1;
	b = bpf_map_lookup_elem(&bp_queues, &key);
	if (!b) {
		bpf_map_update_elem(&bp_queues, &key, &zero, BPF_NOEXIST);
		b = bpf_map_lookup_elem(&bp_queues, &key);
		if (!b)
			return;
	}
	/* a missed end (a kprobe skipped) leaves since set: drop that span */
	b->since = now;
}

/* A submission of queue key begins: none of key's is in progress (one
 * worker per queue: nvmet-tcp's io_work, nvmet-rdma's CQ poll work, each
 * one work item that never runs twice at once), so a blocked span still
 * open is one whose submission's exit was missed (a kretprobe skipped):
 * dropped, not counted, lest it run on for the rest of the recording. */
static __always_inline void ntp_bp_begin(__u64 key)
{
	struct ntp_bp *b;

	if (!bp_ever)
		return;
	b = bpf_map_lookup_elem(&bp_queues, &key);
	if (b && b->since)
		b->since = 0;
}

static __always_inline void ntp_bp_exit(__u64 key, __u64 now)
{
	struct ntp_bp *b = bpf_map_lookup_elem(&bp_queues, &key);

	if (!b || !b->since)
		return;
	if (b->since <= now)
		b->total += now - b->since;
	b->since = 0;
}

/* bpq: a target socket's nvmet_tcp_queue (the key of bp_queues), 0: a host
 * socket. A host socket's arrivals are keyed by the socket; a target's by
 * its queue, with the socket noted in the entry and the queue's
 * blocked-time reading with each arrival: the target's hooks know the
 * queue (the command's, the socket's sk_user_data), and nvmet-tcp gives
 * each connection its own queue and socket for the queue's life
 * (nvmet_tcp_alloc_queue, nvmet_tcp_set_queue_sock), so the entry yields
 * the socket without the two reads of queue->sock->sk per command.
 * btf: an fentry program, whose sk is a typed pointer that
 * bpf_skc_to_tcp_sock turns into a struct tcp_sock (its fields then plain
 * loads, as NTP_RD's); a kprobe reads them with probe reads. */
static __always_inline void arrival_note(struct sock *sk, __u64 bpq, bool btf)
{
	struct tcp_sock *tp = btf ? bpf_skc_to_tcp_sock(sk) : (struct tcp_sock *)sk;
	__u64 key = bpq ? bpq : (__u64)sk, now = 0;
	struct ntp_arrivals *a;
	__u32 i, rcv_nxt;

	if (!tp)
		return;
	if (bpf_core_field_exists(tp->tcp_clock_cache))
		now = btf ? tp->tcp_clock_cache : BPF_CORE_READ(tp, tcp_clock_cache);
	if (!now)
		now = bpf_ktime_get_ns();
	rcv_nxt = btf ? tp->rcv_nxt : BPF_CORE_READ(tp, rcv_nxt);

	a = arrival_slot_of(key, true);
	if (!a)
		a = bpf_map_lookup_elem(&arrivals, &key);
	if (!a) {
		/* too big for the stack: a zeroed value from .rodata */
		bpf_map_update_elem(&arrivals, &key, (const void *)&arrivals_zero, BPF_NOEXIST);
		a = bpf_map_lookup_elem(&arrivals, &key);
		if (!a)
			return;
	}
	/* arrival_in bisects one increasing sequence space: start over when the
	 * entry outlived its stream. A target queue's address is likely reused
	 * by the next connection's queue after a disconnect (and a host
	 * socket's by the next socket), and the LRU entry survives it: a new
	 * socket, or an rcv_nxt behind the last one noted, begins a new stream
	 * (arrival_in only reads the head entries written since). */
	if (a->sk != (__u64)sk ||
	    (a->head && (__s32)(rcv_nxt - a->seq[(a->head - 1) % NTP_ARRIVALS]) < 0)) {
		a->head = 0;
		a->sk = (__u64)sk;
	}
	i = a->head % NTP_ARRIVALS;
	a->seq[i] = rcv_nxt;
	a->ts[i] = now;
	a->bp[i] = bpq ? ntp_bp_read(bpq, now) : 0;
	a->head += 1;
}

/* The arrivals of key (a host socket, a target queue: arrival_note), NULL:
 * none noted. */
static __always_inline struct ntp_arrivals *arrivals_of(__u64 key)
{
	struct ntp_arrivals *a = arrival_slot_of(key, false);

	return a ? a : bpf_map_lookup_elem(&arrivals, &key);
}

/* When did byte `seq` of the stream whose arrivals are a reach the stack?
 * 0: unknown. bp (may be NULL): the blocked-time reading noted with it.
 * The remembered rcv_nxt values only grow (oldest first), so "the oldest
 * data_ready past seq" is found by bisection: 7 steps instead of up to 64
 * under TCG, where every instruction of a sampled command's hooks shows in
 * its latency. */
static __always_inline __u64 arrival_in(struct ntp_arrivals *a, __u32 seq, __u64 *bp)
{
	__u32 head, n, lo = 0, hi, i;

	if (!a)
		return 0;
	head = a->head;
	n = head < NTP_ARRIVALS ? head : NTP_ARRIVALS;
	hi = n;
	/* invariant: entries [0, lo) are not past seq, entries [hi, n) are */
	for (int step = 0; step < 7; step++) {
		__u32 mid;

		if (lo >= hi)
			break;
		mid = (lo + hi) / 2;
		i = (head - n + mid) % NTP_ARRIVALS;
		if ((__s32)(a->seq[i] - seq) > 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo >= n)
		return 0;
	i = (head - n + lo) % NTP_ARRIVALS;
	if (bp)
		*bp = a->bp[i];
	return a->ts[i];
}

/* arrival_in of a host socket's arrivals */
static __always_inline __u64 arrival_of(__u64 sk, __u32 seq, __u64 *bp)
{
	return arrival_in(arrivals_of(sk), seq, bp);
}

static __always_inline __u32 sk_copied_seq(__u64 sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;

	return BPF_CORE_READ(tp, copied_seq);
}

#endif
