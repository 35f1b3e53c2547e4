# record-backpressure-fast: a drive that is never busy shows no storage
# backpressure, in every recording (docs/backpressure.md, "Entries before
# their exits"). A null_blk without delay and with 64 tags, read at QD 4 by
# one load running throughout, so nvmet submits while ntprof attaches its
# programs: blk_mq_get_tag never sleeps, and a blocked span can only come
# from a submission whose entry hook ran without its exit (the programs
# attach one by one), which then counted the worker's idle sleeps as blocked
# for the rest of the recording.
#  record-backpressure-fast-tcpN / -rdmaN  recording N of FAST_RUNS, back to
#    back with the same load (-s 1, FAST_SECS each) over NVMe/TCP and
#    NVMe/RDMA: the three backpressure components of `report --detail`
#    (on the wire, target receive, response held) sum to at most 5 % of the
#    mean end to end of the device's 4 KiB reads
# tb-timeout: 720
. /tb/ntprof-checks.sh

FAST_RUNS=4
FAST_SECS=5

# fast_nullblk NAME: a null_blk with 64 tags and no delay; prints its /dev path
fast_nullblk() {
	local d=/sys/kernel/config/nullb/$1 dev i
	mkdir "$d" || return 1
	echo 1024 > "$d/size"
	echo 1 > "$d/submit_queues"
	echo 64 > "$d/hw_queue_depth"
	echo 1 > "$d/power" || return 1
	if [ -b "/dev/$1" ]; then dev=/dev/$1; else i=$(cat "$d/index"); dev=/dev/nullb$i; fi
	[ -b "$dev" ] || return 1
	echo none > /sys/block/${dev#/dev/}/queue/scheduler 2>/dev/null
	echo "$dev"
}

# runs PREFIX TRANSPORT: FAST_RUNS recordings under one QD 4 load (long
# enough for all of them, however slow the programs load; stopped after)
runs() {
	local p=$1 t=$2 n lpid res
	ntp-load --rw randread --bs 4k --qd 4 --secs 900 --quiet $TB_DEV \
		> $TB_OUT/$p-load.txt 2>&1 &
	lpid=$!
	sleep 1
	for n in $(seq 1 $FAST_RUNS); do
		ntprof record -r both -t $t -s 1 -d $FAST_SECS -o $TB_OUT/$p$n.ntp > $TB_OUT/$p$n.out 2> $TB_OUT/$p$n.err
		ntprof report --detail $TB_OUT/$p$n.ntp > $TB_OUT/$p$n.report 2>&1
		# the device's 4 KiB reads: their mean end to end and the sum of
		# the means of the backpressure components
		res=$(awk -v dev="${TB_DEV#/dev/}" '
			/^== / { in_g = ($2 == "read" && $3 == "4KiB" && $4 == dev ":"); next }
			in_g && /^latency \(us\): mean/ { e2e = $4 + 0 }
			in_g && /^storage: backpressure,/ { bp += $(NF - 3); nbp++ }
			END { printf "%d e2e_us=%.2f bp_us=%.2f components=%d\n", (e2e > 0 && nbp > 0 && bp <= 0.05 * e2e), e2e, bp, nbp }' \
			$TB_OUT/$p$n.report)
		tb_log "$p$n: ${res#* } ($(grep -h 'hooks:' $TB_OUT/$p$n.err))"
		tb_figure $p$n "${res#* }"
		tb_check $p$n "${res%% *} == 1" "${res#* } ($(grep -h 'hooks:' $TB_OUT/$p$n.err | sed 's/^.*hooks: //'))"
	done
	# TERM: a background job of a script ignores SIGINT
	kill $lpid 2>/dev/null
	wait $lpid
}

fast=$(fast_nullblk ntpfast) || { tb_result record-backpressure-fast FAIL "null_blk failed"; exit 0; }
if tb_setup_tcp "$fast"; then
	runs record-backpressure-fast-tcp tcp
	tb_teardown
else
	tb_result record-backpressure-fast-tcp FAIL "NVMe/TCP setup failed"
	tb_teardown
fi
# the teardown removed the null_blk
fast=$(fast_nullblk ntpfast) || { tb_result record-backpressure-fast-rdma FAIL "null_blk failed"; exit 0; }
if tb_setup_rdma "$fast"; then
	runs record-backpressure-fast-rdma rdma
	tb_teardown
else
	tb_result record-backpressure-fast-rdma FAIL "NVMe/RDMA setup failed"
fi
