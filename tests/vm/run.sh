#!/usr/bin/env bash
# The test bed's driver (make vm-test / vm-top / vm-shell):
#   tests/vm/run.sh test|top|shell
# Environment: KERNEL=6.1|5.10|6.12, SCENARIOS="tcp-read rdma-*" (names or
# globs of tests/vm/scenarios/*.sh; default all), O=build (the binaries),
# NTP_VM_CACHE, NTP_VM_SECS (workload seconds per load, default 5),
# NTP_VM_VERBOSE=1 (console on stdout), NTP_VM_SKIP_DEPS=1 (no apt-get),
# NTP_VM_MEM (MiB, default 2048), NTP_VM_OUT (results dir), NTP_VM_TOP_ARGS
# (more ntprof-top options for vm-top, e.g. "-s 10").
# Prints "vm-test: PASS|FAIL|SKIP NAME details" per verdict; exits 1 if any failed.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
MODE=${1:-test}
KERNEL=${KERNEL:-6.1}
O=${O:-build}; case $O in /*) ;; *) O=$TOP/$O ;; esac
export O NTP_VM_CACHE=${NTP_VM_CACHE:-/var/cache/ntprof-vm}
SECS=${NTP_VM_SECS:-5}
say() { echo "vm-$MODE: $*"; }
die() { echo "vm-$MODE: error: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "run as root (apt-get, depmod and the cache need it)"

t_start=${EPOCHREALTIME/./}
if [ "${NTP_VM_SKIP_DEPS:-0}" != 1 ] && ! command -v qemu-system-x86_64 >/dev/null; then
	"$TOP/tools/install-deps.sh" || die "tools/install-deps.sh failed"
fi
for t in qemu-system-x86_64 busybox cpio depmod modprobe; do
	command -v $t >/dev/null || die "$t missing: run tools/install-deps.sh"
done
[ -x "$O/ntp-load" ] || die "$O/ntp-load missing: make ntp-load"

# scenario selection: names or globs, in the order given; default (and CI's
# 6.1 run): every scenario, sorted, except those whose file says
# "# tb-default: no" (benchmarks, long soaks), which run only when named
list=()
if [ -z "${SCENARIOS:-}" ]; then
	for f in "$HERE"/scenarios/*.sh; do
		grep -q '^# tb-default: *no' "$f" && continue
		list+=("$(basename "$f" .sh)")
	done
else
	for pat in ${SCENARIOS//,/ }; do
		found=0
		for f in "$HERE"/scenarios/$pat.sh; do
			[ -f "$f" ] || continue
			list+=("$(basename "$f" .sh)"); found=1
		done
		[ $found = 1 ] || die "no scenario matches '$pat' (tests/vm/scenarios/*.sh)"
	done
fi
"$HERE/kernel.sh" "$KERNEL" > "$O/vm-kernel.log" 2>&1 || { cat "$O/vm-kernel.log" >&2; die "kernel fetch failed"; }
. "$NTP_VM_CACHE/kernel-$KERNEL/env"
# a kernel without module BTF (5.10): ntprof's BTF file from the -dbg package
"$HERE/btf.sh" "$KERNEL" > "$O/vm-btf.log" 2>&1 || { cat "$O/vm-btf.log" >&2; die "BTF file for $KERNEL failed"; }
INITRD=$O/vm/initramfs-$KERNEL.cpio.gz
"$HERE/initramfs.sh" "$KERNEL" "$INITRD" > "$O/vm-initramfs.log" 2>&1 ||
	{ cat "$O/vm-initramfs.log" >&2; die "initramfs build failed"; }
t_built=${EPOCHREALTIME/./}

# qemu's limit: boot + every scenario's own "# tb-timeout:" + teardown slack
timeout=120
for s in "${list[@]}"; do
	t=$(sed -n 's/^# tb-timeout: *\([0-9][0-9]*\).*/\1/p' "$HERE/scenarios/$s.sh" | head -1)
	timeout=$((timeout + ${t:-180} + 20))
done
[ "$MODE" = test ] || timeout=${NTP_VM_TIMEOUT:-86400}
timeout=${NTP_VM_TIMEOUT:-$timeout}

