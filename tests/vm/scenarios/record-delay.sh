# record-delay: a delay injected in one place shows up in that stage and
# nowhere else, within 10 % of what was injected. Each delayed run is compared
# with a run without the delay, on medians (p50) of the stages: TCG's long
# tails move the means by more than the checks allow.
#  record-delay-storage: null_blk completing every I/O 1 ms late
#    (irqmode=2 completion_nsec=1000000): storage +1000 us
#  record-delay-network: netem delay 2 ms on lo; over loop-back the command and
#    the response each cross lo once: network +4000 us
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
	     s != "" && /^"p50_us":/ { v = $0; sub(/^[^:]*:/, "", v); gsub(/[^0-9.-]/, "", v); p[s] = v; s = "" }
	     END { printf "%s %s %s %s %s\n", p["host_block"], p["host_driver"], p["network"], p["target_driver"], p["storage"] }' \
		$TB_OUT/$1.json > $TB_OUT/$1.p50
}

# verdict NAME BASE DELAYED STAGE-INDEX INJECTED-US
verdict() {
	local name=$1 base=$2 del=$3 k=$4 inj=$5 res
	res=$(awk -v k=$k -v inj=$inj 'NR == 1 { for (i = 1; i <= 5; i++) b[i] = $i; next }
		{ bad = 0; for (i = 1; i <= 5; i++) { d[i] = $i - b[i]; if (i != k && (d[i] > 0.1 * inj || -d[i] > 0.1 * inj)) bad = 1 }
		  if (d[k] < 0.9 * inj || d[k] > 1.1 * inj) bad = 1
		  printf "%d block %+.1f driver %+.1f network %+.1f tdriver %+.1f storage %+.1f us", !bad, d[1], d[2], d[3], d[4], d[5] }' \
		$TB_OUT/$base.p50 $TB_OUT/$del.p50)
	tb_figure $name injected_us=$inj deltas="${res#? }"
	tb_check $name "${res%% *} == 1" "injected $inj us; p50 change per stage: ${res#? }"
}

tb_setup_tcp || { tb_result record-delay FAIL "NVMe/TCP setup failed"; exit 0; }
run base || { tb_result record-delay FAIL "baseline run failed"; exit 0; }
tb_netem 2ms || { tb_result record-delay-network FAIL "tc netem failed"; exit 0; }
if run netem; then verdict record-delay-network base netem 3 4000; else tb_result record-delay-network FAIL "netem run failed"; fi
tb_teardown
fast=$(tb_nullblk ntpfast 1) || { tb_result record-delay-storage FAIL "null_blk failed"; exit 0; }
# the same null_blk flavour (irqmode=2, timer) with ~0 delay as the baseline
tb_setup_tcp "$fast" || { tb_result record-delay-storage FAIL "setup failed"; exit 0; }
run fastblk || { tb_result record-delay-storage FAIL "baseline run failed"; exit 0; }
tb_teardown
slow=$(tb_nullblk ntpslow 1000000) || { tb_result record-delay-storage FAIL "null_blk with completion_nsec failed"; exit 0; }
tb_setup_tcp "$slow" || { tb_result record-delay-storage FAIL "setup failed"; exit 0; }
if run slowblk; then verdict record-delay-storage fastblk slowblk 5 1000; else tb_result record-delay-storage FAIL "delayed run failed"; fi
