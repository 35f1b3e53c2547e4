# rdma-read: NVMe/RDMA over soft-RoCE (rdma_rxe on dummy0) on a null_blk
# namespace; 4 KiB random reads at queue depth 1 and 16.
# tb-timeout: 120
tb_setup_rdma || { tb_result rdma-read FAIL "NVMe/RDMA setup failed"; exit 0; }
tb_read_qd_checks rdma-read