OUT=${NTP_VM_OUT:-$O/vm/runs/$KERNEL-$MODE-$(date +%Y%m%d-%H%M%S)}
[ -z "$(ls -A "$OUT" 2>/dev/null)" ] || die "results directory $OUT is not empty"
mkdir -p "$OUT"
scen_csv=$(IFS=,; echo "${list[*]}")
# tsc=reliable: under TCG every vCPU reads one virtual TSC, but 5.10 and 6.1
# judge it "unsynchronized" at boot and fall back to the HPET, an emulated MMIO
# read per clock read (ktime_get, bpf_ktime_get_ns). NTP_VM_APPEND replaces it.
APPEND="console=ttyS0 panic=-1 quiet ${NTP_VM_APPEND-tsc=reliable} tb.mode=$MODE tb.kernel=$KERNEL tb.secs=$SECS tb.scenarios=$scen_csv"
if [ "$MODE" != test ]; then
	size=$(stty size 2>/dev/null || echo "24 80")
	APPEND+=" tb.rows=${size% *} tb.cols=${size#* } tb.term=${TERM:-linux}"
	[ -n "${NTP_VM_TOP_ARGS:-}" ] && APPEND+=" tb.topargs=$(echo $NTP_VM_TOP_ARGS | tr ' ' ,)"
fi
# One guest at a time on this machine (NTP_VM_LOCK): TCG guests that share two
# cores slow each other down enough to fail the timing checks.
QEMU=(flock "${NTP_VM_LOCK:-/tmp/ntprof-vm.lock}" timeout --foreground -k 10 "$timeout" qemu-system-x86_64
	-machine pc,accel=tcg -cpu max -smp 2 -m "${NTP_VM_MEM:-2048}"
	-nographic -no-reboot -nic none
	-kernel "$NTP_VM_VMLINUZ" -initrd "$INITRD" -append "$APPEND"
	-virtfs "local,path=$OUT,mount_tag=out,security_model=none,id=out")

if [ "$MODE" != test ]; then
	say "kernel $NTP_VM_KVER; results share $OUT; Ctrl-A x leaves qemu"
	"${QEMU[@]}"
	exit $?
fi

say "kernel $NTP_VM_KVER, scenarios: ${list[*]} (qemu timeout ${timeout} s)"
t_boot=${EPOCHREALTIME/./}
# The serial console emits CRLF; each line gets the host's elapsed seconds.
"${QEMU[@]}" < /dev/null 2>&1 | while IFS= read -r line; do
	line=${line%$'\r'}
	now=${EPOCHREALTIME/./}
	el=$(( (now - t_boot) / 10000 ))
	printf '[+%4d.%02d] %s\n' $((el / 100)) $((el % 100)) "$line"
done | if [ "${NTP_VM_VERBOSE:-0}" = 1 ]; then tee "$OUT/console.log"; else cat > "$OUT/console.log"; fi
qrc=${PIPESTATUS[0]}
t_end=${EPOCHREALTIME/./}

# verdicts: the guest's results.txt (9p), one line per check; a scenario that
# never finished gets a FAIL of its own
fail=0 npass=0 nfail=0 nskip=0
verdict() { # STATUS NAME DETAILS
	echo "vm-test: $1 $2 $3"
	case $1 in PASS) npass=$((npass + 1)) ;; SKIP) nskip=$((nskip + 1)) ;; *) nfail=$((nfail + 1)); fail=1 ;; esac
}
# (without the 9p share the guest's verdicts are only on the console)
results=$OUT/results.txt
if [ ! -f "$results" ]; then
	sed -n 's/^\[[^]]*\] TB_RESULT //p' "$OUT/console.log" > "$OUT/results-from-console.txt"
	results=$OUT/results-from-console.txt
fi
while read -r status name details; do
	[ -n "$name" ] && verdict "$status" "$name" "$details"
done < "$results"
for s in "${list[@]}"; do
	grep -q "TB_SCENARIO_END $s " "$OUT/console.log" && continue
	why="did not finish"
	[ "$qrc" = 124 ] && why="did not finish: qemu killed after $timeout s"
	verdict FAIL "$s" "$why"
done
grep -q '^\[[^]]*\] TB_DONE' "$OUT/console.log" || verdict FAIL boot "guest did not reach TB_DONE (qemu status $qrc)"
printf 'vm-test: kernel %s: build %d.%d s, qemu %d.%d s, total %d.%d s\n' "$KERNEL" \
	$(( (t_built - t_start) / 1000000 )) $(( (t_built - t_start) / 100000 % 10 )) \
	$(( (t_end - t_boot) / 1000000 )) $(( (t_end - t_boot) / 100000 % 10 )) \
	$(( (t_end - t_start) / 1000000 )) $(( (t_end - t_start) / 100000 % 10 ))
echo "vm-test: $npass passed, $nfail failed, $nskip skipped"
if [ $fail = 1 ]; then
	echo "vm-test: FAILED; console log $OUT/console.log, dmesg $OUT/dmesg.txt, per-scenario logs $OUT/<scenario>/log.txt"
	exit 1
fi
echo "vm-test: all passed (results in $OUT)"
