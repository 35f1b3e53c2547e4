# record-backpressure: a busy drive shows up in storage, a saturated link in
# the network (docs/backpressure.md). The drive: a null_blk that serves only
# BP_PAR commands at once (hw_queue_depth, one submission queue, no I/O
# scheduler) and completes each after BP_NSEC (irqmode=2, timer). Read at QD 1,
# 4x and 16x BP_PAR, nvmet's submission runs out of the drive's tags and its
# queue's worker sleeps in the block layer while later commands wait in its
# socket (or, over RDMA, in its completion queue).
#  record-backpressure-tcp-qdN / -rdma-qdN  over NVMe/TCP and NVMe/RDMA: of the
#    growth over QD 1 of the stages where a wait for the drive can show
#    (network, target driver, storage: from the command's send to its
#    response's arrival), storage takes >= 80 % (on 5.10, whose modules have
#    no BTF, with kprobes and the BTF file of tests/vm/btf.sh). That one
#    check is all: it bounds the network and the target driver together to
#    the rest, <= 20 %, with no separate bound on the network. The host's
#    block layer and driver are left out: no wait for the target's drive happens there (the host's
#    queues are deeper than the load's), what they gain under load is the
#    host's CPU, shared under TCG (docs/backpressure.md, "The converse").
#    Some growth stays in the network, rightly: while a command waits in the
#    target's socket or CQ, the queue's worker is not always blocked on the
#    drive; it also handles the commands ahead of it (and waits for a CPU
#    between batches), which is target CPU time, not the drive's
#    (docs/backpressure.md, "The converse"); the more commands ahead (the
#    deeper the QD), the more of it.
#  record-backpressure-link-qdN  the same QDs over NVMe/TCP on a drive
#    without delay behind a rate-limited lo (netem rate): the network takes
#    >= 80 % of the same growth
#  NAME-largest  at the highest QD, the last interval line of `ntprof record`
#    names the right largest stage (storage, network) by its share
#  record-backpressure-tcp-top  so does ntprof-top -b's last screen (busy
#    drive over NVMe/TCP at the highest QD)
# Stage means, not p50s: the growth under test is a queueing delay that most
# commands see. A 5 ms drive and an 8 Mbit/s link make each queued command
# wait for whole service times of the drive or the link, against which what
# TCG's shared CPUs add to the host block layer and the target driver under
# load is small. rdma_rxe loops a local destination back without lo's qdisc,
# so the rate-limited link is over NVMe/TCP only.
# tb-timeout: 420
. /tb/ntprof-checks.sh

BP_PAR=2
BP_NSEC=5000000
BP_SECS=4
QDS="1 $((4 * BP_PAR)) $((16 * BP_PAR))"

# bp_nullblk NAME DEPTH [COMPLETION_NSEC]: a null_blk serving DEPTH commands
# at once; prints its /dev path
bp_nullblk() {
	local d=/sys/kernel/config/nullb/$1 dev i
	mkdir "$d" || return 1
	echo 1024 > "$d/size"
	echo 1 > "$d/submit_queues"
	echo "$2" > "$d/hw_queue_depth"
	if [ -n "$3" ]; then
		echo 2 > "$d/irqmode"
		echo "$3" > "$d/completion_nsec"
	fi
	echo 1 > "$d/power" || return 1
	if [ -b "/dev/$1" ]; then dev=/dev/$1; else i=$(cat "$d/index"); dev=/dev/nullb$i; fi
	[ -b "$dev" ] || return 1
	# no scheduler: its own request pool would hold commands before the tags
	echo none > /sys/block/${dev#/dev/}/queue/scheduler 2>/dev/null
	echo "$dev"
}

# run NAME TRANSPORT QD: a recording of a QD read load; NAME.stages holds
# e2e host_block host_driver network target_driver storage (means, us) and
# NAME.largest the stage with the largest share on the last interval line
run() {
	local name=$1 t=$2 qd=$3 line
	ntp_rec_start $name -r both -t $t -s 1 -o $TB_OUT/$name.ntp ||
		{ tb_result $name FAIL "ntprof record did not start: $(tail -1 $TB_OUT/$name.err)"; return 1; }
	tb_load --rw randread --bs 4k --qd $qd --secs $BP_SECS
	tb_figure $name $TB_LOAD_LINE
	ntp_rec_stop INT
	ntprof report -j $TB_OUT/$name.json $TB_OUT/$name.ntp > /dev/null 2>&1
	ntprof report --detail $TB_OUT/$name.ntp > $TB_OUT/$name.report 2>&1
	line=$(ntp_json_groups $TB_OUT/$name.json | grep "^read 4KiB " | head -1)
	echo "$line" | awk -F'|' '{ print $3, $4, $5, $6, $7, $8 }' > $TB_OUT/$name.stages
	# interval lines: time group n cmds/s mean p99 then five shares (n %); the
	# 4 KiB group's (two reads the block layer merged are a group of 8 KiB)
	awk -v dev="${TB_DEV#/dev/}" '$2 == "read" && $3 == "4KiB" && $4 == dev && NF >= 12 { l = $0 } END { print l }' \
		$TB_OUT/$name.out > $TB_OUT/$name.iline
	awk '{ best = ""; bv = -1; split("host_block host_driver network target_driver storage", n, " ")
	       for (i = 1; i <= 5; i++) { v = $(NF - 5 + i); gsub(/[%*]/, "", v); if (v + 0 > bv) { bv = v + 0; best = n[i] } }
	       print best }' $TB_OUT/$name.iline > $TB_OUT/$name.largest
	tb_log "$name: e2e hb hd net td st = $(cat $TB_OUT/$name.stages); interval: $(cat $TB_OUT/$name.iline)"
}

