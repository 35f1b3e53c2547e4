#!/usr/bin/env bash
# `ntprof record` and `ntprof probe` outside the test bed: option errors are one
# line naming the option and exit non-zero; on a machine without the NVMe
# modules (or without root) record and probe name what is missing, for TCP and
# for RDMA, and exit non-zero, never printing a report.
# The real recordings are checked in the QEMU test bed (tests/vm/scenarios/record-*.sh).
set -u
cd "$(dirname "$0")/../.."
NTPROF=${NTPROF:-build/ntprof}
fail=0

# expect NAME RC-NONZERO(1|0) PATTERN command...: output (stdout+stderr) must match PATTERN
expect() {
	local name=$1 nonzero=$2 pat=$3 out rc
	shift 3
	out=$("$@" 2>&1)
	rc=$?
	if { [ "$nonzero" = 1 ] && [ $rc -eq 0 ]; } || ! grep -qE -- "$pat" <<<"$out"; then
		echo "  FAIL $name (exit $rc): $out" | head -5
		fail=1
	else
		echo "  ok   $name"
	fi
}

expect record-bad-transport 1 "^ntprof: option -t: 'udp' is not tcp or rdma$" "$NTPROF" record -t udp
expect record-bad-role 1 "^ntprof: option -r: 'middle' is not host, target or both$" "$NTPROF" record -r middle
expect record-bad-s 1 "^ntprof: option -s: '0' is not a whole number" "$NTPROF" record -s 0
expect record-bad-size 1 "^ntprof: option --size: '4X' is not a size" "$NTPROF" record --size 4K,4X
expect record-bad-io 1 "^ntprof: option --io-type: 'trim' is not read or write$" "$NTPROF" record --io-type trim
expect record-bad-session 1 "^ntprof: option --session: 'sda' is not a namespace name" "$NTPROF" record --session sda
expect record-two-flavours 1 "^ntprof: --kprobes and --fentry exclude each other$" "$NTPROF" record --kprobes --fentry
# accepted: what stops it here is the missing NVMe modules (or root), not the option
expect record-exact-queues 1 "^ntprof: (kernel modules not loaded|.*root)" "$NTPROF" record --exact-queues -d 1
expect record-extra 1 "^ntprof: unexpected argument 'now'" "$NTPROF" record now
expect record-bad-attach-timeout 1 "^ntprof: option --attach-timeout: '0' is not a number from 0.001 to 3600$" "$NTPROF" record --attach-timeout 0
expect record-bad-metrics 1 "^ntprof: --metrics /nonexistent-dir/m.prom: cannot create a file beside it: No such file or directory$" "$NTPROF" record --metrics /nonexistent-dir/m.prom
expect probe-bad-transport 1 "^ntprof: option -t: 'udp' is not tcp or rdma$" "$NTPROF" probe -t udp
expect record-btf-novalue 1 '^ntprof: option --btf needs a value$' "$NTPROF" record --btf
expect probe-btf-novalue 1 '^ntprof: option --btf needs a value$' "$NTPROF" probe --btf
expect probe-help-btf 0 "default /var/lib/ntprof/btf/\\\$\\(uname -r\\)\\.btf" "$NTPROF" probe --help

# Every program in the BPF object is in the hook table (so some role and flavour
# loads it), and the table names no program the object lacks.
obj=${O:-build}/bpf/ntprof.bpf.o
if [ "$(id -u)" = 0 ] && [ -f "$obj" ] && command -v bpftool >/dev/null; then
	progs=$(bpftool btf dump file "$obj" format raw | grep -o "FUNC 'ntp_[a-z0-9_]*'" | sed "s/FUNC '//;s/'//" | sort)
	table=$({ "$NTPROF" probe -r both -t tcp; "$NTPROF" probe -r both -t rdma; } 2>/dev/null |
		awk '$1 == "ok" || $1 == "missing" { print $2 }' | sort -u)
	if [ -n "$progs" ] && [ "$progs" = "$table" ]; then
		echo "  ok   hook-table ($(echo "$progs" | wc -l) programs, all in the table)"
	else
		echo "  FAIL hook-table: object and table differ:"; diff <(echo "$progs") <(echo "$table") | head; fail=1
	fi
fi

