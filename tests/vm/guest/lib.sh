# The test bed's guest library (busybox ash), sourced by /init and by every
# scenario. The contract for scenario writers is in tests/vm/README.md.
#
# Environment a scenario sees:
#   TB_SCENARIO  its name           TB_OUT   its output dir (9p: <results>/<name>/ on the host)
#   TB_SECS      default workload seconds           TB_KERNEL  6.1|5.10|6.12   TB_KVER  uname -r
# Set by the setup helpers:
#   TB_DEV       the NVMe-oF block device (/dev/nvme0n1)   TB_CTRL  its controller (nvme0)
#   TB_BACKDEV   the target's backing device              TB_TRTYPE tcp|rdma
#   TB_LOAD_*    figures of the last tb_load: TB_LOAD_IOPS TB_LOAD_MEAN_US TB_LOAD_P50_US
#                TB_LOAD_P99_US TB_LOAD_IOS TB_LOAD_ERRORS TB_LOAD_MBPS TB_LOAD_LINE

TB_NQN=nqn.2024-01.io.ntprof:testbed
TB_RDMA_ADDR=${TB_RDMA_ADDR:-10.99.0.1}   # on dummy0; the guest has no NIC, nothing leaves it
TB_OUT=${TB_OUT:-/out}
TB_SECS=${TB_SECS:-5}
NVMET=/sys/kernel/config/nvmet
# Debian's busybox-static runs its own applets before searching PATH (shell
# "standalone" mode), so iproute2's ip and tc must be named by path: busybox tc
# knows no "replace" and no netem.
TB_IP=/usr/sbin/ip TB_TC=/usr/sbin/tc

tb_ts() { cut -d' ' -f1 /proc/uptime; }
tb_log() { echo "[$(tb_ts)] ${TB_SCENARIO:-init}: $*"; }

# tb_result NAME PASS|FAIL|SKIP "details": one verdict line. A scenario may
# report several (tcp-read-qd1, tcp-read-qd16, ...).
tb_result() {
	echo "$2 $1 $3" >> /out/results.txt
	echo "TB_RESULT $2 $1 $3"
}

# tb_figure KEY=VALUE...: figures for the report, appended to /out/figures.txt
tb_figure() {
	echo "${TB_SCENARIO:-?} $*" >> /out/figures.txt
}

# tb_fcmp "EXPR": true when the awk expression holds (floating point)
tb_fcmp() { awk "BEGIN { exit !($1) }"; }

# tb_sqrt X [FMT]: the square root of X (0 for X <= 0), printed with FMT
# (default %.3f): the guest's busybox awk has no sqrt(), so Newton's steps
tb_sqrt() {
	awk -v x="$1" -v f="${2:-%.3f}" 'BEGIN { r = x > 1 ? x : 1; for (i = 0; i < 60; i++) r = (r + x / r) / 2
		printf f "\n", (x > 0 ? r : 0) }'
}

# tb_check NAME "EXPR" "details": PASS if EXPR holds, else FAIL naming EXPR
tb_check() {
	if tb_fcmp "$2"; then tb_result "$1" PASS "$3"; else tb_result "$1" FAIL "$3 (expected $2)"; fi
}

# tb_modules GROUP...: insmod the modules of a group (base tcp rdma netem) in
# the dependency order computed on the host (/etc/tb/modules.GROUP).
tb_modules() {
	local g ko m p
	for g in "$@"; do
		[ -f /etc/tb/modules.$g ] || { tb_log "no module group $g"; return 1; }
		while read -r ko; do
			m=$(basename "$ko" .ko | tr - _)
			[ -d /sys/module/$m ] && continue
			case $m in
			null_blk) p="nr_devices=0" ;;   # devices are made through configfs: tb_nullblk
			brd) p="rd_nr=1 rd_size=262144" ;;  # /dev/ram0, 256 MiB
			*) p="" ;;
			esac
			# a failing insmod of crct10dif_pclmul (CPU without PCLMUL) is harmless
			insmod "$ko" $p 2>/tmp/insmod.err || tb_log "insmod $m: $(cat /tmp/insmod.err)"
		done < /etc/tb/modules.$g
	done
}

