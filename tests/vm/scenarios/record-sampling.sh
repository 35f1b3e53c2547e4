# record-sampling: `ntprof record -r both -s 10` (the default hook flavour) on
# real NVMe/TCP while the load generator runs 4 KiB random reads at QD8. Checks:
#   record-sampling-count   the kernel's exact command totals (the report's
#                           "commands", counted on every I/O, sampled or not)
#                           equal the load generator's I/O count, plus at most
#                           a handful (I/O of the kernel's own: partition scan),
#                           counted in 4 KiB I/Os (two random reads the block
#                           layer merged are one 8 KiB command, as in a CI run)
#   record-sampling-rate    the sampled host records are one in 10: within 5
#                           standard deviations of binomial(ios, 1/10)
#   record-sampling-join    every sampled host record joined with its target's
#   record-sampling-sum     the five stage means add up to the end-to-end mean
# The same at QD1 (record-sampling-qd1-*). record-sampling-lockup: no soft
# lockup, hung task or RCU stall in dmesg (a soft lockup was seen once with
# ntprof-top -s 10 under fentry at QD1); the scenario's timeout catches a hang.
# tb-timeout: 360
. /tb/ntprof-checks.sh
tb_setup_tcp || { tb_result record-sampling FAIL "NVMe/TCP setup failed"; exit 0; }

run_one() { # NAME ntp-load options...
	local name=$1 rc cmds kios rh rt rm line label recs e2e hb hd net td st p50 sum ios expect var sd
	shift
	ntp_rec_start $name -r both -s 10 --offline -o $TB_OUT/$name.ntp -j $TB_OUT/$name.json ||
		{ tb_result $name FAIL "ntprof record did not start: $(tail -1 $TB_OUT/$name.err)"; return; }
	tb_load "$@" --secs 8
	ntp_rec_stop INT
	rc=$?
	tb_log "ntprof record exited $rc: $(tr '\n' ' ' < $TB_OUT/$name.err)"
	ntp_json_groups $TB_OUT/$name.json > $TB_OUT/$name.groups
	# the kernel's exact totals: every group's commands, and the 4 KiB I/Os
	# they carry (ntp_json_qd's bytes)
	set -- $(ntp_json_qd $TB_OUT/$name.json | head -1)
	cmds=${7:-0} kios=$(( ${6:-0} / 4096 ))
	set -- $(grep '^records ' $TB_OUT/$name.groups)
	rh=$2 rt=$3 rm=$4
	line=$(grep -v '^records ' $TB_OUT/$name.groups | sort -t'|' -k2 -n | tail -1)
	IFS='|' read -r label recs e2e hb hd net td st p50 <<EOT
$line
EOT
	sum=$(awk "BEGIN{printf \"%.3f\", $hb+$hd+$net+$td+$st}")
	ios=$TB_LOAD_IOS
	expect=$(awk "BEGIN{printf \"%.1f\", $ios / 10}")
	# binomial(ios, 1/10): variance ios x 0.1 x 0.9 (the check compares
	# squares; sd for the message)
	var=$(awk "BEGIN{printf \"%.3f\", $ios * 0.09}")
	sd=$(tb_sqrt $var %.2f)
	tb_figure $name ios=$ios commands=$cmds host=$rh target=$rt matched=$rm expect=$expect sd=$sd \
		e2e_us=$e2e load_mean_us=$TB_LOAD_MEAN_US
	tb_check $name-count "$rc == 0 && $ios > 0 && $kios >= $ios && $kios <= $ios + 8 && $cmds <= $kios" \
		"kernel counted $cmds commands of $kios 4 KiB I/Os, load generator $ios I/Os"
	tb_check $name-rate "$rh > 0 && ($rh - $expect) * ($rh - $expect) <= 25 * $var" \
		"$rh sampled host records of $ios I/Os: expected $expect, sd $sd, off by $(awk "BEGIN{printf \"%.2f\", ($rh - $expect) / $sd}") sd (bound 5)"
	tb_check $name-join "$rh > 0 && $rm == $rh" "$rh host records, $rt target, $rm joined"
	tb_check $name-sum "$rh > 0 && ($sum - $e2e) < 0.01 && ($e2e - $sum) < 0.01" \
		"stages $hb + $hd + $net + $td + $st = $sum us, end to end $e2e us"
}

run_one record-sampling --rw randread --bs 4k --qd 8
# QD1: the load of the one soft lockup seen (ntprof-top -s 10 under fentry)
run_one record-sampling-qd1 --rw randread --bs 4k --qd 1
lockup=$(dmesg 2>/dev/null | grep -c -i 'soft lockup\|hung task\|rcu.*stall')
tb_figure record-sampling soft_lockups=$lockup
tb_check record-sampling-lockup "$lockup == 0" "$lockup soft lockup / hung task / RCU stall messages in dmesg"
