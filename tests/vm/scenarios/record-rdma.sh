# record-rdma: ntprof on real NVMe/RDMA (soft-RoCE rdma_rxe on dummy0, null_blk
# namespace), host and target in this guest.
#   record-rdma-probe[-kprobes]  `ntprof probe -r both -t rdma`: no hook missing in
#                 the flavour it loaded, the structures and fields the programs
#                 read all in the kernel's BTF ("types: ok"), "load: ok", exit 0,
#                 nothing left attached
#   On a kernel whose modules have no BTF (5.10) ntprof takes the RDMA types
#   from the BTF file the test bed made (tests/vm/btf.sh, docs/kernel-btf.md)
#   and records with kprobes and raw_tp only:
#   record-rdma-transport  the probe names the RDMA controller and nvmet port and
#                 nothing against -t rdma; `record -t tcp` warns "... are NVMe/RDMA,
#                 not NVMe/TCP: use -t rdma" (docs/recording.md)
#   record-rdma-fentry-refused  `record --fentry` refuses, naming the modules
#                 without BTF (fentry/fexit and tp_btf attach by a BTF id of the
#                 kernel's own BTF, which a file cannot give); the --fentry runs
#                 below then SKIP with that reason
#   record-rdma-btf-lacks  `record --kprobes --btf FILE` with a FILE lacking the
#                 RDMA modules' types (vmlinux's own BTF) refuses before any
#                 load, naming the missing structures and the file
#   then `ntprof record -r both -t rdma -s 1` (every command sampled, so ntprof's
#   mean covers the load generator's I/Os) under 4 KiB random reads at QD1 and
#   128 KiB random writes at QD4 (the target fetches the data with an RDMA READ),
#   once with --fentry, once with --kprobes. For each:
#   NAME-join     every host record joined with its target record (100 %), and the
#                 host records cover every byte the load generator moved
#   NAME-slots    every host record has every timestamp the stages need; for
#                 the writes every target record has the RDMA READ's (posted,
#                 completed, handled). Over rxe a host request can complete in
#                 softirq inside block_rq_complete's own program on that CPU,
#                 which the kernel then skips: up to 1 % of the host records
#                 may lack H_BLK_COMPLETE, each closed when its request was
#                 reused (flagged, counted in the report's note; it ends at
#                 nvme_complete_rq). With --kprobes a kprobe can miss (docs/stage-model.md: a
#                 kprobe program is skipped while another kprobe program runs
#                 on that CPU, and nvme-rdma's completions run in softirq,
#                 interrupting them): up to 5 % of the records may lack a
#                 timestamp (1.6 % seen at QD4), and the report must leave out (and count in its
#                 note) every host record that lacks one the stages need
#   NAME-sum      the five stage means add up to the end-to-end mean
#   NAME-e2e      ntprof's end-to-end mean <= the load generator's mean (the gap:
#                 system call, io_uring, wake-up, outside the block layer)
#   NAME-cleanup  no ntprof program left once record has exited
# rxe loops a local destination back without lo's qdisc, so netem cannot delay
# NVMe/RDMA here: no injected-delay check.
# tb-timeout: 420
. /tb/ntprof-checks.sh
tb_setup_rdma || { tb_result record-rdma FAIL "NVMe/RDMA setup failed"; exit 0; }

probe_one() { # NAME probe-options...
	local name=$1 rc missing left
	shift
	# a load that fails prints the verifier's log of the failing program
	NTPROF_LIBBPF_WARN=1 ntprof probe -r both -t rdma "$@" > $TB_OUT/$name.txt 2>&1
	rc=$?
	grep -v '^libbpf\|^[0-9]*: \|^;' $TB_OUT/$name.txt | head -60
	# the rows of the flavour that loaded (without module BTF the fentry
	# rows are all missing, and not used)
	fl=$(grep -q '^function hooks: fentry' $TB_OUT/$name.txt && echo 'fentry|fexit|tp_btf' || echo 'kprobe|kretprobe|raw_tp')
	missing=$(awk -v fl="^($fl)\$" '$1 == "missing" && $3 ~ fl' $TB_OUT/$name.txt | grep -c .)
	ntp_no_progs && left=0 || left=1
	tb_check $name "$rc == 0 && $missing == 0 && $(grep -c '^types: ok' $TB_OUT/$name.txt) == 1 && $(grep -c '^load: ok$' $TB_OUT/$name.txt) == 1 && $left == 0" \
		"$(grep '^function hooks' $TB_OUT/$name.txt); $missing hooks missing in it; $(grep '^types:' $TB_OUT/$name.txt | cut -c1-200); exit $rc; programs left: $left"
}

