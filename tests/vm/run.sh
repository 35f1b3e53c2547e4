#!/usr/bin/env bash
# The test bed's driver (make vm-test / vm-top / vm-shell):
#   tests/vm/run.sh test|top|shell
# Environment: KERNEL=6.1|5.10|6.12|7.2, SCENARIOS="tcp-read rdma-*" (names or
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

# qemu's limit for a guest: boot + its scenarios' own "# tb-timeout:" + teardown slack
guest_timeout() { # SCENARIO...
	local s t to=120
	for s in "$@"; do
		t=$(sed -n 's/^# tb-timeout: *\([0-9][0-9]*\).*/\1/p' "$HERE/scenarios/$s.sh" | head -1)
		to=$((to + ${t:-180} + 20))
	done
	echo $to
}
timeout=$(guest_timeout "${list[@]}")
[ "$MODE" = test ] || timeout=${NTP_VM_TIMEOUT:-86400}
timeout=${NTP_VM_TIMEOUT:-$timeout}
# NTP_VM_DEADLINE (seconds since the epoch; CI sets it): no guest runs past it,
# so a hung guest ends CI with its verdicts instead of CI's own time limit
deadline=${NTP_VM_DEADLINE:-0}

OUT=${NTP_VM_OUT:-$O/vm/runs/$KERNEL-$MODE-$(date +%Y%m%d-%H%M%S)}
[ -z "$(ls -A "$OUT" 2>/dev/null)" ] || die "results directory $OUT is not empty"
mkdir -p "$OUT"
# tsc=reliable: under TCG every vCPU reads one virtual TSC, but 5.10 and 6.1
# judge it "unsynchronized" at boot and fall back to the HPET, an emulated MMIO
# read per clock read (ktime_get, bpf_ktime_get_ns). NTP_VM_APPEND replaces it.
# softlockup_panic=1: a CPU stuck for 20 s (the TCG hazard in tests/vm/README.md, "A vCPU
# stuck at a just-patched instruction") panics the guest, and panic=-1 with -no-reboot ends qemu
# in seconds rather than at qemu's time limit; the lockup's stack is on the console.
APPEND="console=ttyS0 panic=-1 quiet ${NTP_VM_APPEND-tsc=reliable softlockup_panic=1} tb.mode=$MODE tb.kernel=$KERNEL tb.secs=$SECS"
if [ "$MODE" != test ]; then
	size=$(stty size 2>/dev/null || echo "24 80")
	APPEND+=" tb.rows=${size% *} tb.cols=${size#* } tb.term=${TERM:-linux}"
	[ -n "${NTP_VM_TOP_ARGS:-}" ] && APPEND+=" tb.topargs=$(echo $NTP_VM_TOP_ARGS | tr ' ' ,)"
fi
# One guest at a time on this machine (NTP_VM_LOCK): TCG guests that share two
# cores slow each other down enough to fail the timing checks.
VM_LOCK=${NTP_VM_LOCK:-/tmp/ntprof-vm.lock}
# thread=single: both vCPUs take turns on one host thread. With one thread per
# vCPU (QEMU 7.2's default here), attaching or detaching ntprof's programs while
# the load runs left a vCPU stuck for good at a function entry that text_poke
# had just rewritten, in detach-churn runs (tests/vm/README.md, "A vCPU stuck
# at a just-patched instruction"); single-threaded, never. The default suite takes about as long.
# NTP_VM_TCG_OPTS="" gives back one thread per vCPU.
# NTP_VM_NIC: the guest's network card, none by default; the spdk-mixed
# scenario takes "user,model=virtio-net-pci" (QEMU's user networking: the
# machine's 127.0.0.1 is 10.0.2.2 in the guest).
# NTP_VM_SHARE: a directory of the machine shared read-only with the guest
# (9p tag "share"; the spdk-rdma scenario takes SPDK's programs from it).
# NTP_VM_MONITOR: a Unix socket path for QEMU's monitor (tests/vm/README.md).
QEMU=(qemu-system-x86_64
	-machine pc -accel "tcg${NTP_VM_TCG_OPTS-,thread=single}" -cpu max -smp 2 -m "${NTP_VM_MEM:-2048}"
	-nographic -no-reboot -nic "${NTP_VM_NIC:-none}"
	-kernel "$NTP_VM_VMLINUZ" -initrd "$INITRD")
