# standin-env.sh: sourced by the cli tests that run the SPDK stand-in
# (tests/cli/spdk.sh, record-final.sh) from the repository's top: the
# stand-in's paths, the skip (77) without root, uprobes or the stand-in,
# a scratch directory W and the stand-ins started (pids) killed at exit,
# and the ok/bad reporters that set fail.
NTPROF=${NTPROF:-build/ntprof}
O=${O:-build}
SI=$O/standin/bin/spdk-standin
export LD_LIBRARY_PATH=$O/standin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if [ "$(id -u)" != 0 ] || [ ! -x "$SI" ] || [ ! -d /sys/bus/event_source/devices/uprobe ]; then
	echo "  skip: needs root, uprobes and $SI (make spdk-standin)"
	# CI installs systemtap-sdt-dev and runs as root on a kernel with
	# uprobes: a skip there would hide the SPDK path, so it fails instead
	[ "${CI:-}" = true ] && { echo "  CI=true: the SPDK checks must run here"; exit 1; }
	exit 77
fi
W=$(mktemp -d)
export NTPROF_LOCK_DIR=$W/lock
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT
fail=0
ok() { echo "  ok   $1"; }
bad() { echo "  FAIL $1"; fail=1; }
