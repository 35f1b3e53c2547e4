# record-session: --session nvmeXnY records the commands of that namespace
# (which run on its hidden multipath path nvmeXcYnZ) and only those; a name
# that is no block device is refused naming it.
# tb-timeout: 200
. /tb/ntprof-checks.sh
tb_setup_tcp || { tb_result record-session FAIL "NVMe/TCP setup failed"; exit 0; }
dev=${TB_DEV#/dev/}
ntp_rec_start session --session $dev -s 1 --offline -o $TB_OUT/session.ntp ||
	{ tb_result record-session FAIL "did not start: $(tail -1 $TB_OUT/session.err)"; exit 0; }
tb_load --rw randread --bs 4k --qd 1 --secs 3
ntp_rec_stop INT
n=$(ntprof dump $TB_OUT/session.ntp | awk -F, -v d=$dev '$1 == "host" && $10 == d' | wc -l)
other=$(ntprof dump $TB_OUT/session.ntp | awk -F, -v d=$dev 'NR > 1 && $10 != d' | wc -l)
ntprof record --session nvme9n9 -d 1 > $TB_OUT/bad.txt 2>&1
rc=$?
tb_check record-session "$n >= $TB_LOAD_IOS && $TB_LOAD_IOS > 0 && $other == 0 && $rc != 0" \
	"--session $dev: $n host records for $TB_LOAD_IOS I/Os, $other of other disks; nvme9n9: $(cat $TB_OUT/bad.txt)"
