# record-delay: a delay injected in one place shows up in that stage and
# nowhere else, within 10 % of what was injected. Each delayed run is compared
# with a run without the delay, on medians (p50) of the stages: TCG's long
# tails move the means by more than the checks allow.
#  record-delay-storage: null_blk completing every I/O 1 ms late
#    (irqmode=2 completion_nsec=1000000): storage +1000 us
#  record-delay-network: netem delay 2 ms on lo. Over loop-back every segment
#    crosses lo once, but what that adds to an I/O is not a round 4 ms: TCP
#    small queues hold the response PDU until the C2H data segment has left
#    netem, so the response direction often waits twice (measured: +5.4 ms at
#    p50). The injected delay is therefore taken as what the I/Os got: the change
#    of ntprof's end-to-end p50; network must hold it within 10 %, and every other
#    stage must move by less than 10 % of it.
# tb-timeout: 420
. /tb/ntprof-checks.sh

run() { # NAME: a QD1 read run recorded -r both, stage p50s in $TB_OUT/NAME.p50
	ntp_rec_start $1 -r both -s 1 --offline -o $TB_OUT/$1.ntp || return 1
	tb_load --rw randread --bs 4k --qd 1 --secs 6
	ntp_rec_stop INT || return 1
	ntprof report -j $TB_OUT/$1.json --detail $TB_OUT/$1.ntp > $TB_OUT/$1.report 2>&1 || return 1
	# stage p50s: the p50_us that follows each stage's mean_us
	awk '{ gsub(/^[ \t]+/, "") } /^"components":/ { comp = 1 } /^"label":/ { comp = 0 }
	     !comp && /^"stage":"/ { s = $0; sub(/^"stage":"/, "", s); sub(/",?$/, "", s) }
	     s != "" && /^"p50_us":/ { v = $0; sub(/^[^:]*:/, "", v); gsub(/[^0-9.-]/, "", v); if (!(s in p)) p[s] = v; s = "" }
	     /^"latency_us":/ { lat = 1 } lat && /^"p50":/ { v = $0; sub(/^[^:]*:/, "", v); gsub(/[^0-9.-]/, "", v); if (e == "") e = v; lat = 0 }
	     END { printf "%s %s %s %s %s %s\n", p["host_block"], p["host_driver"], p["network"], p["target_driver"], p["storage"], e }' \
		$TB_OUT/$1.json > $TB_OUT/$1.p50
}

# verdict NAME BASE DELAYED STAGE-INDEX INJECTED-US ("e2e": the change of the end-to-end p50)
verdict() {
	local name=$1 base=$2 del=$3 k=$4 inj=$5 res
	res=$(awk -v k=$k -v inj=$inj 'NR == 1 { for (i = 1; i <= 6; i++) b[i] = $i; next }
		{ bad = 0; if (inj == "e2e") inj = $6 - b[6]
		  for (i = 1; i <= 5; i++) { d[i] = $i - b[i]; if (i != k && (d[i] > 0.1 * inj || -d[i] > 0.1 * inj)) bad = 1 }
		  if (d[k] < 0.9 * inj || d[k] > 1.1 * inj) bad = 1
		  printf "%d %.1f block %+.1f driver %+.1f network %+.1f tdriver %+.1f storage %+.1f us (end to end p50 %+.1f us)", !bad, inj, d[1], d[2], d[3], d[4], d[5], $6 - b[6] }' \
		$TB_OUT/$base.p50 $TB_OUT/$del.p50)
	set -- $res
	tb_figure $name injected_us=$2 deltas="${res#* * }"
	tb_check $name "$1 == 1" "injected $2 us; p50 change per stage: ${res#* * }"
}

tb_setup_tcp || { tb_result record-delay FAIL "NVMe/TCP setup failed"; exit 0; }
run base || { tb_result record-delay FAIL "baseline run failed"; exit 0; }
tb_netem 2ms || { tb_result record-delay-network FAIL "tc netem failed"; exit 0; }
if run netem; then verdict record-delay-network base netem 3 e2e; else tb_result record-delay-network FAIL "netem run failed"; fi
tb_teardown
fast=$(tb_nullblk ntpfast 1) || { tb_result record-delay-storage FAIL "null_blk failed"; exit 0; }
# the same null_blk flavour (irqmode=2, timer) with ~0 delay as the baseline
tb_setup_tcp "$fast" || { tb_result record-delay-storage FAIL "setup failed"; exit 0; }
run fastblk || { tb_result record-delay-storage FAIL "baseline run failed"; exit 0; }
tb_teardown
slow=$(tb_nullblk ntpslow 1000000) || { tb_result record-delay-storage FAIL "null_blk with completion_nsec failed"; exit 0; }
tb_setup_tcp "$slow" || { tb_result record-delay-storage FAIL "setup failed"; exit 0; }
if run slowblk; then verdict record-delay-storage fastblk slowblk 5 1000; else tb_result record-delay-storage FAIL "delayed run failed"; fi
