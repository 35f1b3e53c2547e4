# smoke: the kernel-matrix check. The NVMe modules load, NVMe/TCP and NVMe/RDMA
# connect, and a short read completes on each.
# tb-timeout: 150
if tb_setup_tcp; then
	tb_load --rw randread --bs 4k --qd 1 --secs 2
	tb_check smoke-tcp "$TB_LOAD_IOS > 0 && $TB_LOAD_ERRORS == 0" \
		"$TB_DEV randread 4k qd1: $TB_LOAD_IOS I/Os, mean $TB_LOAD_MEAN_US us, kernel $TB_KVER"
else
	tb_result smoke-tcp FAIL "NVMe/TCP setup failed on $TB_KVER"
fi
tb_teardown
if tb_setup_rdma; then
	tb_load --rw randread --bs 4k --qd 1 --secs 2
	tb_check smoke-rdma "$TB_LOAD_IOS > 0 && $TB_LOAD_ERRORS == 0" \
		"$TB_DEV randread 4k qd1: $TB_LOAD_IOS I/Os, mean $TB_LOAD_MEAN_US us, kernel $TB_KVER"
else
	tb_result smoke-rdma FAIL "NVMe/RDMA setup failed on $TB_KVER"
fi
