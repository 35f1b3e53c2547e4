# spdk-tcp: real SPDK over NVMe/TCP on the guest's loopback, where fentry
# and kprobes exist: the socket hooks split both sides' records. From the 9p
# share NTP_VM_SHARE (tests/vm/guest/spdk-real.sh, docs/spdk.md). Not in
# the default set: CI has no SPDK.
# The host's recorder is started while perf runs and retried while it
# refuses; one still loading (seconds under TCG, more with the socket
# hooks) is waited for until it records or exits (spdk-real.sh). A bare
# `wait` on it once looked like a guest frozen when perf exited: the
# kernel was idle and the scenario waited for a recorder that records
# until Ctrl-C.
# tb-default: no
# tb-timeout: 600
. /tb/ntprof-checks.sh
. /tb/spdk-real.sh
spdk_real tcp