# Without module BTF (5.10): --fentry must be refused, naming why; the
# fentry runs SKIP with that reason. A BTF file lacking the RDMA types must be
# refused before any load, naming them.
NOBTF=
if [ ! -e /sys/kernel/btf/nvme_rdma ]; then
	ntprof record -r both -t rdma --fentry --offline -o $TB_OUT/fentry-refused.ntp -d 1 > $TB_OUT/fentry-refused.txt 2>&1
	rc=$?
	why=$(grep '^ntprof: ' $TB_OUT/fentry-refused.txt | tail -1)
	tb_check record-rdma-fentry-refused "$rc != 0 && $(grep -c '^ntprof: --fentry: no module BTF for .*nvme_rdma.*fentry/fexit and tp_btf cannot attach' $TB_OUT/fentry-refused.txt) == 1" \
		"exit $rc: $why"
	NOBTF="${why#ntprof: }"
	ntprof record -r both -t rdma --kprobes --btf /sys/kernel/btf/vmlinux --offline -o $TB_OUT/btf-lacks.ntp -d 1 > $TB_OUT/btf-lacks.txt 2>&1
	rc=$?
	ntp_no_progs && left=0 || left=1
	tb_check record-rdma-btf-lacks "$rc != 0 && $left == 0 && $(grep -c "^ntprof: rdma: the kernel's BTF has no struct .*nvme_rdma_request.*nvmet_rdma_rsp.*(looked for in --btf /sys/kernel/btf/vmlinux" $TB_OUT/btf-lacks.txt) == 1" \
		"exit $rc: $(tail -1 $TB_OUT/btf-lacks.txt | cut -c1-300)"
fi

NTP_RDMA_READ_TS="t_cmd_arrive t_cmd_recv t_rsp_sent t_rsp_send_done"
NTP_RDMA_HOST_NEED="h_drv_submit h_cmd_sent h_rsp_arrive h_rsp_drv h_drv_complete"

