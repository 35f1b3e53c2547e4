# record-write-error: `ntprof record -o FILE` on a file system that fills up
# (a 64 KiB tmpfs: the header fits, the records of a -s 1 recording do not).
#   record-write-error   exit status non-zero; stderr names the file and the
#                        cause (ENOSPC) in one line and never claims "N records
#                        written"; the report on stdout is marked PARTIAL on
#                        its first line and in a note, not printed as if whole
# tb-timeout: 200
. /tb/ntprof-checks.sh
tb_setup_tcp || { tb_result record-write-error FAIL "NVMe/TCP setup failed"; exit 0; }
mkdir -p /tmp/full && mount -t tmpfs -o size=64k tmpfs /tmp/full ||
	{ tb_result record-write-error FAIL "cannot mount a small tmpfs"; exit 0; }
name=record-write-error
ntp_rec_start $name -r host -s 1 --offline -o /tmp/full/rec.ntp ||
	{ tb_result $name FAIL "ntprof record did not start: $(tail -1 $TB_OUT/$name.err)"; umount /tmp/full; exit 0; }
tb_load --rw randread --bs 4k --qd 8 --secs 4
# the recorder stops by itself at the error; SIGINT if it did not
i=0
while kill -0 $NTP_REC_PID 2>/dev/null && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
ntp_rec_stop INT
rc=$?
tb_log "ntprof record exited $rc; stderr: $(tr '\n' '|' < $TB_OUT/$name.err)"
tb_log "stdout head: $(head -3 $TB_OUT/$name.out | tr '\n' '|')"
errs=$(grep -c 'rec.ntp: writing records failed: No space left on device' $TB_OUT/$name.err)
claims=$(grep -c 'records written to /tmp/full/rec.ntp$' $TB_OUT/$name.err)
first=$(head -1 $TB_OUT/$name.out | grep -c '^PARTIAL REPORT')
note=$(grep -c '^note: PARTIAL' $TB_OUT/$name.out)
size=$(wc -c < /tmp/full/rec.ntp)
umount /tmp/full
tb_check $name "$rc != 0 && $errs == 1 && $claims == 0 && $first == 1 && $note == 1" \
	"exit $rc, error lines $errs, 'records written' claims $claims, PARTIAL first line $first, note $note; file $size bytes; $TB_LOAD_IOS I/Os"
