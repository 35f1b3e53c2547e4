# record-tcp: `ntprof record -r both` on real NVMe/TCP while the load generator
# runs 4 KiB random reads at QD1 and QD8 and 128 KiB random writes at QD4 (the
# R2T path). -s 1 samples every command, so ntprof's mean covers the same I/Os
# as the load generator's. For each:
#   NAME-join     every host record joined with its target record (100 %), and
#                 the host records cover every byte the load generator moved (the
#                 block layer may merge two adjacent random writes into one
#                 request: one record of twice the size). Records the kernel
#                 could not hand over (ring buffer full: user space did not read
#                 for seconds on an overloaded machine) are what ntprof itself
#                 counts and says ("records lost (ring buffer full)"): each may
#                 leave one host record unjoined or one I/O uncovered, and the
#                 verdict names them; any shortfall beyond that count fails, and
#                 so does a run that lost half of the load's I/Os or more, as
#                 many records as I/Os (-r both: an I/O has two records; a
#                 fault of ours in waking the reader loses most of a run, a
#                 starved reader a burst)
#   NAME-slots    every host record has every timestamp of its flow
#   NAME-fentry   with module BTF, the fentry flavour loaded (no fallback to kprobes)
#   NAME-sum      the five stage means add up to the end-to-end mean
#   NAME-e2e      ntprof's end-to-end mean <= the load generator's mean; the gap
#                 (system call, io_uring, wake-up: outside the block layer) is a figure
# record-tcp-read-qd8-ringfull: the allowance for lost records, exercised: a
# ring of 512 KiB (NTPROF_RING_KIB; room for several of the recorder's 100 ms
# polls of this load, far less than the 2 s of it the recorder misses) and
# the recorder stopped (SIGSTOP) for 2 s of the 8 s load fill the ring, so
# the kernel drops records; NAME-lost checks it did and that ntprof counted
# them, the checks above that the rest joins and adds up
# tb-timeout: 420
. /tb/ntprof-checks.sh
tb_setup_tcp || { tb_result record-tcp FAIL "NVMe/TCP setup failed"; exit 0; }

