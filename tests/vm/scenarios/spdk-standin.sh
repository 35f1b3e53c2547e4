# spdk-standin: the SPDK path (USDT probes, the stand-in of tests/tools) on a
# kernel where fentry and kprobes exist, which the machine that runs make
# check lacks: probe lists the socket hooks ok in both flavours and loads; a
# target recording of the stand-in has its records and leaves the variable 0;
# and one recorder with the kernel's NVMe/TCP host hooks (-r both, fentry)
# and the stand-in as the SPDK target records both sides at once. Then the
# socket hooks: the stand-in with --sock moves each command's capsule and
# answer over loopback TCP; as target and as host, the receive path and the
# target's send come from the kernel's socket calls, are plausible, and the
# components still sum to the end to end.
# tb-timeout: 300
. /tb/ntprof-checks.sh
S=/opt/standin/bin/spdk-standin
export LD_LIBRARY_PATH=/opt/standin/lib
[ -x $S ] || { tb_result spdk-standin FAIL "$S missing from the initramfs (make spdk-standin)"; exit 0; }
$S -r target > $TB_OUT/standin.out 2> $TB_OUT/standin.err &
si=$!
sleep 1
ntprof probe -r target --spdk-target $S > $TB_OUT/probe.txt 2>&1
rc=$?
cat $TB_OUT/probe.txt
sock_ok=$(grep -cE '^ok +ntp_s_(recvmsg|copy|sendmsg)_(fe|kp) ' $TB_OUT/probe.txt)
tb_check spdk-probe "$rc == 0 && $sock_ok == 6 && $(grep -c '^load: ok$' $TB_OUT/probe.txt) == 1 && $(grep -c "^running processes: $si (sampling variable at 0x" $TB_OUT/probe.txt) == 1" \
	"exit $rc, socket hooks ok: $sock_ok of 6, $(grep '^running processes' $TB_OUT/probe.txt)"

ntprof record -r target --spdk-target $S -s 10 -d 3 --offline -o $TB_OUT/target.ntp > $TB_OUT/record.txt 2>&1
rc=$?
n=$(ntprof dump $TB_OUT/target.ntp 2>/dev/null | tail -n +2 | grep -c '^target,.*,spdk,')
kill -USR1 $si
sleep 1
v=$(grep '^sampling' $TB_OUT/standin.out | tail -1 | cut -d' ' -f2)
tb_check spdk-record "$rc == 0 && $n > 50 && $v == 0" \
	"exit $rc, $n SPDK target records in 3 s at -s 10, the variable after: $v; $(grep -m1 '^storage (SPDK' $TB_OUT/record.txt | tr -s ' ')"

# kernel host hooks and SPDK target probes in one recorder
if tb_setup_tcp; then
	# loading both skeletons takes 15 s and more under TCG: the load outlasts them
	tb_load_bg --rw randread --bs 4k --qd 1 --secs 40
	ntprof record -r both --spdk-target $S -s 10 -d 3 --offline -o $TB_OUT/both.ntp > $TB_OUT/both.txt 2>&1
	rc=$?
	tb_load_wait
	h=$(ntprof dump $TB_OUT/both.ntp 2>/dev/null | grep -c '^host,.*,linux,')
	t=$(ntprof dump $TB_OUT/both.ntp 2>/dev/null | grep -c '^target,.*,spdk,')
	tb_check spdk-mixed-collector "$rc == 0 && $h > 10 && $t > 50" \
		"-r both --spdk-target: exit $rc, $h kernel host records, $t SPDK target records; $(grep -m1 'hooks:' $TB_OUT/both.txt)"
	tb_teardown
else
	tb_result spdk-mixed-collector FAIL "NVMe/TCP setup failed"
fi
kill $si
wait $si

# split: records whose receive path came from the socket hooks (flags bit 4)
split_of() {
	ntprof dump "$1" 2>/dev/null | awk -F, -v side="$2" 'NR > 1 && $1 == side {
		n++; f = $15; sub(/^0x/, "", f); d = length(f) >= 2 ? substr(f, length(f) - 1, 1) : "0"
		if (index("13579bdf", d)) s++ } END { printf "%d %d", s, n }'
}
# mean of a component of the first group's --detail table
comp() { awk -v c="$2" 'index($0, c) == 1 { print $(NF-3); exit }' "$1"; }
# |sum of the first group's component means - end to end| in us, and how many
comp_sum() {
	awk '/^component / { on = 1; next } on && /^end to end/ { e = $(NF-3); exit }
	     on && NF > 5 { s += $(NF-3); k++ } END { d = s - e; if (d < 0) d = -d; printf "%.3f %d", d, k }' "$1"
}
# the target again with --kprobes (the kprobe twins of the socket hooks),
# and at queue depth 8: capsules wait in the socket, one read carries several
for run in target host target-kprobe target-qd8; do
	role=${run%%-*}
	fl=fentry qd=1
	[ $run = target-kprobe ] && fl=kprobe
	[ $run = target-qd8 ] && qd=8
	$S -r $role --sock --qd $qd > $TB_OUT/sock-$run.out 2> $TB_OUT/sock-$run.err &
	si=$!
	sleep 1
	ntprof record -r $role --spdk-$role $S -s 2 -d 3 --offline $([ $fl = kprobe ] && echo --kprobes) \
		-o $TB_OUT/sock-$run.ntp > $TB_OUT/sock-$run.txt 2>&1
	rc=$?
	kill $si
	wait $si
	ntprof report --detail $TB_OUT/sock-$run.ntp > $TB_OUT/sock-$run.rep 2>&1
	cat $TB_OUT/sock-$run.rep
	set -- $(split_of $TB_OUT/sock-$run.ntp $role)
	sp=$1 n=$2
	set -- $(comp_sum $TB_OUT/sock-$run.rep)
	gap=$1 k=$2
	rp=$(comp $TB_OUT/sock-$run.rep "network: $role receive path")
	hooked=$(grep -c "its socket calls hooked ($fl)" $TB_OUT/sock-$run.txt)
	if [ $role = target ]; then
		# the stand-in writes its answer 20 us (slept) after queueing it
		cp=$(comp $TB_OUT/sock-$run.rep "target driver, completion")
		extra="&& $(awk "BEGIN{print (${cp:-0} >= 15 && ${cp:-0} < 20000)}") == 1"
		what="target driver, completion ${cp:-?} us (the send after a 20 us flush)"
	else
		# the stand-in writes its capsule 20 us (slept) after queueing it
		cs=$(comp $TB_OUT/sock-$run.rep "host driver, submission")
		extra="&& $(awk "BEGIN{print (${cs:-0} >= 15 && ${cs:-0} < 20000)}") == 1"
		what="host driver, submission ${cs:-?} us (the send after a 20 us flush), completion $(comp $TB_OUT/sock-$run.rep "host driver, completion") us"
	fi
	tb_check spdk-sock-$run "$rc == 0 && $hooked == 1 && $n > 50 && $sp * 100 >= $n * 95 && $(awk "BEGIN{print (${rp:-0} > 0 && ${rp:-0} < 20000)}") == 1 && $(awk "BEGIN{print ($gap <= 0.005 * ($k + 1))}") == 1 $extra" \
		"exit $rc, hooked ($fl): $hooked, $sp of $n records split by the socket hooks, receive path ${rp:-?} us, $what, |sum of $k components - end to end| $gap us"
done
ntp_no_progs && left=0 || left=1
tb_check spdk-cleanup "$left == 0" "programs left attached after the recordings: $left"
