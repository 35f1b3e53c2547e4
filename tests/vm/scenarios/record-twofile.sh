# record-twofile: the host and the target recorded by two ntprof processes
# into two files (-r host -o h.ntp, -r target -o t.ntp), joined afterwards by
# `ntprof report h.ntp t.ntp`, give the report of a third process recording
# -r both at the same time: exactly the same commands (same -s, same hash), all
# joined, the end-to-end mean within 5 % and every stage's mean within 10 % of
# the end-to-end mean (2 % for the end to end was once exceeded). Not closer: on every hook each process's program reads
# its own clock, one program after the other, and under TCG one program run
# costs 5-150 us with three recorders and the load on two vCPUs, which moves
# time between neighbouring stages (their sum stays). The differences are
# figures of the run.
# tb-timeout: 300
. /tb/ntprof-checks.sh
tb_setup_tcp || { tb_result record-twofile FAIL "NVMe/TCP setup failed"; exit 0; }
ntp_rec_start tgt -r target -s 10 --offline -o $TB_OUT/t.ntp || { tb_result record-twofile FAIL "target recorder did not start"; exit 0; }
tpid=$NTP_REC_PID
ntp_rec_start both -r both -s 10 --offline -o $TB_OUT/b.ntp || { tb_result record-twofile FAIL "-r both recorder did not start"; exit 0; }
bpid=$NTP_REC_PID
ntp_rec_start hst -r host -s 10 --offline -o $TB_OUT/h.ntp || { tb_result record-twofile FAIL "host recorder did not start"; exit 0; }
tb_load --rw randread --bs 4k --qd 1 --secs 10
ntp_rec_stop INT; NTP_REC_PID=$bpid; ntp_rec_stop INT; NTP_REC_PID=$tpid; ntp_rec_stop INT
ntprof report -j $TB_OUT/two.json $TB_OUT/h.ntp $TB_OUT/t.ntp > $TB_OUT/two.report 2>&1
ntprof report -j $TB_OUT/one.json $TB_OUT/b.ntp > $TB_OUT/one.report 2>&1
ntp_json_groups $TB_OUT/two.json > $TB_OUT/two.groups
ntp_json_groups $TB_OUT/one.json > $TB_OUT/one.groups
grep 'matched' $TB_OUT/two.report | tail -1 > $TB_OUT/join-line.txt
ok=$(awk -F'|' '
	NR == FNR { if ($1 ~ /^records /) { split($1, a, " "); rh1 = a[2]; rm1 = a[4] } else { for (i = 2; i <= 8; i++) one[$1, i] = $i; g[$1] = 1 }; next }
	$1 ~ /^records / { split($1, a, " "); rh2 = a[2]; rm2 = a[4]; next }
	{ for (i = 3; i <= 8; i++) { d = $i - one[$1, i]; if (d < 0) d = -d; lim = (i == 3 ? 0.05 : 0.10) * one[$1, 3]; if (d > lim) bad++ }
	  if ($2 != one[$1, 2]) bad++; n++ }
	END { print (n > 0 && !bad && rh1 == rh2 && rm1 == rh1 && rm2 == rh2 && rh1 > 0) ? 1 : 0 }' $TB_OUT/one.groups $TB_OUT/two.groups)
tb_figure record-twofile one="$(tr '\n' ' ' < $TB_OUT/one.groups)" two="$(tr '\n' ' ' < $TB_OUT/two.groups)"
tb_check record-twofile "$ok == 1" "$(cat $TB_OUT/join-line.txt); two files: $(grep -v records $TB_OUT/two.groups | head -1); one file: $(grep -v records $TB_OUT/one.groups | head -1)"
