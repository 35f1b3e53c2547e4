# bench-hooks-rdma: bench-hooks over NVMe/RDMA (soft-RoCE), the same phases
# (tests/vm/guest/hookcost.sh); bench/hook_cost.sh runs it with bench-hooks.
# tb-timeout: 900
# tb-default: no
. /tb/ntprof-checks.sh
. /tb/hookcost.sh
tb_setup_rdma || { tb_result bench-hooks-rdma FAIL "NVMe/RDMA setup failed"; exit 0; }
echo 1 > /proc/sys/kernel/bpf_stats_enabled || { tb_result bench-hooks-rdma SKIP "no kernel.bpf_stats_enabled"; exit 0; }
hc_syscall || tb_log "ntp-hookcal syscall failed: no real-hardware estimate"
hc_transport bench-hooks-rdma rdma --rw randread --bs 4k --qd 1
# a sampled command's extra split into BPF run time and the rest (as bench-hooks)
hc_bpftime bench-hooks-rdma-s100-bpftime rdma 100 --rw randread --bs 4k --qd 1
hc_bpftime bench-hooks-rdma-s1-bpftime rdma 1 --rw randread --bs 4k --qd 1
echo 0 > /proc/sys/kernel/bpf_stats_enabled
