# record-flavours: `ntprof record --fentry` and `--kprobes` each record a QD1
# 4 KiB read run: the flavour is the one asked for, every host record joined
# and complete, stages summing to end to end, mean not above the load's.
# Records the kernel could not hand over (ring buffer full: the recorder did
# not read for seconds, as record-tcp says) are what ntprof counts and says;
# each may leave one I/O without its host record, or a host record without
# its target's (unjoined: a 6.12 run lost 6117 of about 64400 and left 11
# host records unjoined), and the verdict names them.
# Where the kernel skipped program runs (bpftool's recursion_misses: a
# preemptible 7.x skips a program on a CPU where a preempted task is inside
# it, docs/kernel-btf.md), as many records as it counted (at most 1 %) may be
# incomplete or unjoined, and ntprof's own count of them must be bpftool's.
# Without module BTF (5.10) --fentry must be refused, naming the modules
# (fentry/fexit attach by a BTF id of the kernel's own BTF, which a --btf file
# cannot give: docs/kernel-btf.md); record-flavours-fentry then SKIPs with
# that refusal as its reason.
# tb-timeout: 300
. /tb/ntprof-checks.sh
tb_setup_tcp || { tb_result record-flavours FAIL "NVMe/TCP setup failed"; exit 0; }
for fl in fentry kprobes; do
	name=record-flavours-$fl
	want=$([ $fl = fentry ] && echo "hooks: fentry/fexit" || echo "hooks: kprobe/kretprobe")
	if ! ntp_rec_start $name -r both -s 1 --offline --$fl -o $TB_OUT/$name.ntp; then
		if [ $fl = fentry ] && [ ! -e /sys/kernel/btf/nvme_tcp ] &&
		   grep -q '^ntprof: --fentry: no module BTF for .*fentry/fexit and tp_btf cannot attach' $TB_OUT/$name.err; then
			tb_result $name SKIP "$(tail -1 $TB_OUT/$name.err | sed 's/^ntprof: //')"
		else
			tb_result $name FAIL "ntprof record --$fl did not start: $(tail -1 $TB_OUT/$name.err)"
		fi
		continue
	fi
	tb_load --rw randread --bs 4k --qd 1 --secs 5
	ntp_rec_stop INT
	rc=$?
	ntprof report -j $TB_OUT/$name.json $TB_OUT/$name.ntp > $TB_OUT/$name.report 2>&1
	ntp_json_groups $TB_OUT/$name.json > $TB_OUT/$name.groups
	IFS='|' read -r label recs e2e hb hd net td st p50 <<EOT
$(grep -v '^records ' $TB_OUT/$name.groups | head -1)
EOT
	set -- $(grep '^records ' $TB_OUT/$name.groups)
	inc=$(ntp_host_incomplete $TB_OUT/$name.ntp "$NTP_READ_TS")
	sum=$(awk "BEGIN{printf \"%.3f\", $hb+$hd+$net+$td+$st}")
	grep -q "$want" $TB_OUT/$name.err && fl_ok=1 || fl_ok=0
	tb_figure $name load_mean_us=$TB_LOAD_MEAN_US ntprof_e2e_us=$e2e host=$2 matched=$4 hooks="$(grep 'hooks:' $TB_OUT/$name.err | sed 's/.*hooks: //')"
	lost=$(sed -n 's/.*kernel side: \([0-9][0-9]*\) records lost (ring buffer full).*/\1/p' $TB_OUT/$name.err | tail -1)
	lost=${lost:-0}
	skip=$(ntp_skip_allow $2)
	ntp_skip_count_check $name $TB_OUT/$name.err
	tb_check $name "$rc == 0 && $fl_ok == 1 && $2 > 0 && $2 - $4 <= $skip + $lost && $lost < $TB_LOAD_IOS && $2 >= $TB_LOAD_IOS - $lost && $inc <= $skip && ($sum - $e2e) < 0.01 && ($e2e - $sum) < 0.01 && $e2e <= $TB_LOAD_MEAN_US" \
		"$(grep 'hooks:' $TB_OUT/$name.err | sed 's/.*hooks: //'); $2 host records, $4 joined, $inc incomplete, $lost lost (ring buffer full), $skip allowed for runs the kernel skipped (${NTP_REC_MISSES:-0}); e2e $e2e us (stages sum $sum), load mean $TB_LOAD_MEAN_US us"
done
