# tcp-write: NVMe/TCP writes on a brd (RAM disk) namespace. Sequential writes
# of the first MiB must land on the target's /dev/ram0 (compared byte for byte
# with a read back through the fabric), then random writes at QD16.
# tb-timeout: 120
tb_setup_tcp /dev/ram0 || { tb_result tcp-write FAIL "NVMe/TCP setup on brd failed"; exit 0; }
tb_write_checks tcp-write
