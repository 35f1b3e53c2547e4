# record-fifo-stall: `ntprof record -r both -s 2 -o FIFO` whose reader (cat into
# the guest's RAM) stops (SIGSTOP) for 3 s of an 8 s QD1 read load, with a ring
# of 128 KiB (NTPROF_RING_KIB). The recorder's writes to the fifo block while
# its reader sleeps; the file's writes go through the writer's own thread and
# its 8 MiB queue (docs/recording.md, "Files"), so the ring keeps being drained:
#   record-fifo-stall   no record lost (no "records lost (ring buffer full)"),
#                       exit 0, and the file the reader got is whole: as many
#                       records as the recorder says it wrote, no note of a
#                       cut or damaged file
# The arithmetic, at r records/s (-s 2 samples every second command and -r
# both gives each a host and a target record: about one record per I/O). A
# record takes 280 B of ring (272 B and its 8 B header), so 128 KiB hold 468;
# the fifo holds 64 KiB (240 records). A recorder that writes in the draining
# thread (ntprof before the writer thread) holds besides only the block being
# filled, flushed at least once a second: at most min(r, 1024) records. It
# loses records when 3r > 468 + 240 + min(r, 1024), at any r above 354. With
# the writer thread the queue holds 30 blocks (30720 records) on top: the
# pause is covered up to r of about 10000. TCG runs about 1000 IOPS and
# identical runs differ by up to 2x (tests/vm/README.md), well inside both.
# The pump drains the ring when it is half full (ring_wake_bytes,
# docs/hooks.md) or every 100 ms, so the small ring alone loses nothing while
# the file flows.
# Figures: the recorder's RSS at the end of the pause (the queue full of what
# the reader did not take) and its peak.
# tb-timeout: 240
. /tb/ntprof-checks.sh
name=record-fifo-stall
tb_setup_tcp || { tb_result $name FAIL "NVMe/TCP setup failed"; exit 0; }
rm -f /tmp/rec.fifo /tmp/rec.ntp
mkfifo /tmp/rec.fifo || { tb_result $name FAIL "mkfifo failed"; exit 0; }
# the reader opens the fifo first: the recorder's open for writing waits for it
cat /tmp/rec.fifo > /tmp/rec.ntp &
reader=$!
export NTPROF_RING_KIB=128
ntp_rec_start $name -r both -s 2 --offline -o /tmp/rec.fifo ||
	{ unset NTPROF_RING_KIB; kill $reader; tb_result $name FAIL "ntprof record did not start: $(tail -1 $TB_OUT/$name.err)"; exit 0; }
unset NTPROF_RING_KIB
( sleep 3; kill -STOP $reader; tb_log "fifo reader stopped"; sleep 3
  awk '/^VmRSS:/ { print $2 }' /proc/$NTP_REC_PID/status > /tmp/rec.rss
  kill -CONT $reader; tb_log "fifo reader goes on" ) &
pauser=$!
tb_load --rw randread --bs 4k --qd 1 --secs 8
wait $pauser
hwm=$(awk '/^VmHWM:/ { print $2 }' /proc/$NTP_REC_PID/status)
rss=$(cat /tmp/rec.rss)
ntp_rec_stop INT
rc=$?
wait $reader
lost=$(sed -n 's/.*kernel side: \([0-9]*\) records lost.*/\1/p' $TB_OUT/$name.err)
lost=${lost:-0}
claimed=$(sed -n 's/.*: \([0-9]*\) records written to .*/\1/p' $TB_OUT/$name.err)
claimed=${claimed:--1}
ntprof dump /tmp/rec.ntp > /tmp/rec.csv 2> $TB_OUT/$name.dump.err
got=$(($(wc -l < /tmp/rec.csv) - 1))
notes=$(grep -c . $TB_OUT/$name.dump.err)
size=$(wc -c < /tmp/rec.ntp)
tb_log "ntprof record exited $rc; stderr: $(tr '\n' '|' < $TB_OUT/$name.err); dump: $(tr '\n' '|' < $TB_OUT/$name.dump.err)"
rm -f /tmp/rec.fifo /tmp/rec.ntp /tmp/rec.csv /tmp/rec.rss
tb_figure $name lost=$lost records=$got claimed=$claimed bytes=$size ios=$TB_LOAD_IOS rss_paused_kib=$rss peak_rss_kib=$hwm
tb_check $name "$rc == 0 && $lost == 0 && $got == $claimed && $notes == 0 && $got > 0" \
	"exit $rc, $lost records lost (ring buffer full), $got records in the file of $claimed written, dump notes $notes; $TB_LOAD_IOS I/Os, RSS $rss KiB at the end of the pause, peak $hwm KiB"