[ -n "${NTP_VM_SHARE:-}" ] &&
	QEMU+=(-virtfs "local,path=$NTP_VM_SHARE,mount_tag=share,security_model=none,readonly=on,id=share")
[ -n "${NTP_VM_MONITOR:-}" ] && QEMU+=(-monitor "unix:$NTP_VM_MONITOR,server,nowait")

if [ "$MODE" != test ]; then
	say "kernel $NTP_VM_KVER; results share $OUT; Ctrl-A x leaves qemu"
	flock "$VM_LOCK" timeout --foreground -k 10 "$timeout" "${QEMU[@]}" \
		-append "$APPEND tb.scenarios=$(IFS=,; echo "${list[*]}")" \
		-virtfs "local,path=$OUT,mount_tag=out,security_model=none,id=out"
	exit $?
fi

shown="$timeout s"
[ "$deadline" -gt 0 ] && [ $((deadline - ${EPOCHREALTIME%.*})) -lt "$timeout" ] &&
	shown="$((deadline - ${EPOCHREALTIME%.*})) s, NTP_VM_DEADLINE"
say "kernel $NTP_VM_KVER, scenarios: ${list[*]} (qemu timeout $shown)"
# the VM lock is held for all the guests of this run (restarts included), so
# the watchdog's clock starts at each guest's boot, not while waiting for another run
exec 9> "$VM_LOCK"
flock 9

# watch_console OUTDIR T_BOOT: reads the guest's serial console (CRLF) on stdin
# and writes it to stdout with the host's elapsed seconds on each line; on fd 4
# it says when each scenario begins and ends, and passes on what the kernel says
# about lockups and panics. It is the host's watchdog too: a scenario gets its
# own "# tb-timeout:" plus 120 s (the guest's timeout fires first, then 60 s of
# teardown), boot 300 s, the gap between scenarios 120 s. Past that the guest
# is stopped (SIGKILL to qemu, from -pidfile) and OUTDIR/watchdog.txt says why.
kernel_alarm='^\[ *[0-9]+\.[0-9]{6}\] .*(soft lockup|rcu: INFO|Kernel panic|BUG: |RIP: 0010|blocked for more than)'
watch_console() {
	local out=$1 t_boot=$2 line part buf= rc now el cur= limit alarm=0 killed=0
	limit=$(( ${t_boot:0:-6} + 300 ))
	while :; do
		if IFS= read -r -t 5 part; then
			line=$buf$part buf=
		else
			rc=$?
			if [ $rc -le 128 ]; then # end of input
				[ -n "$buf$part" ] || break
				line=$buf$part buf=
			else
				buf+=$part
				now=${EPOCHREALTIME%.*}
				if [ $killed = 0 ] && [ "$now" -gt "$limit" ]; then
					echo "guest stopped by the host's watchdog: ${cur:-no scenario} running past its limit" \
						"($((now - ${t_boot:0:-6})) s after boot)" > "$out/watchdog.txt"
					echo "vm-test: watchdog: $(cat "$out/watchdog.txt")" >&4
					kill -KILL "$(cat "$out/qemu.pid" 2>/dev/null)" 2>/dev/null
					killed=1
				fi
				continue
			fi
		fi
		line=${line%$'\r'}
		now=${EPOCHREALTIME/./}
		el=$(( (now - t_boot) / 10000 ))
		printf '[+%4d.%02d] %s\n' $((el / 100)) $((el % 100)) "$line"
		[ "${NTP_VM_VERBOSE:-0}" = 1 ] && printf '[+%4d.%02d] %s\n' $((el / 100)) $((el % 100)) "$line" >&4
		now=${now:0:-6}
		case $line in
		TB_READY*) limit=$((now + 120)) ;;
		TB_SCENARIO_BEGIN*)
			set -- $line
			cur=$2
			limit=${4#timeout=}
			limit=$((now + ${limit:-180} + ${NTP_VM_WATCH_SLACK:-120}))
			printf 'vm-test: [+%4d s] %s begins\n' $((el / 100)) "$cur" >&4 ;;
		TB_SCENARIO_END*)
			printf 'vm-test: [+%4d s] %s ends (%s)\n' $((el / 100)) "$cur" "${line#TB_SCENARIO_END * }" >&4
			cur= limit=$((now + 120)) ;;
		TB_DONE*) limit=$((now + 60)) ;;
		*)	# the kernel's own lines only ("[   72.980032] ..."), not verdicts that mention lockups
			if [[ $line =~ $kernel_alarm ]]; then
				alarm=$((alarm + 1))
				[ $alarm -le 12 ] && echo "vm-test: guest kernel: ${line:0:200}" >&4
			fi ;;
		esac
	done
}