# tb_nullblk NAME [COMPLETION_NSEC]: a 1 GiB null_blk device made through
# configfs; with COMPLETION_NSEC it completes each I/O after that delay from a
# timer (irqmode=2), a known storage time. Prints the /dev path.
tb_nullblk() {
	local d=/sys/kernel/config/nullb/$1 i
	mkdir "$d" || return 1
	echo 1024 > "$d/size"
	if [ -n "$2" ]; then
		echo 2 > "$d/irqmode"
		echo "$2" > "$d/completion_nsec"
	fi
	echo 1 > "$d/power" || return 1
	# 6.1 names the disk nullb<index>; newer kernels use the configfs name
	if [ -b "/dev/$1" ]; then echo "/dev/$1"; return 0; fi
	i=$(cat "$d/index")
	[ -b "/dev/nullb$i" ] && echo "/dev/nullb$i"
}

# tb_target TRTYPE TRADDR BACKDEV: nvmet subsystem TB_NQN with namespace 1 on
# BACKDEV, exported on port 1 (tcp) or 2 (rdma) at TRADDR:4420.
tb_target() {
	local s=$NVMET/subsystems/$TB_NQN p
	if [ ! -d "$s" ]; then
		mkdir "$s" || return 1
		echo 1 > "$s/attr_allow_any_host"
		mkdir "$s/namespaces/1"
		echo -n "$3" > "$s/namespaces/1/device_path"
		echo 1 > "$s/namespaces/1/enable" || return 1
	fi
	case $1 in tcp) p=$NVMET/ports/1 ;; rdma) p=$NVMET/ports/2 ;; *) return 1 ;; esac
	[ -d "$p" ] && return 0
	mkdir "$p"
	echo "$1" > "$p/addr_trtype"
	echo ipv4 > "$p/addr_adrfam"
	echo "$2" > "$p/addr_traddr"
	echo 4420 > "$p/addr_trsvcid"
	ln -s "$s" "$p/subsystems/$TB_NQN"
}

# tb_connect TRTYPE TRADDR: connect the host side by writing the option string
# to /dev/nvme-fabrics (no nvme-cli); sets TB_DEV and TB_CTRL. With multipath
# /sys/block also shows the hidden path nvmeXcYnZ: skip it. TB_CONNECT_OPTS:
# more options for the string (e.g. queue_size=16).
tb_connect() {
	local before b i=0
	before=$(ls /sys/block | grep '^nvme' | tr '\n' ' ')
	echo "nqn=$TB_NQN,transport=$1,traddr=$2,trsvcid=4420${TB_CONNECT_OPTS:+,$TB_CONNECT_OPTS}" \
		> /dev/nvme-fabrics || return 1
	while [ $i -lt 100 ]; do
		for b in $(ls /sys/block | grep '^nvme' | grep -v -E '^nvme[0-9]+c[0-9]+n'); do
			case " $before " in *" $b "*) ;; *)
				TB_DEV=/dev/$b TB_CTRL=${b%n*} TB_TRTYPE=$1
				export TB_DEV TB_CTRL TB_TRTYPE
				return 0 ;;
			esac
		done
		sleep 0.1; i=$((i + 1))
	done
	return 1
}

tb_default_backdev() {
	[ -n "$TB_BACKDEV" ] && return 0
	TB_BACKDEV=$(tb_nullblk tb0) || return 1
	export TB_BACKDEV
}

# tb_setup_tcp [BACKDEV]: NVMe/TCP over 127.0.0.1, namespace on BACKDEV
# (default: a fresh null_blk). Sets TB_DEV. Call it directly, not in $(...).
tb_setup_tcp() {
	local t0=$(tb_ts)
	tb_modules tcp
	[ -n "$1" ] && TB_BACKDEV=$1
	tb_default_backdev || { tb_log "no backing device"; return 1; }
	tb_target tcp 127.0.0.1 "$TB_BACKDEV" || { tb_log "nvmet tcp port setup failed"; return 1; }
	tb_connect tcp 127.0.0.1 || { tb_log "nvme connect tcp failed"; dmesg | tail -20; return 1; }
	tb_log "NVMe/TCP: $TB_DEV ($TB_CTRL) -> $TB_BACKDEV in $(awk -v a=$t0 -v b=$(tb_ts) 'BEGIN{printf "%.2f", b-a}') s"
}

