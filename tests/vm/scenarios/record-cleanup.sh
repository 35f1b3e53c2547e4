# record-cleanup: after ntprof ends - normally (-d), by SIGTERM, by SIGKILL -
# `bpftool prog show` lists none of its programs (its links die with its file
# descriptors; nothing is pinned). The file of a normal and of a SIGTERM'd run
# is whole (ntprof report reads it without a note about a cut file).
# tb-timeout: 240
. /tb/ntprof-checks.sh
tb_setup_tcp || { tb_result record-cleanup FAIL "NVMe/TCP setup failed"; exit 0; }
for how in normal SIGTERM SIGKILL; do
	name=record-cleanup-$how
	if [ $how = normal ]; then args="-d 3"; else args=""; fi
	ntp_rec_start $name -r both -s 10 --offline $args -o $TB_OUT/$name.ntp ||
		{ tb_result $name FAIL "ntprof record did not start"; continue; }
	n_live=$(bpftool prog show | grep -c ' name ntp_')
	tb_load --rw randread --bs 4k --qd 1 --secs 2
	case $how in
	normal) wait $NTP_REC_PID; rc=$? ;;
	SIGTERM) ntp_rec_stop TERM; rc=$? ;;
	SIGKILL) ntp_rec_stop KILL; rc=0 ;;
	esac
	if ntp_no_progs; then gone=1; else gone=0; fi
	whole=1
	if [ $how != SIGKILL ]; then
		ntprof report $TB_OUT/$name.ntp > $TB_OUT/$name.report 2>&1 || whole=0
		grep -q '^note:' $TB_OUT/$name.report && whole=0
	fi
	tb_check $name "$rc == 0 && $gone == 1 && $whole == 1 && $n_live > 0" \
		"$n_live ntp_ programs while recording, $(bpftool prog show | grep -c ' name ntp_') after; exit status $rc; file whole: $whole"
done