# run_guest OUTDIR SCENARIO...: one guest for these scenarios, results in OUTDIR
# (its 9p share); sets qrc (qemu's exit status; 124 after qemu's timeout)
run_guest() {
	local out=$1 to t_left
	shift
	mkdir -p "$out"
	to=$(guest_timeout "$@")
	to=${NTP_VM_TIMEOUT:-$to}
	if [ "$deadline" -gt 0 ]; then
		t_left=$((deadline - ${EPOCHREALTIME%.*}))
		[ "$t_left" -lt "$to" ] && to=$t_left
	fi
	t_boot=${EPOCHREALTIME/./}
	{ timeout --foreground -k 10 "$to" "${QEMU[@]}" -pidfile "$out/qemu.pid" \
		-append "$APPEND tb.scenarios=$(IFS=,; echo "$*")" \
		-virtfs "local,path=$out,mount_tag=out,security_model=none,id=out" < /dev/null 2>&1 |
		watch_console "$out" "$t_boot" 4>&1 > "$out/console.log"
		qrc=${PIPESTATUS[0]}; }
	[ "$qrc" = 124 ] && echo "qemu killed after its limit of $to s" >> "$out/watchdog.txt"
}

# scenario_results OUTDIR NAME: the verdict lines of a scenario that ended (the
# guest copies them to OUTDIR/NAME/results.txt; without 9p, from the console)
scenario_results() {
	if [ -f "$1/$2/results.txt" ]; then
		cat "$1/$2/results.txt"
	else
		sed -n "/ TB_SCENARIO_BEGIN $2 /,/ TB_SCENARIO_END $2 /s/^\[[^]]*\] TB_RESULT //p" "$1/console.log"
	fi
}

# kernel_lines CONSOLE.LOG: the guest kernel's own lines ("[+ 79.11] [   72.980032] ..."),
# not the verdicts, which may mention lockups too
kernel_lines() {
	grep -E '^\[[^]]*\] \[ *[0-9]+\.[0-9]{6}\] ' "$1"
}

