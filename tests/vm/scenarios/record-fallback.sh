# record-fallback: the attach deadline of the attach policy (docs/recording.md). With a deadline
# (--attach-timeout 0.001) that attaching fentry programs cannot meet, record
# says why, abandons the fentry object (its attach threads destroy whatever
# they attached when they return), loads the kprobe flavour and records: every
# host record joined, stages summing to end to end. While it records, no
# fentry/fexit (tracing) link of ntprof is left; after it exits, no program.
# The deadline is forced by the option here: the test bed has no thread that
# really holds a trampoline update up for 10 s.
# tb-timeout: 240
. /tb/ntprof-checks.sh
name=record-fallback
tb_setup_tcp || { tb_result $name FAIL "NVMe/TCP setup failed"; exit 0; }
ntp_rec_start $name -r both -s 1 --offline --attach-timeout 0.001 -o $TB_OUT/$name.ntp ||
	{ tb_result $name FAIL "ntprof record did not start: $(tail -1 $TB_OUT/$name.err)"; exit 0; }
tb_load --rw randread --bs 4k --qd 1 --secs 5
# bpftool link: "ID: tracing  prog P" for fentry/fexit, "perf_event" for
# kprobes; the program's name is in `bpftool prog show` ("P: type  name N").
bpftool prog show > $TB_OUT/$name.progs 2>&1
bpftool link show > $TB_OUT/$name.links 2>&1
links_of() { # TYPE: ntprof links of that type
	awk -v t="$1" 'NR == FNR { if ($0 ~ / name ntp_/) { id = $1; sub(/:$/, "", id); ntp[id] = 1 }; next }
		$2 == t && $3 == "prog" && ($4 in ntp) { n++ } END { print n + 0 }' $TB_OUT/$name.progs $TB_OUT/$name.links
}
n_tracing=$(links_of tracing)
n_perf=$(links_of perf_event)
ntp_rec_stop INT
rc=$?
if ntp_no_progs; then gone=1; else gone=0; fi
ntprof report -j $TB_OUT/$name.json $TB_OUT/$name.ntp > $TB_OUT/$name.report 2>&1
ntp_json_groups $TB_OUT/$name.json > $TB_OUT/$name.groups
IFS='|' read -r label recs e2e hb hd net td st p50 <<EOT
$(grep -v '^records ' $TB_OUT/$name.groups | head -1)
EOT
set -- $(grep '^records ' $TB_OUT/$name.groups)
sum=$(awk "BEGIN{printf \"%.3f\", ${hb:-0}+${hd:-0}+${net:-0}+${td:-0}+${st:-0}}")
grep -q 'fentry/fexit cannot attach now: attaching took more than 0.001 s ' $TB_OUT/$name.err && why=1 || why=0
grep -q 'hooks: kprobe/kretprobe' $TB_OUT/$name.err && kp=1 || kp=0
tb_log "$name: $(grep -E 'cannot attach|hooks:' $TB_OUT/$name.err | tr '\n' ' ')"
tb_figure $name tracing_links=$n_tracing kprobe_links=$n_perf host=${2:-0} matched=${4:-0} e2e_us=$e2e
tb_check $name "$rc == 0 && $why == 1 && $kp == 1 && $n_tracing == 0 && $n_perf > 0 && ${2:-0} > 0 && ${4:-0} == ${2:-0} && ($sum - $e2e) < 0.01 && ($e2e - $sum) < 0.01 && $gone == 1" \
	"said why: $why, kprobes: $kp; links while recording: $n_tracing tracing, $n_perf perf_event; ${2:-0} host records, ${4:-0} joined; e2e $e2e us (sum $sum); programs gone after exit: $gone"