# tb_setup_rdma [BACKDEV]: soft-RoCE (rdma_rxe) on dummy0, NVMe/RDMA to
# TB_RDMA_ADDR. dummy.ko already created dummy0 when it loaded.
tb_setup_rdma() {
	local t0=$(tb_ts)
	tb_modules rdma
	[ -n "$1" ] && TB_BACKDEV=$1
	tb_default_backdev || { tb_log "no backing device"; return 1; }
	$TB_IP link show dummy0 >/dev/null 2>&1 || $TB_IP link add dummy0 type dummy
	$TB_IP addr add "$TB_RDMA_ADDR/24" dev dummy0 2>/dev/null
	$TB_IP link set dummy0 up
	[ -d /sys/class/infiniband/rxe0 ] || rdma link add rxe0 type rxe netdev dummy0 ||
		{ tb_log "rdma link add failed"; dmesg | tail -10; return 1; }
	tb_target rdma "$TB_RDMA_ADDR" "$TB_BACKDEV" || { tb_log "nvmet rdma port setup failed"; dmesg | tail -20; return 1; }
	tb_connect rdma "$TB_RDMA_ADDR" || { tb_log "nvme connect rdma failed"; dmesg | tail -20; return 1; }
	tb_log "NVMe/RDMA: $TB_DEV ($TB_CTRL) -> $TB_BACKDEV in $(awk -v a=$t0 -v b=$(tb_ts) 'BEGIN{printf "%.2f", b-a}') s"
}

# tb_netem DELAY [DEV]: delay every packet leaving DEV (default lo) by DELAY
# (tc syntax: 1ms). Both NVMe/TCP to 127.0.0.1 and rxe to the dummy0 address
# are local destinations, so their packets cross lo.
tb_netem() {
	tb_modules netem
	$TB_TC qdisc replace dev "${2:-lo}" root netem delay "$1"
}

