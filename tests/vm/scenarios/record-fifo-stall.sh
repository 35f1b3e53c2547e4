# record-fifo-stall: `ntprof record -r both -s 2 -o FIFO` whose reader (cat
# into the guest's RAM) stops (SIGSTOP) for up to 4 s (below) of an 8 s QD1
# read load, with a ring of 512 KiB (NTPROF_RING_KIB). The recorder's writes
# to the fifo block while its reader sleeps; the file's writes go through the
# writer's own thread and its 8 MiB queue (docs/recording.md, "Files"), so the
# ring keeps being drained:
#   record-fifo-stall   no record lost (no "records lost (ring buffer full)"),
#                       exit 0, and the file the reader got is whole: as many
#                       records as the recorder says it wrote, no note of a
#                       cut or damaged file; and the pause held more records
#                       than a recorder without the writer's thread could
#                       (else the scenario shows nothing and says so)
# The arithmetic, at r records/s (-s 2 samples every second command and -r
# both gives each a host and a target record: about one record per I/O). A
# record takes 280 B of ring (272 B and its 8 B header), so 512 KiB hold
# 1872; the fifo holds 64 KiB (240 records). A recorder that writes in the
# draining thread (ntprof before the writer thread) holds besides only the
# block being filled, flushed at least once a second: at most min(r, 1024)
# records. It loses records in a pause of p seconds when
# p r > 1872 + 240 + min(r, 1024), a bound of 3136 records at most. With the
# writer thread the queue holds 30 blocks (30720 records) on top. TCG's rate
# differs by several times between machines and up to 2x between identical
# runs (tests/vm/README.md), so the pause is not a fixed time: the target
# drive's reads of the second before it give r (one record per read), and the
# pause lasts 15000 / r seconds, 4 at most: about 15000 records, half the
# queue, far above what the recorder without the thread holds.
# The pump drains the ring when it is half full (ring_wake_bytes,
# docs/hooks.md) or every 100 ms. The ring is not smaller because the pump
# is a thread of a guest whose two vCPUs take turns on one host thread
# (tests/vm/run.sh): while the reader catches up it can wait for the CPU far
# longer than on a real machine. Half of 1872 records is 300 ms at 3000
# records/s, a quarter of that for a ring of 128 KiB; the pause still holds
# several times the bound.
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
export NTPROF_RING_KIB=512
ntp_rec_start $name -r both -s 2 --offline -o /tmp/rec.fifo ||
	{ unset NTPROF_RING_KIB; kill $reader; tb_result $name FAIL "ntprof record did not start: $(tail -1 $TB_OUT/$name.err)"; exit 0; }
unset NTPROF_RING_KIB
# reads completed by the target's null_blk, one per host read (the host's
# multipath head, bio-based, counts none)
reads() { awk '{ print $1 }' /sys/block/${TB_BACKDEV#/dev/}/stat; }
( sleep 2; n0=$(reads); sleep 1; n1=$(reads)
  pause=$(awk -v r=$((n1 - n0)) 'BEGIN { p = r > 0 ? 15000 / r : 4; printf "%.2f", p < 4 ? p : 4 }')
  echo "$((n1 - n0)) $pause" > /tmp/rec.pause
  kill -STOP $reader; tb_log "fifo reader stopped for $pause s ($((n1 - n0)) reads in the second before)"; sleep $pause
  awk '/^VmRSS:/ { print $2 }' /proc/$NTP_REC_PID/status > /tmp/rec.rss
  kill -CONT $reader; tb_log "fifo reader goes on" ) &
pauser=$!
tb_load --rw randread --bs 4k --qd 1 --secs 8
wait $pauser
hwm=$(awk '/^VmHWM:/ { print $2 }' /proc/$NTP_REC_PID/status)
rss=$(cat /tmp/rec.rss)
read rate pause < /tmp/rec.pause || rate=none pause=none
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
rm -f /tmp/rec.fifo /tmp/rec.ntp /tmp/rec.csv /tmp/rec.rss /tmp/rec.pause
tb_figure $name lost=$lost records=$got claimed=$claimed bytes=$size ios=$TB_LOAD_IOS reads_per_s=$rate pause_s=$pause rss_paused_kib=$rss peak_rss_kib=$hwm
# what the pause held, and what a recorder without the writer's thread holds
held=$(awk -v r="$rate" -v p="$pause" 'BEGIN { printf "%d", r * p }')
bound=$(awk -v r="$rate" 'BEGIN { printf "%d", 1872 + 240 + (r < 1024 ? r : 1024) }')
tb_check $name "$rc == 0 && $lost == 0 && $got == $claimed && $notes == 0 && $got > 0 && $held > $bound" \
	"exit $rc, $lost records lost (ring buffer full), $got records in the file of $claimed written, dump notes $notes; $TB_LOAD_IOS I/Os, reader stopped $pause s at $rate reads/s: $held records, $bound without the writer's thread; RSS $rss KiB at the end of the pause, peak $hwm KiB"
