# spdk-rdma: real SPDK over NVMe/RDMA in the guest, on soft-RoCE (rdma_rxe on
# dummy0), from the 9p share NTP_VM_SHARE (tests/vm/guest/spdk-real.sh,
# docs/spdk.md). Not in the default set: CI has no SPDK.
# tb-default: no
# tb-timeout: 600
. /tb/ntprof-checks.sh
. /tb/spdk-real.sh
spdk_real rdma