# tb_load [ntp-load options] [DEVICE]: run the load generator (default device
# TB_DEV) with a timeout, save its output in TB_OUT/load.txt, and set TB_LOAD_*
# from its machine-readable line. Returns ntp-load's status.
tb_load() {
	local dev=$TB_DEV secs=$TB_SECS a prev="" rc
	for a in "$@"; do
		[ "$prev" = --secs ] && secs=$a
		prev=$a
	done
	case $prev in /*) dev="" ;; esac   # the caller named the device last
	case "$*" in *--secs*|*--count*) ;; *) set -- "$@" --secs "$TB_SECS" ;; esac
	tb_log "ntp-load $* $dev"
	timeout $(( ${secs%.*} + 60 )) ntp-load "$@" $dev > /tmp/load.out 2>&1
	rc=$?
	cat /tmp/load.out | tee -a "$TB_OUT/load.txt"
	tb_parse_load /tmp/load.out
	return $rc
}

# tb_load_bg [options]: tb_load in the background (TB_LOAD_PID); tb_load_wait
# waits for it and sets TB_LOAD_*.
tb_load_bg() {
	( tb_load "$@" > /tmp/load.bg 2>&1 ) &
	TB_LOAD_PID=$!
}
tb_load_wait() {
	wait "$TB_LOAD_PID"
	local rc=$?
	cat /tmp/load.bg
	tb_parse_load /tmp/load.out
	return $rc
}

tb_parse_load() {
	local kv k v
	TB_LOAD_LINE=$(grep '^ntp-load: rw=' "$1" | tail -1)
	TB_LOAD_IOS=0 TB_LOAD_ERRORS=-1 TB_LOAD_IOPS=0 TB_LOAD_MEAN_US=0 TB_LOAD_P50_US=0 TB_LOAD_P99_US=0 TB_LOAD_MBPS=0
	for kv in ${TB_LOAD_LINE#ntp-load: }; do
		k=$(echo "${kv%%=*}" | tr a-z A-Z); v=${kv#*=}
		eval "TB_LOAD_$k=\$v"
	done
}

# tb_wait_file FILE PATTERN SECS [PID]: wait until FILE has a line matching
# the grep -E PATTERN (e.g. a recorder's "attached" line); fails after SECS
# seconds, or at once when PID (the writer) has exited without it. Loading BPF
# programs takes seconds to minutes under TCG: wait for the writer to say it is
# ready instead of sleeping a guessed time.
tb_wait_file() {
	local end
	end=$(awk -v t=$(tb_ts) -v s=$3 'BEGIN { print t + s }')
	while ! grep -qE "$2" "$1" 2>/dev/null; do
		tb_fcmp "$(tb_ts) < $end" || return 1
		if [ -n "$4" ] && ! kill -0 "$4" 2>/dev/null; then
			grep -qE "$2" "$1" 2>/dev/null; return
		fi
		sleep 0.2
	done
}

# tb_inflight_max DEV SECS: the largest number of requests seen in flight on
# DEV's NVMe path over SECS seconds (sampled every 0.1 s). The multipath head
# (nvme0n1) is bio-based and its hidden path (nvme0c0n1) keeps iostats off, so
# /sys/block/*/inflight says nothing; the blk-mq tags in use (debugfs
# block/<disk>/hctx*/tags, "busy=" of bitmap_tags) are the requests in flight.
# The hctx files are read one after the other, so a request completed on one
# queue and replaced on another in between counts twice: a ceiling, not exact.
tb_inflight_max() {
	local b=${1#/dev/} d max=0 n end
	d=$(ls -d /sys/kernel/debug/block/${b%n*}c*n${b##*n} 2>/dev/null | head -1)
	[ -n "$d" ] || d=/sys/kernel/debug/block/$b
	end=$(awk -v t=$(tb_ts) -v s=$2 'BEGIN { print t + s }')
	while tb_fcmp "$(tb_ts) < $end"; do
		n=$(cat "$d"/hctx*/tags 2>/dev/null | awk '/^bitmap_tags:/ { b = 1 } /^breserved_tags:/ { b = 0 }
			b && /^busy=/ { n += substr($0, 6) } END { print n + 0 }')
		[ "$n" -gt "$max" ] && max=$n
		sleep 0.1
	done
	echo $max
}

# tb_teardown: undo every setup helper, so the next scenario starts clean.
# /init runs it after each scenario.
tb_teardown() {
	local c p s
	# record-threadctx raises kernel.kptr_restrict: back to the boot value
	# first, before any step below that could hang (the next scenarios
	# would run in the per-thread-context mode without saying so)
	[ -e /tmp/tb-kptr-restrict ] && cat /tmp/tb-kptr-restrict > /proc/sys/kernel/kptr_restrict &&
		rm -f /tmp/tb-kptr-restrict
	killall ntp-load ntprof ntprof-top 2>/dev/null
	for c in /sys/class/nvme/nvme*; do
		[ -e "$c/delete_controller" ] && echo 1 > "$c/delete_controller" 2>/dev/null
	done
	for p in $NVMET/ports/*; do
		[ -d "$p" ] || continue
		rm -f "$p"/subsystems/* 2>/dev/null
		rmdir "$p"
	done
	for s in $NVMET/subsystems/*; do
		[ -d "$s" ] || continue
		# every namespace (record-session exports two)
		for n in "$s"/namespaces/*; do
			[ -d "$n" ] && { echo 0 > "$n/enable"; rmdir "$n"; }
		done
		rmdir "$s"
	done
	[ -d /sys/class/infiniband/rxe0 ] && rdma link delete rxe0 2>/dev/null
	$TB_IP addr flush dev dummy0 2>/dev/null
	$TB_TC qdisc del dev lo root 2>/dev/null
	for s in /sys/kernel/config/nullb/*; do
		[ -d "$s" ] || continue
		echo 0 > "$s/power"; rmdir "$s"
	done
	unset TB_DEV TB_CTRL TB_BACKDEV TB_TRTYPE
	return 0
}

# tb_run_scenario NAME (used by /init): runs /tb/scenarios/NAME.sh in its own
# shell under `timeout` (the "# tb-timeout: SECONDS" line of the file, default
# 180), then tears down. A scenario that exits non-zero or reports nothing gets
# a FAIL verdict under its own name.
tb_run_scenario() {
	local s=$1 f=/tb/scenarios/$1.sh to n0 n1 rc t0
	if [ ! -f "$f" ]; then tb_result "$s" FAIL "no scenario file $s.sh"; return; fi
	to=$(sed -n 's/^# tb-timeout: *\([0-9][0-9]*\).*/\1/p' "$f" | head -1)
	to=${to:-180}
	mkdir -p "/out/$s"
	n0=$(wc -l < /out/results.txt)
	t0=$(tb_ts)
	echo "TB_SCENARIO_BEGIN $s uptime=$t0 timeout=$to"
	{ TB_SCENARIO=$s TB_OUT=/out/$s timeout "$to" sh -c ". /tb/lib.sh; . $f"; echo $? > /tmp/rc; } 2>&1 |
		tee "/out/$s/log.txt"
	rc=$(cat /tmp/rc)
	n1=$(wc -l < /out/results.txt)
	if [ "$rc" = 143 ] || [ "$rc" = 124 ]; then
		tb_result "$s" FAIL "timed out after ${to} s"
	elif [ "$rc" != 0 ]; then
		tb_result "$s" FAIL "scenario exited with status $rc"
	elif [ "$n1" = "$n0" ]; then
		tb_result "$s" FAIL "scenario reported no result"
	fi
	# a failed scenario keeps the kernel log of the moment
	tail -n +$((n0 + 1)) /out/results.txt | grep -q '^FAIL ' && dmesg > "/out/$s/dmesg.txt"
	timeout 60 sh -c '. /tb/lib.sh; tb_teardown' > "/out/$s/teardown.txt" 2>&1
	# this scenario's verdicts on their own: a host that replaces a guest which
	# stopped later (tests/vm/run.sh) takes them from here
	tail -n +$((n0 + 1)) /out/results.txt > "/out/$s/results.txt"
	echo "TB_SCENARIO_END $s rc=$rc secs=$(awk -v a=$t0 -v b=$(tb_ts) 'BEGIN{printf "%.1f", b-a}')"
}

# --- checks shared by the tcp-* and rdma-* scenarios ---

# tb_read_qd_checks PREFIX: PREFIX-qd1 and PREFIX-qd16 verdicts on TB_DEV
tb_read_qd_checks() {
	tb_load --rw randread --bs 4k --qd 1
	tb_figure "$1-qd1" $TB_LOAD_LINE
	tb_check "$1-qd1" "$TB_LOAD_ERRORS == 0 && $TB_LOAD_IOS >= 100" \
		"iops=$TB_LOAD_IOPS mean_us=$TB_LOAD_MEAN_US p50_us=$TB_LOAD_P50_US p99_us=$TB_LOAD_P99_US ios=$TB_LOAD_IOS"
	tb_load_bg --rw randread --bs 4k --qd 16
	local inflight=$(tb_inflight_max "$TB_DEV" $((TB_SECS - 1)))
	tb_load_wait
	tb_figure "$1-qd16" $TB_LOAD_LINE max_inflight=$inflight
	tb_check "$1-qd16" "$TB_LOAD_ERRORS == 0 && $TB_LOAD_IOS >= 100 && $inflight >= 8" \
		"iops=$TB_LOAD_IOPS mean_us=$TB_LOAD_MEAN_US p50_us=$TB_LOAD_P50_US p99_us=$TB_LOAD_P99_US ios=$TB_LOAD_IOS max_inflight=$inflight"
}

# tb_write_checks PREFIX: TB_DEV must be exported from TB_BACKDEV (a RAM disk).
# PREFIX-verify: 256 sequential 4 KiB writes from offset 0 (non-zero pattern)
# must be found on the backing device and read back identically through the
# fabric; PREFIX-qd16: random writes at QD16.
tb_write_checks() {
	head -c 1048576 /dev/zero > /tmp/zero
	if tb_load --rw write --bs 4k --qd 4 --count 256; then
		blockdev --flushbufs "$TB_BACKDEV" 2>/dev/null
		echo 3 > /proc/sys/vm/drop_caches
		dd if="$TB_BACKDEV" of=/tmp/back bs=64k count=16 2>/dev/null
		blockdev --flushbufs "$TB_DEV" 2>/dev/null
		dd if="$TB_DEV" of=/tmp/front bs=64k count=16 2>/dev/null
		if cmp -s /tmp/back /tmp/zero; then
			tb_result "$1-verify" FAIL "the first MiB of $TB_BACKDEV is still zero after writing it through $TB_DEV"
		elif ! cmp -s /tmp/back /tmp/front; then
			tb_result "$1-verify" FAIL "$TB_DEV and $TB_BACKDEV differ in the first MiB"
		else
			tb_result "$1-verify" PASS "256 x 4 KiB writes found on $TB_BACKDEV, read back identical; mean_us=$TB_LOAD_MEAN_US"
		fi
	else
		tb_result "$1-verify" FAIL "ntp-load write failed: $(tail -2 /tmp/load.out | tr '\n' ' ')"
	fi
	tb_load --rw randwrite --bs 4k --qd 16
	tb_figure "$1-qd16" $TB_LOAD_LINE
	tb_check "$1-qd16" "$TB_LOAD_ERRORS == 0 && $TB_LOAD_IOS >= 100" \
		"iops=$TB_LOAD_IOPS mean_us=$TB_LOAD_MEAN_US p50_us=$TB_LOAD_P50_US p99_us=$TB_LOAD_P99_US ios=$TB_LOAD_IOS"
}
