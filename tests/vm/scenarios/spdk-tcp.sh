# spdk-tcp: real SPDK over NVMe/TCP on the guest's loopback, where fentry
# and kprobes exist: the socket hooks split both sides' records. From the 9p
# share NTP_VM_SHARE (tests/vm/guest/spdk-real.sh, docs/spdk.md). Not in
# the default set: CI has no SPDK.
# Known: on 6.1 under TCG the guest froze each time spdk_nvme_perf exited
# while ntprof recorded both sides over TCP, with the socket hooks and
# without them (USDT only); not without ntprof, not over RDMA. The files
# written until then are readable (cut short).
# tb-default: no
# tb-timeout: 600
. /tb/ntprof-checks.sh
. /tb/spdk-real.sh
spdk_real tcp