# verdicts PREFIX STAGE-INDEX(3 network, 5 storage): per QD above 1
verdicts() {
	local p=$1 k=$2 qd res
	for qd in $QDS; do
		[ $qd = 1 ] && continue
		[ -s $TB_OUT/$p-qd1.stages ] && [ -s $TB_OUT/$p-qd$qd.stages ] ||
			{ tb_result $p-qd$qd FAIL "no stage means"; continue; }
		res=$(awk -v k=$k 'NR == 1 { for (i = 1; i <= 6; i++) b[i] = $i; next }
			{ g = $1 - b[1]; for (i = 2; i <= 6; i++) d[i] = $i - b[i]
			  t = d[4] + d[5] + d[6]	# network, target driver, storage
			  ok = t > 0 && d[k + 1] >= 0.8 * t	# the other two: <= 20 % together
			  printf "%d growth %.1f us, of network to storage %.1f us: block %+.1f driver %+.1f network %+.1f tdriver %+.1f storage %+.1f", ok, g, t, d[2], d[3], d[4], d[5], d[6] }' \
			$TB_OUT/$p-qd1.stages $TB_OUT/$p-qd$qd.stages)
		tb_figure $p-qd$qd "${res#* }"
		tb_check $p-qd$qd "${res%% *} == 1" "${res#* }"
	done
}

largest() { # PREFIX QD WANT
	local got=$(cat $TB_OUT/$1-qd$2.largest 2>/dev/null)
	tb_check $1-largest "\"$got\" == \"$3\"" "largest share at QD $2: ${got:-none} ($(cat $TB_OUT/$1-qd$2.iline 2>/dev/null))"
}

# top_check PREFIX QD WANT: ntprof-top -b live under the QD load; the stage
# with the largest mean on its last screen
top_check() {
	local p=$1 pid i=0 got
	( LANG=C exec timeout -k 5 240 ntprof-top -b -n 4 -r both -s 1 -i 2 --width 100 \
		> $TB_OUT/$p-top.txt 2> $TB_OUT/$p-top.err ) &
	pid=$!
	: >> $TB_OUT/$p-top.err
	while ! grep -q "hooks:" $TB_OUT/$p-top.err && kill -0 $pid 2>/dev/null && [ $i -lt 1500 ]; do
		sleep 0.1; i=$((i + 1))
	done
	tb_load --rw randread --bs 4k --qd $2 --secs 9
	wait $pid
	got=$(awk '/read 4KiB / { rows = 1; best = ""; bv = -1; next }
		rows && /^  (host block|host driver|network|target driver|storage)/ {
			v = $(NF - 2); n = ($1 == "network" || $1 == "storage") ? $1 : $1 "_" $2
			if (v + 0 > bv) { bv = v + 0; best = n }
			if ($1 == "storage") { last = best; rows = 0 } }
		END { print last }' $TB_OUT/$p-top.txt)
	tb_check $p-top "\"$got\" == \"$3\"" "ntprof-top -b at QD $2, last screen's largest stage: ${got:-none}"
}

top=${QDS##* }
busy=$(bp_nullblk ntpbusy $BP_PAR $BP_NSEC) || { tb_result record-backpressure FAIL "null_blk failed"; exit 0; }

# --- NVMe/TCP, busy drive ---
if tb_setup_tcp "$busy"; then
	for qd in $QDS; do run record-backpressure-tcp-qd$qd tcp $qd; done
	verdicts record-backpressure-tcp 5
	largest record-backpressure-tcp $top storage
	top_check record-backpressure-tcp $top storage
	tb_teardown
else
	tb_result record-backpressure-tcp FAIL "NVMe/TCP setup failed"
fi

# --- NVMe/TCP, rate-limited link, drive without delay ---
fast=$(bp_nullblk ntpfast 64) || { tb_result record-backpressure-link FAIL "null_blk failed"; exit 0; }
if tb_setup_tcp "$fast" && tb_modules netem && $TB_TC qdisc replace dev lo root netem rate 8mbit limit 100000; then
	for qd in $QDS; do run record-backpressure-link-qd$qd tcp $qd; done
	verdicts record-backpressure-link 3
	largest record-backpressure-link $top network
	tb_teardown
else
	tb_result record-backpressure-link FAIL "NVMe/TCP setup or netem rate failed"
	tb_teardown
fi

# --- NVMe/RDMA, busy drive ---
busy=$(bp_nullblk ntpbusy $BP_PAR $BP_NSEC) || { tb_result record-backpressure-rdma FAIL "null_blk failed"; exit 0; }
if ! tb_setup_rdma "$busy"; then
	tb_result record-backpressure-rdma FAIL "NVMe/RDMA setup failed"
else
	for qd in $QDS; do run record-backpressure-rdma-qd$qd rdma $qd; done
	verdicts record-backpressure-rdma 5
	largest record-backpressure-rdma $top storage
fi
