# rdma-write: NVMe/RDMA writes on a brd (RAM disk) namespace, checked like tcp-write.
# tb-timeout: 120
tb_setup_rdma /dev/ram0 || { tb_result rdma-write FAIL "NVMe/RDMA setup on brd failed"; exit 0; }
tb_write_checks rdma-write
