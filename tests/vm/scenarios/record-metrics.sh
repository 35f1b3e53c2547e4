# record-metrics: `ntprof record --metrics FILE` (docs/recording.md,
# "Prometheus") during 4 KiB random reads over NVMe/TCP, -r both -s 10 -i 1.
# While the load runs, the file is read again and again: each read must be a
# whole, well-formed file (prom_check), since it is replaced by a rename,
# never rewritten in place; a read during the load has the five stages'
# latency and queue depth of the read group (gauges of an interval; an
# interval without commands has none). After the recording, the kernel's
# command counter (ntprof_commands_total) equals the load generator's I/O
# count.
# tb-timeout: 240
. /tb/ntprof-checks.sh
. /tb/prom.sh
name=record-metrics
m=$TB_OUT/ntprof.prom
tb_setup_tcp || { tb_result $name FAIL "NVMe/TCP setup failed"; exit 0; }
ntp_rec_start $name -r both -s 10 -i 1 --offline --metrics $m || { tb_result $name FAIL "recorder not ready"; exit 0; }
# a reader beside the load, as node_exporter would be
( n=0 bad=0
  while [ ! -e $TB_OUT/reader.stop ]; do
	cp $m $TB_OUT/read.prom 2>/dev/null && n=$((n + 1))
	prom_check $TB_OUT/read.prom > $TB_OUT/read.err 2>&1 || { bad=$((bad + 1)); cp $TB_OUT/read.prom $TB_OUT/bad.prom; }
	grep -q '^ntprof_stage_latency_seconds' $TB_OUT/read.prom && cp $TB_OUT/read.prom $TB_OUT/during.prom
	sleep 0.1
  done
  echo "$n $bad" > $TB_OUT/reads.txt ) &
reader=$!
tb_load --rw randread --bs 4k --qd 4 --secs 5
sleep 1.5
touch $TB_OUT/reader.stop
wait $reader
ntp_rec_stop; rc=$?
set -- $(cat $TB_OUT/reads.txt)
reads=${1:-0} badreads=${2:-0}
tb_check $name-atomic "$reads >= 5 && $badreads == 0" \
	"$reads reads of $m during the run, $badreads not whole or not well-formed $(cat $TB_OUT/read.err 2>/dev/null | head -1)"
prom_check $m > $TB_OUT/check.txt 2>&1; pc=$?
g='namespace="'${TB_DEV#/dev/}'",io_type="read",size_bytes="4096"'
stages=$(grep -c "^ntprof_stage_latency_seconds{role=\"both\",transport=\"tcp\",$g,stage=\"[a-z_]*\",statistic=\"mean\"}" $TB_OUT/during.prom)
qds=$(grep -c "^ntprof_stage_queue_depth{role=\"both\",transport=\"tcp\",$g,stage=\"[a-z_]*\",method=\"little\"}" $TB_OUT/during.prom)
cmds=$(sed -n "s/^ntprof_commands_total{role=\"both\",transport=\"tcp\",$g} //p" $m)
tb_check $name "$rc == 0 && $pc == 0 && $stages == 5 && $qds == 5 && ${cmds:-0} == $TB_LOAD_IOS" \
	"exit $rc; the final file well-formed: $pc ($(head -1 $TB_OUT/check.txt)); during the load $stages stage latencies, $qds queue depths; commands_total ${cmds:-none} against the load's $TB_LOAD_IOS I/Os"
