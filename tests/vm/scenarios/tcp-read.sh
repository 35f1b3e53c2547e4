# tcp-read: NVMe/TCP over 127.0.0.1 on a null_blk namespace; 4 KiB random
# reads at queue depth 1 and 16. QD16 must really keep I/Os in flight.
# tb-timeout: 120
tb_setup_tcp || { tb_result tcp-read FAIL "NVMe/TCP setup failed"; exit 0; }
tb_read_qd_checks tcp-read
