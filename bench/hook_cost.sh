#!/usr/bin/env bash
# What ntprof's BPF hooks cost per I/O, from the kernel's own statistics
# (kernel.bpf_stats_enabled: run_time_ns and run_cnt of every ntp_* program),
# at -s 1000 and -s 1, QD1 4 KiB random reads over NVMe/TCP, host and target in
# one guest. Runs the test bed's bench-hooks scenario (tests/vm/scenarios/
# bench-hooks.sh) and prints its figures: ns of BPF per I/O and their share of
# the mean I/O latency measured by the load generator in the same run.
# The guest runs under TCG (software emulation): absolute times are many times
# those of real hardware; read the share, and compare -s 1000 with -s 1.
# Usage: bench/hook_cost.sh [KERNEL]   (make bench-hooks; as root)
set -eu
cd "$(dirname "$0")/.."
kernel=${1:-6.1}
make --no-print-directory vm-test KERNEL="$kernel" SCENARIOS=bench-hooks >/tmp/ntprof-hook-cost.$$ 2>&1 || {
	tail -20 /tmp/ntprof-hook-cost.$$; rm -f /tmp/ntprof-hook-cost.$$; exit 1; }
run=$(ls -td build/vm/runs/*/ | head -1)
rm -f /tmp/ntprof-hook-cost.$$
echo "hook cost per I/O, kernel $kernel under TCG ($run):"
grep '^bench-hooks ' "$run/figures.txt" | sed 's/^bench-hooks /  /'
grep -h 'bench-hooks' "$run/results.txt" | sed 's/^/  /'