run_one() { # NAME FLAVOUR HOST-TS TARGET-TS BYTES-PER-IO SECS ntp-load options...
	local name=$1 flavour=$2 hcols=$3 tcols=$4 bs=$5 secs=$6 rc label recs e2e hb hd net td st p50 rh rt rm sum gap inc tinc hbytes left noted need unflagged skip
	shift 6
	if [ -n "$NOBTF" ] && [ "$flavour" = --fentry ]; then
		tb_result $name SKIP "$NOBTF"
		return
	fi
	ntp_rec_start $name -r both -t rdma -s 1 $flavour --offline -o $TB_OUT/$name.ntp ||
		{ tb_result $name FAIL "ntprof record did not start: $(tail -1 $TB_OUT/$name.err)"; return; }
	tb_load "$@" --secs $secs
	ntp_rec_stop INT
	rc=$?
	ntp_no_progs && left=0 || left=1
	ntprof report -j $TB_OUT/$name.json --detail $TB_OUT/$name.ntp > $TB_OUT/$name.report 2>&1
	ntprof report --detail $TB_OUT/$name.ntp > $TB_OUT/$name.txt 2>&1
	ntp_groups_read $name
	inc=$(ntp_host_incomplete $TB_OUT/$name.ntp "$hcols")
	tinc=$(ntp_side_incomplete target $TB_OUT/$name.ntp "$tcols")
	hbytes=$(ntprof dump $TB_OUT/$name.ntp | awk -F, '$1 == "host" { b += $9 } END { printf "%.0f", b }')
	tb_figure $name load_mean_us=$TB_LOAD_MEAN_US ntprof_e2e_us=$e2e gap_us=$gap host=$rh matched=$rm ios=$TB_LOAD_IOS \
		host_block=$hb host_driver=$hd network=$net target_driver=$td storage=$st
	# A completion whose program run the kernel skipped (recursion_misses,
	# counted: a kprobe's while another BPF program ran on that CPU) closes
	# its record when the request is reused, or never makes it if the
	# request is not reused before the stop: as many host records as runs
	# skipped (at most 1 %) may be missing (ntp_skip_allow).
	skip=$(ntp_skip_allow $rh)
	tb_check $name-join "$rc == 0 && $rh > 0 && $rm == $rh && $hbytes >= ($TB_LOAD_IOS - $skip) * $bs" \
		"$label: $rh host records ($hbytes bytes), $rm joined; load generator $TB_LOAD_IOS I/Os of $bs bytes (missing allowed: $skip, for runs the kernel skipped: ${NTP_REC_MISSES:-0})"
	# the report's notes: records left out (a time the stages need is
	# missing) and records closed when their request was reused
	noted=$(sed -n 's/^note: \([0-9]*\) records lacked a timestamp.*/\1/p' $TB_OUT/$name.txt | head -1)
	need=$(ntp_host_incomplete $TB_OUT/$name.ntp "$NTP_RDMA_HOST_NEED")
	unflagged=$(ntp_host_unclosed $TB_OUT/$name.ntp)
	if [ "$flavour" = --kprobes ]; then
		tb_check $name-slots "$rh > 0 && ($inc + $tinc) * 20 <= $rh && $unflagged == 0 && ${noted:-0} >= $need && ${noted:-0} <= $need + $tinc" \
			"$inc of $rh host records lack one of: $hcols ($need one the stages need, $unflagged without a block completion and not closed); $tinc target records lack one of: $tcols; the report left out ${noted:-0}"
	else
		tb_check $name-slots "$rh > 0 && $need == 0 && $tinc == 0 && $inc * 100 <= $rh && $unflagged == 0" \
			"$inc of $rh host records lack one of: $hcols ($need one the stages need, $unflagged without a block completion and not closed); $tinc target records lack one of: $tcols"
	fi
	tb_check $name-sum "($sum - $e2e) < 0.01 && ($e2e - $sum) < 0.01" \
		"stages $hb + $hd + $net + $td + $st = $sum us, end to end $e2e us"
	tb_check $name-e2e "$e2e > 0 && $e2e <= $TB_LOAD_MEAN_US" \
		"ntprof mean $e2e us, load generator mean $TB_LOAD_MEAN_US us: gap $gap us"
	tb_check $name-cleanup "$left == 0" "$(bpftool prog show | grep -c ' name ntp_') ntp_ programs after exit"
}

probe_one record-rdma-probe
probe_one record-rdma-probe-kprobes --kprobes
# The transport check (docs/recording.md): the probe above found the RDMA
# controller and port and said nothing against -t rdma; record -t tcp warns
# (an unusable --metrics path stops it right after, before any load)
ntprof record -r both -t tcp --metrics /nonexistent-dir/m.prom > $TB_OUT/wrong-t.txt 2>&1
tb_check record-rdma-transport "$(grep -c '^nvme controllers: .*nvme[0-9]* rdma (nvme[0-9]*n[0-9]*.*; nvmet ports: .* rdma' $TB_OUT/record-rdma-probe.txt) == 1 && $(grep -c '^transport:' $TB_OUT/record-rdma-probe.txt) == 0 && $(grep -c '^ntprof: nvme[0-9]* (nvme[0-9]*n[0-9]*.*) and nvmet port .* are NVMe/RDMA, not NVMe/TCP: use -t rdma$' $TB_OUT/wrong-t.txt) == 1" \
	"$(grep '^nvme controllers' $TB_OUT/record-rdma-probe.txt); $(head -1 $TB_OUT/wrong-t.txt)"
run_one record-rdma-read-qd1 --fentry "$NTP_READ_TS" "$NTP_RDMA_READ_TS" 4096 10 --rw randread --bs 4k --qd 1
run_one record-rdma-write128k-qd4 --fentry "$NTP_READ_TS" "$NTP_RDMA_READ_TS t_r2t_sent t_data_arrive t_data_recv" \
	131072 8 --rw randwrite --bs 128k --qd 4
run_one record-rdma-read-qd1-kprobes --kprobes "$NTP_READ_TS" "$NTP_RDMA_READ_TS" 4096 5 --rw randread --bs 4k --qd 1
run_one record-rdma-write128k-qd4-kprobes --kprobes "$NTP_READ_TS" "$NTP_RDMA_READ_TS t_r2t_sent t_data_arrive t_data_recv" \
	131072 5 --rw randwrite --bs 128k --qd 4