fail=0 npass=0 nfail=0 nskip=0 restarts=0 failed=()
verdict() { # STATUS NAME DETAILS
	echo "vm-test: $1 $2 $3"
	case $1 in PASS) npass=$((npass + 1)) ;; SKIP) nskip=$((nskip + 1)) ;; *) nfail=$((nfail + 1)); fail=1; failed+=("$2 $3") ;; esac
}
# A guest that stops in the middle (a lockup under TCG, the watchdog) is
# replaced by a fresh one for the scenarios it did not finish, the one it
# stopped in first; a scenario whose guest stops twice fails, and so does one
# left when the deadline or the third guest comes. Every restart is reported.
declare -A stopped_in
remaining=("${list[@]}") guest=1 gout=$OUT done_ok=0
while [ ${#remaining[@]} -gt 0 ]; do
	if [ "$deadline" -gt 0 ] && [ $((deadline - ${EPOCHREALTIME%.*})) -lt 120 ]; then
		for s in "${remaining[@]}"; do verdict FAIL "$s" "not run: NTP_VM_DEADLINE leaves less than 120 s"; done
		break
	fi
	run_guest "$gout" "${remaining[@]}"
	next=() stopped=0
	for s in "${remaining[@]}"; do
		if grep -q "TB_SCENARIO_END $s " "$gout/console.log"; then
			while read -r status name details; do
				[ -n "$name" ] && verdict "$status" "$name" "$details"
			done < <(scenario_results "$gout" "$s")
		elif grep -q "TB_SCENARIO_BEGIN $s " "$gout/console.log"; then
			why=$(cat "$gout/watchdog.txt" 2>/dev/null | head -1)
			lock=$(kernel_lines "$gout/console.log" |
				grep -m1 -o 'soft lockup.*\|rcu: INFO.*\|Kernel panic.*' | cut -c1-120)
			why=${why:-qemu exited (status $qrc)}${lock:+; kernel: $lock}
			stopped=1
			rip=$(kernel_lines "$gout/console.log" | grep -m1 -o 'RIP: 0010:[^ ]*')
			why+=${rip:+ at ${rip#RIP: 0010:}}
			if [ -n "${stopped_in[$s]:-}" ]; then
				verdict FAIL "$s" "did not finish in two guests: ${stopped_in[$s]}; then: $why"
			elif grep -q '^# tb-restart: *no' "$HERE/scenarios/$s.sh"; then
				# the lockup checks themselves: their guest stopping is the failure
				verdict FAIL "$s" "the guest stopped in it: $why"
				echo "vm-test: RESTART guest $guest stopped in $s (no rerun: tb-restart: no); a new guest runs the rest"
			else
				stopped_in[$s]=$why
				echo "vm-test: RESTART guest $guest stopped in $s: $why; a new guest reruns it (console $gout/console.log)"
				next+=("$s")
			fi
		else
			next+=("$s")
		fi
	done
	grep -q '^\[[^]]*\] TB_DONE' "$gout/console.log" && done_ok=1
	if ! grep -q '^\[[^]]*\] TB_READY' "$gout/console.log"; then
		for s in "${next[@]}"; do verdict FAIL "$s" "not run: guest $guest did not boot (qemu status $qrc)"; done
		break
	fi
	[ ${#next[@]} -gt 0 ] || break
	if [ $guest -ge 3 ]; then
		for s in "${next[@]}"; do verdict FAIL "$s" "not run: three guests stopped early"; done
		break
	fi
	remaining=("${next[@]}")
	guest=$((guest + 1)) restarts=$((restarts + 1)) gout=$OUT/guest$guest
done
# (a guest stopped in a scenario has that scenario's verdict already)
[ $done_ok = 1 ] || [ $stopped = 1 ] || verdict FAIL boot "the last guest did not reach TB_DONE (qemu status $qrc)"
t_end=${EPOCHREALTIME/./}
printf 'vm-test: kernel %s: build %d.%d s, qemu %d.%d s, total %d.%d s\n' "$KERNEL" \
	$(( (t_built - t_start) / 1000000 )) $(( (t_built - t_start) / 100000 % 10 )) \
	$(( (t_end - t_built) / 1000000 )) $(( (t_end - t_built) / 100000 % 10 )) \
	$(( (t_end - t_start) / 1000000 )) $(( (t_end - t_start) / 100000 % 10 ))
echo "vm-test: $npass passed, $nfail failed, $nskip skipped$([ $restarts = 0 ] || echo ", $restarts guest restart(s)")"
# the failures again, last: a log read from its end (CI's summary) shows them
for f in "${failed[@]}"; do echo "vm-test: failed: ${f:0:300}"; done
if [ $fail = 1 ]; then
	echo "vm-test: FAILED; in $OUT$([ $guest = 1 ] || echo " (and guest2/$([ $guest = 2 ] || echo " .. guest$guest/") for the guests that replaced the first)"): console.log, dmesg.txt, <scenario>/log.txt"
	exit 1
fi
echo "vm-test: all passed (results in $OUT)"