run_one() { # NAME TS-COLUMNS BYTES-PER-IO ntp-load options...
	local name=$1 cols=$2 bs=$3 rc line recs e2e hb hd net td st sum gap inc hbytes
	shift 3
	local pauser=
	[ -z "${RING_KIB:-}" ] || export NTPROF_RING_KIB=$RING_KIB
	ntp_rec_start $name -r both -s 1 --offline -o $TB_OUT/$name.ntp ||
		{ unset NTPROF_RING_KIB; tb_result $name FAIL "ntprof record did not start: $(tail -1 $TB_OUT/$name.err)"; return; }
	unset NTPROF_RING_KIB
	if [ -n "${PAUSE:-}" ]; then	# the reader stopped a moment, mid-load
		( sleep 3; kill -STOP $NTP_REC_PID; sleep $PAUSE; kill -CONT $NTP_REC_PID ) &
		pauser=$!
	fi
	tb_load "$@" --secs 8
	[ -z "$pauser" ] || wait $pauser
	ntp_rec_stop INT
	rc=$?
	ntprof report -j $TB_OUT/$name.json --detail $TB_OUT/$name.ntp > $TB_OUT/$name.report 2>&1
	ntp_json_groups $TB_OUT/$name.json > $TB_OUT/$name.groups
	line=$(grep -v '^records ' $TB_OUT/$name.groups | sort -t'|' -k2 -n | tail -1)
	set -- $(grep '^records ' $TB_OUT/$name.groups)
	local rh=$2 rt=$3 rm=$4
	IFS='|' read -r label recs e2e hb hd net td st p50 <<EOT
$line
EOT
	sum=$(awk "BEGIN{printf \"%.3f\", $hb+$hd+$net+$td+$st}")
	gap=$(awk "BEGIN{printf \"%.1f\", $TB_LOAD_MEAN_US-$e2e}")
	inc=$(ntp_host_incomplete $TB_OUT/$name.ntp "$cols")
	hbytes=$(ntprof dump $TB_OUT/$name.ntp | awk -F, '$1 == "host" { b += $9 } END { printf "%.0f", b }')
	tb_figure $name load_mean_us=$TB_LOAD_MEAN_US ntprof_e2e_us=$e2e gap_us=$gap host=$rh matched=$rm ios=$TB_LOAD_IOS \
		host_block=$hb host_driver=$hd network=$net target_driver=$td storage=$st
	# Without module BTF (5.10) the module hooks are kprobes, and the kernel
	# skips a kprobe program while another BPF program runs on that CPU (docs/stage-model.md,
	# "A kprobe can miss a command"), and 5.10 counts none of those skips. A
	# target record whose send was missed is closed when its command slot is
	# reused (the kernel counts that); one whose arrival was missed is never
	# made.
	# There, at most 1 % of the host records may stay unjoined, and no more than
	# those two explain: the target records closed, plus the host records in
	# excess of the target's. Everywhere else: none.
	local closed_t allow=0 short=0 lost
	closed_t=$(sed -n 's/.* \([0-9][0-9]*\) target records closed after a missed completion.*/\1/p' $TB_OUT/$name.err | tail -1)
	# the kernel's own count of records dropped for a full ring (cmd_record.c
	# prints it; the programs count every failed reserve)
	lost=$(sed -n 's/.*kernel side: \([0-9][0-9]*\) records lost (ring buffer full).*/\1/p' $TB_OUT/$name.err | tail -1)
	lost=${lost:-0}
	tb_figure $name-lost ring_full_lost=$lost
	[ -z "${PAUSE:-}" ] || tb_check $name-lost "$lost > 0" \
		"$lost records lost (ring buffer full) with a ring of ${RING_KIB:-4096} KiB and the reader stopped $PAUSE s of $TB_LOAD_IOS I/Os"
	if [ ! -e /sys/kernel/btf/nvme_tcp ]; then
		[ "$rh" -gt "$rt" ] && short=$((rh - rt))
		allow=$(( ${closed_t:-0} + short ))
		[ $allow -gt $((rh / 100)) ] && allow=$((rh / 100))
	fi
	tb_check $name-join "$rc == 0 && $rh > 0 && $lost < $TB_LOAD_IOS && $rh - $rm <= $allow + $lost && $hbytes >= ($TB_LOAD_IOS - $lost) * $bs" \
		"$label: $rh host records ($hbytes bytes), $rt target, $rm joined (unjoined allowed: $allow: target records closed after a missed kprobe ${closed_t:-0}, never made $short; plus $lost the kernel dropped, ring buffer full); load generator $TB_LOAD_IOS I/Os of $bs bytes"
	# the same kprobe misses leave a few host records without a timestamp on
	# 5.10; the report leaves them out and counts them. With fentry, a host
	# socket send was, rarely, not stamped on the command (1 h_cmd_sent in
	# about 7000 records at QD8, on a loaded machine only): over loopback the
	# round trip can end on the other CPU before the send's exit hook runs;
	# the entry's time is now confirmed at the completion (send_settle in
	# bpf/ntprof.bpf.c). Still allowed: at most 1 in 2000 records.
	local inc_allow=$((rh / 2000))
	[ -e /sys/kernel/btf/nvme_tcp ] || inc_allow=$((rh / 100))
	tb_check $name-slots "$inc <= $inc_allow && $rh > 0" "$inc of $rh host records lack one of: $cols (allowed: $inc_allow)"
	# With module BTF the recorder must have loaded the fentry flavour: a
	# verifier rejection of an fentry program makes it fall back to kprobes
	# (it says "using kprobes"), which would pass every other check here.
	if [ -e /sys/kernel/btf/nvme_tcp ]; then
		local fell=0
		grep -q 'using kprobes' $TB_OUT/$name.err && fell=1
		tb_check $name-fentry "$fell == 0" \
			"module BTF present, flavour: $([ $fell = 0 ] && echo fentry || grep -m1 'using kprobes' $TB_OUT/$name.err)"
	fi
	tb_check $name-sum "($sum - $e2e) < 0.01 && ($e2e - $sum) < 0.01" \
		"stages $hb + $hd + $net + $td + $st = $sum us, end to end $e2e us"
	tb_check $name-e2e "$e2e > 0 && $e2e <= $TB_LOAD_MEAN_US" \
		"ntprof mean $e2e us, load generator mean $TB_LOAD_MEAN_US us: gap $gap us"
}

run_one record-tcp-read-qd1 "$NTP_READ_TS" 4096 --rw randread --bs 4k --qd 1
# on 5.10 too (types from the -dbg package's BTF, kprobes; the R2T write below
# is timed through blk_mq_tag_to_rq there, nvme_tcp_setup_h2c_data_pdu being inlined)
run_one record-tcp-read-qd8 "$NTP_READ_TS" 4096 --rw randread --bs 4k --qd 8
run_one record-tcp-write128k-qd4 "$NTP_R2T_TS" 131072 --rw randwrite --bs 128k --qd 4
RING_KIB=512 PAUSE=2
run_one record-tcp-read-qd8-ringfull "$NTP_READ_TS" 4096 --rw randread --bs 4k --qd 8
