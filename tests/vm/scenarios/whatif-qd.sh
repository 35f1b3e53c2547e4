# whatif-qd: `ntprof report --what-if-qd` against real runs. A 4 KiB random
# read is recorded at QD 1 and 2, the model predicts QD 4, 8, 16 and 32 from
# those two recordings (docs/what-if.md), then each QD runs for real, recorded
# too (the probes' cost under TCG is part of every command, so every run pays
# it), and prediction and measurement are set side by side: IOPS (as the load
# generator counted them), mean and p99 end to end and each stage's mean (as
# ntprof measured them; whatif-qd-*.table in the results). A drive out of
# tags blocks nvmet's receive work; that wait counts in the storage stage
# (docs/backpressure.md), where the model's queue of 4 servers puts it: the
# null_blk case checks the storage stage's mean too.
#  whatif-qd-nullblk: the namespace on a null_blk with one hardware queue of 4
#    tags completing each I/O 20 ms late (irqmode=2): a drive of 4 servers,
#    given to the model (--what-if-servers storage=4), since QD 1 and 2 never
#    fill 4 servers and no recording can show how many there are. The rest of
#    the path costs about a millisecond of TCG's CPU per command, so at the
#    drive's 200 IOPS the two vCPUs stay far from saturation and the model's
#    assumptions hold: IOPS and mean within 15 % at every QD. Shorter delays
#    leave TCG's own lateness too large a part: with 2 ms the CPU saturated
#    first (the host's block layer alone grew to 0.6 ms at QD 4); with 10 ms,
#    nvmet's worker, blocked for a null_blk tag, woke late enough to leave
#    the drive idle for a tenth of the time in one run of two.
#  whatif-qd-loopback: the plain test bed (null_blk completing at once). Here
#    TCG's two vCPUs are the bottleneck, which no stage owns: the model fits
#    the growth it saw from QD 1 to 2 and the check names the stage whose
#    measured time departs most from the prediction at the highest QD, and
#    whether the model had it as a delay (its assumption broken) or as a queue
#    with too few or too many servers. It passes when the prediction holds
#    within 15 %, or when the stage named departs from its prediction by at
#    least half of the mean's miss at the highest QD, in either direction: the
#    queue the model fit in one stage may build in another (the host's block
#    layer, once the vCPUs saturate), so the stage it wrongly held the queue
#    in can depart against the mean's miss. It fails when the miss is spread
#    over the stages with none standing out (a uniform slowdown).
#  whatif-qd-hostq: the host's queues come from the recording (docs/ntp-format.md):
#    the count and size `ntprof dump --header` shows and the what-if JSON uses
#    ("from": "recording", no --what-if-tags given) equal the guest's sysfs.
# tb-timeout: 330
. /tb/ntprof-checks.sh

WI_SECS=4
WI_QDS="4 8 16 32"

# rec NAME QD: a run at QD recorded -r both, its report's JSON in NAME.json
rec() {
	ntp_rec_start $1 -r both -s 1 --offline -o $TB_OUT/$1.ntp || return 1
	tb_load --rw randread --bs 4k --qd $2 --secs $WI_SECS
	ntp_rec_stop INT || return 1
	ntprof report -j $TB_OUT/$1.json $TB_OUT/$1.ntp > $TB_OUT/$1.report 2>&1
}

# measured FILE.json: "rate mean p99 host_block host_driver network target_driver storage"
# of the first group
measured() {
	awk 'function num(s) { sub(/^[^:]*:/, "", s); gsub(/[^0-9.eE+-]/, "", s); return s + 0 }
	{ gsub(/^[ \t]+/, "") }
	/^"label":/ { ng++ } ng != 1 { next }
	/^"rate":/ { rate = num($0) }
	/^"latency_us":/ { lat = 1 } lat && /^"mean":/ { mean = num($0) } lat && /^"p99":/ { p99 = num($0); lat = 0 }
	/^"stages":/ { inst = 1 } /^"rows":/ { inst = 0 }
	inst && /^"stage":"/ { cur = $0; sub(/^"stage":"/, "", cur); sub(/",?$/, "", cur) }
	inst && cur != "" && /^"mean_us":/ { st[cur] = num($0); cur = "" }
	END { printf "%.1f %.3f %.3f %.3f %.3f %.3f %.3f %.3f\n", rate, mean, p99, st["host_block"],
	      st["host_driver"], st["network"], st["target_driver"], st["storage"] }' "$1"
}

# predicted TEXT QD: the same fields from the what-if table of `ntprof report`
# (a row: QD IOPS mean p99, then "mean/QD" per stage, then the saturated stage)
predicted() {
	awk -v q=$2 '/^ *QD +IOPS/ { t = 1; next } t && $1 == q {
		printf "%s %s %s", $2, $3, $4; for (i = 5; i <= 9; i++) { split($i, a, "/"); printf " %s", a[1] } print ""; exit }' "$1"
}

