# bench-hooks: what ntprof's hooks cost per I/O over NVMe/TCP, and what that
# means off TCG (bench/hook_cost.sh prints it, docs/performance.md explains it).
# QD1 4 KiB random reads, host and target in one guest (-r both), one run:
#   hc-syscall          an empty fentry's and kprobe's dispatch cost in this
#                       guest (ntp-hookcal syscall), against the published
#                       figures of real CPUs: TCG's slowdown
#   bench-hooks-base    the load without BPF (before and after the rest)
#   bench-hooks-cal     empty and one-lookup calibration programs on every
#                       function ntprof hooks (ntp-hookcal hooks): the units
#   bench-hooks-sN      ntprof record at -s 1000, 100, 1: programs per I/O,
#                       BPF ns per I/O in TCG, in units, estimated for real
#                       hardware; the load's mean against the bare one
#   bench-hooks-observer  the extra latency of a sampled and an unsampled command
# Passes when the statistics were read; the figures are the result.
# tb-timeout: 900
. /tb/ntprof-checks.sh
. /tb/hookcost.sh
tb_setup_tcp || { tb_result bench-hooks FAIL "NVMe/TCP setup failed"; exit 0; }
echo 1 > /proc/sys/kernel/bpf_stats_enabled || { tb_result bench-hooks SKIP "no kernel.bpf_stats_enabled"; exit 0; }
LOAD="--rw randread --bs 4k --qd 1"
hc_syscall || tb_log "ntp-hookcal syscall failed: no TCG factor"
hc_base bench-hooks-base $LOAD
hc_calib bench-hooks-cal tcp $LOAD || { tb_result bench-hooks-cal FAIL "calibration programs did not attach"; exit 0; }
for s in 1000 100 1; do
	hc_ntprof bench-hooks-s$s tcp $s $LOAD
done
hc_base bench-hooks-base-end $LOAD
hc_observer bench-hooks-observer
echo 0 > /proc/sys/kernel/bpf_stats_enabled
