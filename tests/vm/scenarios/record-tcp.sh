# record-tcp: `ntprof record -r both` on real NVMe/TCP while the load generator
# runs 4 KiB random reads at QD1 and QD8 and 128 KiB random writes at QD4 (the
# R2T path). -s 1 samples every command, so ntprof's mean covers the same I/Os
# as the load generator's. For each:
#   NAME-join     every host record joined with its target record (100 %), and
#                 the host records cover every byte the load generator moved (the
#                 block layer may merge two adjacent random writes into one
#                 request: one record of twice the size). Records the kernel
#                 could not hand over (ring buffer full: user space did not read
#                 for seconds on an overloaded machine) are what ntprof itself
#                 counts and says ("records lost (ring buffer full)"): each may
#                 leave one host record unjoined or one I/O uncovered, and the
#                 verdict names them; any shortfall beyond that count fails, and
#                 so does a run that lost half of the load's I/Os or more, as
#                 many records as I/Os (-r both: an I/O has two records; a
#                 fault of ours in waking the reader loses most of a run, a
#                 starved reader a burst)
#   NAME-slots    every host record has every timestamp of its flow
#   NAME-order    each joined command's host arrivals (response, R2T) come after
#                 the target sent them and before the host driver handled them
#                 (one clock over loopback: ntp_arrival_order)
#   NAME-fentry   with module BTF, the fentry flavour loaded (no fallback to kprobes)
#   NAME-sum      the five stage means add up to the end-to-end mean
#   NAME-tdata    (the writes) every target record that sent an R2T has its
#                 data stamps in order with width: t_data_arrive (the data's
#                 first byte reached the target's stack) <= t_data_recv (its
#                 last byte did) < t_storage_submit, so "target driver, data"
#                 (the driver reading the data, up to execution) is > 0
#   NAME-e2e      ntprof's end-to-end mean <= the load generator's mean; the gap
#                 (system call, io_uring, wake-up: outside the block layer) is a figure
# record-tcp-read-qd8-ringfull: the allowance for lost records, exercised: a
# ring of 512 KiB (NTPROF_RING_KIB; room for several of the recorder's 100 ms
# polls of this load, far less than the 2 s of it the recorder misses) and
# the recorder stopped (SIGSTOP) for 2 s of the 8 s load fill the ring, so
# the kernel drops records; NAME-lost checks it did and that ntprof counted
# them, the checks above that the rest joins and adds up
# tb-timeout: 420
. /tb/ntprof-checks.sh
tb_setup_tcp || { tb_result record-tcp FAIL "NVMe/TCP setup failed"; exit 0; }

ntp_tcp_record_check record-tcp-read-qd1 "$NTP_READ_TS" 4096 --rw randread --bs 4k --qd 1
# on 5.10 too (types from the -dbg package's BTF, kprobes; the R2T write below
# is timed through blk_mq_tag_to_rq there, nvme_tcp_setup_h2c_data_pdu being inlined)
ntp_tcp_record_check record-tcp-read-qd8 "$NTP_READ_TS" 4096 --rw randread --bs 4k --qd 8
ntp_tcp_record_check record-tcp-write128k-qd4 "$NTP_R2T_TS" 131072 --rw randwrite --bs 128k --qd 4
RING_KIB=512 PAUSE=2
ntp_tcp_record_check record-tcp-read-qd8-ringfull "$NTP_READ_TS" 4096 --rw randread --bs 4k --qd 8