# stations TEXT: "stage:servers" of the what-if's station table, 0 = delay
stations() {
	awk '/^stage +service us/ { t = 1; next } t && /^saturates/ { exit }
	t { k = ($1 == "host" && $2 == "block") ? "host_block" : ($1 == "host") ? "host_driver" :
	    ($1 == "network") ? "network" : ($1 == "target") ? "target_driver" : "storage"
	    c = 0; if (match($0, / [0-9]+ servers? \(/)) { c = substr($0, RSTART + 1); sub(/ .*/, "", c) }
	    printf "%s:%s ", k, c }' "$1"
}

# one SETUP-NAME [what-if options]: record QD 1 and 2, predict, run each QD,
# write NAME.table (QD, then predicted / measured pairs) and set WI_WORST
# (largest relative miss of IOPS or mean), WI_BREAK (the stage whose measured
# mean departs most from its prediction at the highest QD, and how)
one() {
	local n=$1 q p m
	shift
	rec $n-qd1 1 || return 1
	rec $n-qd2 2 || return 1
	# the QDs the recordings ran at are given: under TCG the application's own
	# time per command is as long as the block layer's, so rate x mean reads
	# QD 2 as 1 (docs/what-if.md)
	# the host's tags come from the recording's header (checked by hostq_check)
	set -- --what-if-qd $(echo $WI_QDS | tr ' ' ,) --what-if-qd-was 2 --what-if-fit $TB_OUT/$n-qd1.ntp@1 \
		"$@" $TB_OUT/$n-qd2.ntp
	ntprof report "$@" > $TB_OUT/$n-whatif.txt 2>&1 || return 1
	ntprof report -j $TB_OUT/$n-whatif.json "$@" > /dev/null 2>&1
	: > $TB_OUT/$n.rows
	for q in $WI_QDS; do
		rec $n-qd$q $q || return 1
		p=$(predicted $TB_OUT/$n-whatif.txt $q)
		# IOPS as the application saw them (the recording's rate counts its
		# idle start and end); mean, p99 and stages as ntprof measured them
		m=$(measured $TB_OUT/$n-qd$q.json)
		echo "$q $p $TB_LOAD_IOPS ${m#* }" >> $TB_OUT/$n.rows
	done
	awk -v st="$(stations $TB_OUT/$n-whatif.txt)" '
	BEGIN { split("host_block host_driver network target_driver storage", key, " ")
		n = split(st, s, " "); for (i = 1; i <= n; i++) { split(s[i], kv, ":"); srv[kv[1]] = kv[2] }
		printf "%4s %17s %17s %17s", "QD", "IOPS pred/meas", "mean us", "p99 us"
		for (k = 1; k <= 5; k++) printf " %19s", key[k]; print "" }
	function rel(p, m) { return m > 0 ? (p - m) / m : 0 }
	function ab(x) { return x < 0 ? -x : x }
	{ printf "%4d %8.0f/%-8.0f %8.1f/%-8.1f %8.1f/%-8.1f", $1, $2, $10, $3, $11, $4, $12
	  for (k = 0; k < 5; k++) printf " %9.1f/%-9.1f", $(5 + k), $(13 + k); print ""
	  e = ab(rel($2, $10)); if (ab(rel($3, $11)) > e) e = ab(rel($3, $11)); if (e > worst) worst = e
	  e = ab(rel($9, $17)); if (e > worst_st) worst_st = e
	  last = $0 }
	END { split(last, f, " "); best = 0; bk = 0
	      for (k = 0; k < 5; k++) { d = f[13 + k] - f[5 + k]; if (ab(d) > ab(best)) { best = d; bk = k + 1 } }
	      how = srv[key[bk]] + 0 == 0 ? (best > 0 ? "a delay in the model, it grew with the load: it saturates" :
						 "a delay in the model, it shrank with the load") :
		    best > 0 ? "a queue of " srv[key[bk]] " in the model, slower than predicted (fewer servers, or service grew)" :
			       "a queue of " srv[key[bk]] " in the model, faster than predicted"
	      # how far the stage named departs, against the mean'"'"'s miss (either sign)
	      miss = f[11] - f[3]; ex = 0; if (ab(miss) > 0) ex = ab(best) / ab(miss)
	      printf "STORAGE %.4f\n", worst_st
	      printf "WORST %.4f\nEXPLAINS %.3f\nBREAK %s %+.1f us of the end-to-end miss %+.1f us at QD %d: %s\n", worst,
		     ex, key[bk], best, miss, f[1], how }' \
		$TB_OUT/$n.rows > $TB_OUT/$n.table
	cat $TB_OUT/$n.table
	WI_WORST=$(sed -n 's/^WORST //p' $TB_OUT/$n.table)
	WI_BREAK=$(sed -n 's/^BREAK //p' $TB_OUT/$n.table)
	WI_EXPLAINS=$(sed -n 's/^EXPLAINS //p' $TB_OUT/$n.table)
	WI_STORAGE=$(sed -n 's/^STORAGE //p' $TB_OUT/$n.table)
}

# the host's queue device in sysfs: the controller's path (the multipath head
# is bio-based and has no tags of its own)
host_qdir() {
	local b=${TB_DEV#/dev/} d
	d=$(ls -d /sys/block/${b%n*}c*n${b##*n} 2>/dev/null | head -1)
	echo ${d:-/sys/block/$b}
}
# its tags per hardware queue and its hardware queues, as sysfs says
host_tags() { cat $(host_qdir)/queue/nr_requests 2>/dev/null || echo 0; }
host_hwq() { ls -d $(host_qdir)/mq/[0-9]* 2>/dev/null | wc -l; }

# hostq_check NAME: the queues recorded in NAME-qd2.ntp's header (dump
# --header) and used by the what-if (NAME-whatif.json) against sysfs
hostq_check() {
	local n=$1 t q hdr js
	t=$(host_tags) q=$(host_hwq)
	hdr=$(ntprof dump --header $TB_OUT/$n-qd2.ntp | grep "^host_queues: ${TB_DEV#/dev/} ")
	js=$(tr -d ' \n' < $TB_OUT/$n-whatif.json | grep -o '"host_tags":{[^}]*}' | head -1)
	echo "sysfs: $q hardware queues x $t tags; header: $hdr; what-if: $js" > $TB_OUT/$n-hostq.txt
	tb_figure whatif-qd-hostq setup=$n tags=$t hw_queues=$q
	js=${js%,\"before_knee\":*}
	if [ "$t" -gt 0 ] && [ "$hdr" = "host_queues: ${TB_DEV#/dev/} $q hardware queue$([ $q = 1 ] || echo s) x $t tags" ] &&
		[ "$js" = "\"host_tags\":{\"tags\":$t,\"hw_queues\":$q,\"from\":\"recording\"" ]; then
		tb_result whatif-qd-hostq-$n PASS "recorded ${TB_DEV#/dev/}: $q hardware queue(s) x $t tags, as sysfs; the what-if took them from the recording"
	else
		tb_result whatif-qd-hostq-$n FAIL "sysfs $q x $t; $(cat $TB_OUT/$n-hostq.txt)"
	fi
}

# --- null_blk: 4 tags, 20 ms ---
tb_modules base
d=/sys/kernel/config/nullb/wiq
mkdir $d && echo 1024 > $d/size && echo 1 > $d/submit_queues && echo 4 > $d/hw_queue_depth &&
	echo 2 > $d/irqmode && echo 20000000 > $d/completion_nsec && echo 1 > $d/power ||
	{ tb_result whatif-qd-nullblk FAIL "null_blk with 4 tags and a 20 ms completion failed"; exit 0; }
dev=/dev/wiq
[ -b $dev ] || dev=/dev/nullb$(cat $d/index)
if tb_setup_tcp $dev; then
	WI_TAGS=$(host_tags)
	if one nullblk --what-if-servers storage=4; then
		hostq_check nullblk
		tb_figure whatif-qd-nullblk worst_rel_miss=$WI_WORST tags=$WI_TAGS
		tb_check whatif-qd-nullblk "$WI_WORST <= 0.15" \
			"IOPS and mean within $(awk -v w=$WI_WORST 'BEGIN { printf "%.1f", 100 * w }') % at QD $WI_QDS (storage 4 servers given; largest stage miss: $WI_BREAK)"
		# the storage stage itself: the wait for the drive's tags counts in
		# it (docs/backpressure.md), so it holds the queue the model puts there
		tb_check whatif-qd-nullblk-storage "$WI_STORAGE <= 0.15" \
			"storage stage's mean within $(awk -v w=$WI_STORAGE 'BEGIN { printf "%.1f", 100 * w }') % of the prediction at QD $WI_QDS"
	else
		tb_result whatif-qd-nullblk FAIL "a run or the what-if report failed (see $TB_SCENARIO/)"
	fi
else
	tb_result whatif-qd-nullblk FAIL "NVMe/TCP setup on $dev failed"
fi
tb_teardown
TB_BACKDEV=

# --- the plain loopback target ---
if tb_setup_tcp; then
	WI_TAGS=$(host_tags)
	if one loopback; then
		hostq_check loopback
		tb_figure whatif-qd-loopback worst_rel_miss=$WI_WORST
		if tb_fcmp "$WI_WORST <= 0.15"; then
			tb_result whatif-qd-loopback PASS "IOPS and mean within $(awk -v w=$WI_WORST 'BEGIN { printf "%.1f", 100 * w }') % at QD $WI_QDS"
		else
			# the stage named must carry at least half of the mean's miss
			tb_check whatif-qd-loopback "$WI_EXPLAINS >= 0.5" \
				"missed by $(awk -v w=$WI_WORST 'BEGIN { printf "%.0f", 100 * w }') %; the assumption broke at $WI_BREAK"
		fi
	else
		tb_result whatif-qd-loopback FAIL "a run or the what-if report failed (see $TB_SCENARIO/)"
	fi
else
	tb_result whatif-qd-loopback FAIL "NVMe/TCP setup failed"
fi
