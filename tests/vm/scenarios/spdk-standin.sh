# spdk-standin: the SPDK path (USDT probes, the stand-in of tests/tools) on a
# kernel where fentry and kprobes exist, which the machine that runs make
# check lacks: probe lists the socket hooks ok in both flavours and loads; a
# target recording of the stand-in has its records and leaves the variable 0;
# and one recorder with the kernel's NVMe/TCP host hooks (-r both, fentry)
# and the stand-in as the SPDK target records both sides at once.
# tb-timeout: 200
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
ntp_no_progs && left=0 || left=1
tb_check spdk-cleanup "$left == 0" "programs left attached after the recordings: $left"
