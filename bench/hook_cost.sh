#!/usr/bin/env bash
# What ntprof's BPF hooks cost, measured in ONE test-bed run (docs/performance.md
# says how to read it): the scenarios bench-hooks (NVMe/TCP), bench-hooks-rdma
# (NVMe/RDMA) and bench-tcpstream (a plain TCP stream, not NVMe-oF), QD1 4 KiB
# random reads, host and target in one guest. Every figure is a ratio to
# something measured in the same guest and run: TCG (software emulation)
# makes absolute times many times those of real hardware.
#   calibration   ns per run of an empty program of each kind and of one that
#                 does one hash lookup, on the functions ntprof hooks; the
#                 dispatch of an empty fentry/kprobe per getpgid() against the
#                 kernel's published figures: TCG's slowdown
#   per -s N      programs run per I/O; BPF ns per I/O (bpf_stats, TCG), in
#                 empty-program runs and in lookups beyond them; the estimate
#                 for a real CPU; the load's mean latency against its bare mean
#   observer      the extra latency of a sampled and of an unsampled command
#   stream        CPU ns per send of a plain TCP stream, bare, with empty
#                 calibration programs, with ntprof recording
# Usage: bench/hook_cost.sh [KERNEL]   (make bench-hooks; as root)
#        SCENARIOS="bench-hooks" bench/hook_cost.sh   (a subset)
set -eu
cd "$(dirname "$0")/.."
kernel=${1:-6.1}
scen=${SCENARIOS:-bench-hooks bench-hooks-rdma bench-tcpstream}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
make --no-print-directory vm-test KERNEL="$kernel" SCENARIOS="$scen" >"$log" 2>&1 || {
	tail -20 "$log"; exit 1; }
run=$(ls -td build/vm/runs/*/ | head -1)
echo "hook cost, kernel $kernel under TCG, one run ($run)"
grep -h 'bench-' "$run/results.txt" | grep -v PASS | sed 's/^/  /' || true
awk '
function kv(line, key,   r) { r = ""; if (match(line, " " key "=[^ ]*")) { r = substr(line, RSTART + length(key) + 2, RLENGTH - length(key) - 2) } return r }
$2 == "hc-syscall" { sys = $0 }
$2 ~ /-cal$/ && $1 ~ /^bench-hooks/ { cal[$1] = $0 }
$2 ~ /-s[0-9]+$/ { s[++ns] = $0 }
$2 ~ /-observer$/ { obs[++no] = $0 }
$1 == "bench-tcpstream" { st[$2] = $0 }
END {
	if (sys != "") {
		printf "\ncalibration: dispatch per call of an empty program (getpgid, ntp-hookcal syscall)\n"
		printf "  getpgid %s ns (real CPU 55.0 ns): TCG x%s; empty fentry %s ns (real 6.1 ns): TCG x%s; empty kprobe %s ns; fentry + 1 lookup %s ns\n",
			kv(sys, "syscall_ns"), kv(sys, "tcg_factor_syscall"), kv(sys, "fentry_ns"), kv(sys, "tcg_factor_fentry"), kv(sys, "kprobe_ns"), kv(sys, "fentry_lookup_ns")
	}
	for (c in cal) {
		l = cal[c]
		printf "\n%s: bpf_stats ns per run under the load (TCG), calibration programs on ntprof'"'"'s functions\n", c
		printf "  empty fentry %s  fexit %s  tp_btf %s  kprobe %s  kretprobe %s  raw_tp %s;  one lookup: fentry %s  kprobe %s\n",
			kv(l, "fe_empty_ns"), kv(l, "fx_empty_ns"), kv(l, "tp_empty_ns"), kv(l, "kp_empty_ns"), kv(l, "kr_empty_ns"), kv(l, "rt_empty_ns"), kv(l, "fe_lookup_ns"), kv(l, "kp_lookup_ns")
		printf "  runs per I/O of the functions ntprof hooks: entries %s, exits %s, tracepoints %s\n", kv(l, "fe_empty_runs_per_io"), kv(l, "fx_empty_runs_per_io"), kv(l, "tp_empty_runs_per_io")
	}
	if (ns) {
		printf "\nntprof per I/O (record -r both, fentry flavour)\n"
		printf "  %-22s %5s %5s %5s %6s %9s %8s %8s %9s %8s %9s %8s\n", "run", "entry", "exit", "tp", "runs", "BPF ns", "x empty", "lookups", "real ns", "share%", "slowdown%", "e2e/load"
		for (i = 1; i <= ns; i++) {
			l = s[i]
			split(l, f, " "); printf "  %-22s %5s %5s %5s %6s %9s %8s %8s %9s %8s %9s %8s\n", f[2], kv(l, "entry_per_io"), kv(l, "exit_per_io"), kv(l, "tp_per_io"), kv(l, "runs_per_io"),
				kv(l, "bpf_ns_per_io"), kv(l, "empty_units"), kv(l, "body_lookups"), kv(l, "real_ns_per_io"), kv(l, "share_pct"), kv(l, "slowdown_pct"), kv(l, "e2e_over_load")
		}
		printf "  (x empty: BPF ns / an empty fentry'"'"'s; lookups: ns beyond empty programs / one lookup'"'"'s; real ns: published dispatch per kind + body / TCG factor)\n"
	}
	for (i = 1; i <= no; i++) {
		l = obs[i]; split(l, f, " ")
		printf "\n%s: load mean bare %s us; -s 1000 %s, -s 100 %s, -s 1 %s us; an unsampled command +%s us, a sampled one +%s us: sampled %s %% slower than the rest\n",
			f[1], kv(l, "base_us"), kv(l, "s1000_us"), kv(l, "s100_us"), kv(l, "s1_us"), kv(l, "unsampled_extra_us"), kv(l, "sampled_extra_us"), kv(l, "sampled_vs_rest_pct")
	}
	if ("bench-tcpstream-base" in st) {
		printf "\nplain TCP stream over loopback (1 KiB sends), CPU ns per send\n"
		printf "  bare %s (%s sends/s)", kv(st["bench-tcpstream-base"], "cpu_ns_per_send"), kv(st["bench-tcpstream-base"], "sends_per_s")
		if ("bench-tcpstream-base-end" in st) printf ", bare again %s", kv(st["bench-tcpstream-base-end"], "cpu_ns_per_send")
		printf "\n  empty calibration programs: +%s ns (their socket programs: %s runs, %s BPF ns per send)\n", kv(st["bench-tcpstream-cal"], "extra_ns_per_send"), kv(st["bench-tcpstream-cal"], "sock_runs_per_send"), kv(st["bench-tcpstream-cal"], "sock_bpf_ns_per_send")
		printf "  ntprof record -s 1000:     +%s ns (its socket programs: %s runs, %s BPF ns per send)\n", kv(st["bench-tcpstream-ntprof"], "extra_ns_per_send"), kv(st["bench-tcpstream-ntprof"], "sock_runs_per_send"), kv(st["bench-tcpstream-ntprof"], "sock_bpf_ns_per_send")
	}
}' "$run/figures.txt"