# "bio issue time" names the field of struct bio this kernel has (its BTF, as
# bpftool reads it) and whether the kernel sets it: issue_time_ns (6.18 on)
# only where blk-iolatency is built in (docs/kernel-btf.md)
KBTF=/sys/kernel/btf/vmlinux
if [ "$(id -u)" = 0 ] && [ -r $KBTF ] && command -v bpftool >/dev/null; then
	bio=$(bpftool btf dump file $KBTF format c | awk '/^struct bio \{/ { b = 1 } b && /^};/ { exit } b')
	if grep -q ' issue_time_ns;' <<<"$bio"; then
		if bpftool btf dump file $KBTF format raw | grep -q "^\[[0-9]*\] STRUCT 'blk_iolatency' "; then
			want='^bio issue time: where blk-iolatency has a target \(bio->issue_time_ns, '
		else
			want='^bio issue time: no \(bio->issue_time_ns, which only blk-iolatency sets, and this kernel has no blk-iolatency: '
		fi
	elif grep -q ' bi_issue;' <<<"$bio"; then
		want='^bio issue time: yes \(bio->bi_issue, set for every bio: '
	else
		want='^bio issue time: no \(struct bio has neither bi_issue nor issue_time_ns: '
	fi
	expect probe-bio-issue 0 "$want" "$NTPROF" probe -r host
	# "packet arrival time": TCP's per-socket clock where struct tcp_sock
	# has tcp_clock_cache (docs/hooks.md); no such line for RDMA
	if bpftool btf dump file $KBTF format c | awk '/^struct tcp_sock \{/ { b = 1 } b && /^};/ { exit } b' |
		grep -q ' tcp_clock_cache;'; then
		want='^packet arrival time: TCP.s clock of the segment \(tcp_sock\.tcp_clock_cache\)$'
	else
		want='^packet arrival time: read at sk_data_ready \(struct tcp_sock has no tcp_clock_cache\)$'
	fi
	expect probe-arrival-clock 0 "$want" "$NTPROF" probe -r target
	if "$NTPROF" probe -r target -t rdma 2>/dev/null | grep -q '^packet arrival time:'; then
		echo "  FAIL probe-arrival-clock-rdma: an RDMA probe names a packet arrival clock"; fail=1
	else
		echo "  ok   probe-arrival-clock-rdma"
	fi
fi

if [ "$(id -u)" != 0 ]; then
	expect record-unprivileged 1 '^ntprof: needs root, or CAP_BPF and CAP_PERFMON' "$NTPROF" record -d 1
	expect probe-unprivileged 1 '^ntprof: probe needs root, or CAP_BPF and CAP_PERFMON' "$NTPROF" probe
elif [ ! -d /sys/module/nvme_tcp ] && [ ! -d /sys/module/nvmet_tcp ]; then
	# this machine has no NVMe/TCP: both name the missing modules (and what else lacks)
	expect record-no-modules 1 '^ntprof: kernel modules not loaded: nvme_core, nvme_tcp' "$NTPROF" record -d 1
	expect record-both-no-modules 1 'not loaded: nvme_core, nvme_tcp, nvmet, nvmet_tcp' "$NTPROF" record -r both -d 1
	expect probe-no-modules 1 'nvme_tcp: not loaded' "$NTPROF" probe -r host
	expect probe-no-modules-load 1 '^load: failed$' "$NTPROF" probe -r target
fi
if [ "$(id -u)" = 0 ] && [ ! -d /sys/module/nvme_rdma ] && [ ! -d /sys/module/nvmet_rdma ]; then
	expect record-rdma-no-modules 1 '^ntprof: kernel modules not loaded: .*nvme_rdma' "$NTPROF" record -t rdma -d 1
	expect record-rdma-both-no-modules 1 'not loaded: .*nvme_rdma.*nvmet_rdma' "$NTPROF" record -t rdma -r both -d 1
	expect probe-rdma-no-modules 1 'nvme_rdma: not loaded' "$NTPROF" probe -r host -t rdma
	expect probe-rdma-table 1 'linux_rdma_target \(nvmet: .*nvmet_rdma: ' "$NTPROF" probe -r target -t rdma
fi
if [ "$(id -u)" = 0 ] && [ ! -d /sys/module/nvme_tcp ] && [ ! -d /sys/module/nvmet_tcp ]; then
	out=$("$NTPROF" record -d 1 2>/dev/null)
	if [ -n "$out" ]; then echo "  FAIL record-no-report: printed '$out'"; fail=1; else echo "  ok   record-no-report"; fi
fi
exit $fail
