# bench-hooks: what ntprof's hooks cost per I/O over NVMe/TCP, and what that
# means off TCG (bench/hook_cost.sh prints it, docs/performance.md explains it).
# QD1 4 KiB random reads, host and target in one guest (-r both), one run
# (tests/vm/guest/hookcost.sh):
#   hc-syscall             an empty fentry's and kprobe's dispatch in this guest
#                          (ntp-hookcal syscall) against the published figures
#                          of real CPUs: TCG's slowdown
#   bench-hooks-bareN, -lat-sN  the load's mean bare and with ntprof at -s 1000,
#                          100, 1, each between two bare runs
#   bench-hooks-observer   slowdowns, and a sampled command against the rest
#   bench-hooks-obsN-lat-s100  HC_OBS_REPS (3) more -s 100 phases: the sampled
#                          commands' p50 against the rest's, median over phases
#   bench-hooks-s100-bpftime, -s1-bpftime  -s 100 and -s 1 once more, each
#                          I/O's log line with the BPF run time while it was
#                          in flight (ntp-load --bpf-time): a sampled
#                          command's extra latency split into BPF run time
#                          and the rest, and that BPF time against the same
#                          programs' when every command is sampled (warm)
#   bench-hooks-sN         ntprof at -s 1000, 100, 1 beside calibration
#                          programs (empty, one lookup) on the same functions:
#                          programs per I/O, BPF ns per I/O in TCG, in units,
#                          estimated for real hardware
# Each -lat- phase leaves its recording and the load's log (offset and
# latency of every I/O) in the run's directory: bench/hook_cost.sh compares
# each sampled I/O with its unsampled neighbours from them.
# Passes when the statistics were read; the figures are the result.
# tb-timeout: 900
. /tb/ntprof-checks.sh
. /tb/hookcost.sh
tb_setup_tcp || { tb_result bench-hooks FAIL "NVMe/TCP setup failed"; exit 0; }
echo 1 > /proc/sys/kernel/bpf_stats_enabled || { tb_result bench-hooks SKIP "no kernel.bpf_stats_enabled"; exit 0; }
hc_syscall || tb_log "ntp-hookcal syscall failed: no real-hardware estimate"
hc_transport bench-hooks tcp --rw randread --bs 4k --qd 1
# the observer effect at -s 100 in more phases: one phase's sampled p50 rests
# on some tens of commands; bench/hook_cost.sh prints the median over all
for i in $(seq 1 ${HC_OBS_REPS:-3}); do
	hc_lat bench-hooks-obs$i-lat-s100 tcp 100 --rw randread --bs 4k --qd 1
done
hc_bpftime bench-hooks-s100-bpftime tcp 100 --rw randread --bs 4k --qd 1
hc_bpftime bench-hooks-s1-bpftime tcp 1 --rw randread --bs 4k --qd 1
echo 0 > /proc/sys/kernel/bpf_stats_enabled
