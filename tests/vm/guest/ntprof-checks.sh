# ntprof-checks.sh - helpers of the scenarios that check `ntprof record`
# (tests/vm/scenarios/record-*.sh); sourced after /tb/lib.sh.

# ntp_rec_start NAME ARGS...: `ntprof record ARGS` in the background, output in
# $TB_OUT/NAME.out and NAME.err; returns once the hooks are attached (BTF
# loading and verification take seconds under TCG). Sets NTP_REC_PID.
ntp_rec_start() {
	local name=$1 i=0
	shift
	rm -f "$TB_OUT/$name.out" "$TB_OUT/$name.err"
	ntprof record "$@" > "$TB_OUT/$name.out" 2> "$TB_OUT/$name.err" &
	NTP_REC_PID=$!
	while ! grep -q "profiling as" "$TB_OUT/$name.err" 2>/dev/null; do
		kill -0 $NTP_REC_PID 2>/dev/null || { cat "$TB_OUT/$name.err"; return 1; }
		i=$((i + 1))
		[ $i -gt 600 ] && { tb_log "ntprof record $name: not ready after 120 s"; return 1; }
		sleep 0.2
	done
	tb_log "ntprof record $name ready: $(grep 'hooks:' "$TB_OUT/$name.err")"
}

# ntp_rec_stop [SIGNAL]: stop the recording (default INT) and wait; its status
ntp_rec_stop() {
	NTP_REC_MISSES=$(ntp_rec_misses)
	kill -${1:-INT} $NTP_REC_PID 2>/dev/null
	wait $NTP_REC_PID
}

# ntp_rec_misses: the runs of ntprof's programs the kernel skipped, summed
# (bpftool's recursion_misses, 5.12 on): a tracing program is not run on a
# CPU where it is already running, which a preemptible kernel (7.x's default
# PREEMPT_LAZY) makes happen when a task is preempted inside one
# (docs/kernel-btf.md). 0 where bpftool or the count is not there.
# ntp_skip_allow RECORDS: how many records may lack a timestamp or their
# other side for runs the kernel skipped: NTP_REC_MISSES (ntp_rec_stop's
# count), at most 1 % of RECORDS.
ntp_skip_allow() {
	local m=${NTP_REC_MISSES:-0}
	[ "$m" -gt $(($1 / 100)) ] && m=$(($1 / 100))
	echo $m
}

# ntp_skip_count_check NAME ERRFILE: ntprof record's own count of the runs
# the kernel skipped (its stderr, cmd_record.c) against bpftool's, read just
# before the stop (NTP_REC_MISSES): not below it, and not above it by more
# than the drain after it can add (none where the load had ended). Nothing
# printed is 0, as where the kernel counts no skips (before 5.12).
ntp_skip_count_check() {
	local own
	own=$(sed -n "s/.*kernel side: \([0-9][0-9]*\) runs of ntprof's programs skipped by the kernel.*/\1/p" "$2" | tail -1)
	own=${own:-0}
	tb_check $1-skipcount "$own >= ${NTP_REC_MISSES:-0} && $own <= ${NTP_REC_MISSES:-0} * 1.1 + 20" \
		"ntprof record said $own runs skipped by the kernel; bpftool's recursion_misses before the stop: ${NTP_REC_MISSES:-0}"
}

ntp_rec_misses() {
	bpftool prog show 2>/dev/null | awk '/ name ntp_/ { for (i = 1; i < NF; i++) if ($i == "recursion_misses") s += $(i + 1) }
		END { print s + 0 }'
}

# ntp_json_groups FILE.json: one line per group of a report's JSON:
#   label|records|e2e_mean|host_block|host_driver|network|target_driver|storage|p50
# then a line "records HOST TARGET MATCHED".
ntp_json_groups() {
	awk '
	function num(s) { sub(/^[^:]*:/, "", s); gsub(/[^0-9.eE+-]/, "", s); return s + 0 }
	function flush() { if (label != "") printf "%s|%d|%.3f|%.3f|%.3f|%.3f|%.3f|%.3f|%.3f\n", label, recs, e2e, st["host_block"], st["host_driver"], st["network"], st["target_driver"], st["storage"], p50; label = "" }
	{ gsub(/^[ \t]+/, "") }
	/^"records":\{/ { inrec = 1; next }
	inrec && /^"host":/ { rh = num($0) }
	inrec && /^"target":/ { rt = num($0) }
	inrec && /^"matched":/ { rm = num($0); inrec = 0 }
	/^"label":/ { flush(); label = $0; sub(/^"label":"/, "", label); sub(/",?$/, "", label); split("", st); cur = ""; incomp = 0 }
	/^"components":/ { incomp = 1 }	# components name their stage too: only the stage table counts
	/^"records":[0-9]/ { recs = num($0) }
	/^"latency_us":/ { inlat = 1 }
	inlat && /^"mean":/ { e2e = num($0) }
	inlat && /^"p50":/ { p50 = num($0); inlat = 0 }
	!incomp && /^"stage":"/ { cur = $0; sub(/^"stage":"/, "", cur); sub(/",?$/, "", cur) }
	cur != "" && /^"mean_us":/ { if (!(cur in st)) st[cur] = num($0); cur = "" }	# the first table of a group
	END { flush(); printf "records %d %d %d\n", rh, rt, rm }
	' "$1"
}

# ntp_host_incomplete FILE.ntp COLUMNS: host records (from `ntprof dump`) with an
# empty value in one of the named timestamp columns.
ntp_host_incomplete() {
	ntprof dump "$1" | awk -F, -v want="$2" '
	NR == 1 { n = split(want, w, " "); for (i = 1; i <= NF; i++) col[$i] = i; next }
	$1 == "host" { for (k = 1; k <= n; k++) if ($(col[w[k]]) == "") { bad++; break } }
	END { print bad + 0 }'
}

# ntp_side_incomplete host|target FILE.ntp COLUMNS: that side's records with an
# empty value in one of the named timestamp columns.
ntp_side_incomplete() {
	ntprof dump "$2" | awk -F, -v side="$1" -v want="$3" '
	NR == 1 { n = split(want, w, " "); for (i = 1; i <= NF; i++) col[$i] = i; next }
	$1 == side { for (k = 1; k <= n; k++) if ($(col[w[k]]) == "") { bad++; break } }
	END { print bad + 0 }'
}

# ntp_r2t_data_split FILE.ntp: "WRITES BAD" of a recording's target records
# that fetched their data (t_r2t_sent): BAD counts those without t_data_recv
# or whose data stamps do not split the data's receive in two spans of
# width: t_data_arrive <= t_data_recv < t_storage_submit (the network's
# "target receive path (data)", then the "target driver, data" component,
# docs/stage-model.md). With both stamps at one point the driver's span is 0.
ntp_r2t_data_split() {
	ntprof dump "$1" | awk -F, '
	NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	$1 == "target" && $(col["t_r2t_sent"]) != "" {
		n++
		a = $(col["t_data_arrive"]); r = $(col["t_data_recv"]); s = $(col["t_storage_submit"])
		if (a == "" || r == "" || s == "" || a + 0 > r + 0 || r + 0 >= s + 0)
			bad++
	}
	END { print n + 0, bad + 0 }'
}

# ntp_arrival_order FILE.ntp: "PAIRS BAD" of a one-machine NVMe/TCP
# recording, whose host and target share one clock (loopback). Each host
# record is paired with the target record of its controller, queue and
# command id whose command arrived between the host's send and the arrival
# of its response. BAD counts the pairs in which an arrival the host
# stamped is before the target sent what arrived (t_rsp_sent > h_rsp_arrive,
# t_r2t_sent > h_r2t_arrive) or after the driver handled it (h_rsp_arrive >
# h_rsp_drv, h_r2t_arrive > h_r2t_drv): what an arrival taken from the wrong
# socket or slot, or a stale one, would give. The presence checks (-slots)
# cannot see it, nor the stages: both stamps are inside the network stage.
ntp_arrival_order() {
	ntprof dump "$1" | awk -F, '
	function v(c) { return $(col[c]) == "" ? "-" : $(col[c]) }
	NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	$1 == "host" && $(col["h_cmd_sent"]) != "" && $(col["h_rsp_arrive"]) != "" {
		print v("cntlid"), v("qid"), v("cid"), v("h_cmd_sent"), 0, v("h_rsp_arrive"), v("h_rsp_drv"),
		      v("h_r2t_arrive"), v("h_r2t_drv") }
	$1 == "target" && $(col["t_cmd_arrive"]) != "" {
		print v("cntlid"), v("qid"), v("cid"), v("t_cmd_arrive"), 1, v("t_rsp_sent"), v("t_r2t_sent") }' |
	sort -k1,1n -k2,2n -k3,3n -k4,4n -k5,5n | awk '
	function after(a, b) { return a != "-" && b != "-" && a + 0 > b + 0 }
	{ k = $1 " " $2 " " $3 }
	$5 == 0 { h[k] = $0; next }
	k in h {
		split(h[k], x, " ")
		delete h[k]
		if ($4 + 0 > x[6] + 0)
			next	# not this command: its target record is missing
		pairs++
		if (after($6, x[6]) || after(x[6], x[7]) || after($7, x[8]) || after(x[8], x[9]))
			bad++
	}
	END { print pairs + 0, bad + 0 }'
}

# ntp_host_unclosed FILE.ntp: host records without h_blk_complete that are not
# flagged NTP_REC_F_CLOSED_MISSED (bit 0 of the flags column).
ntp_host_unclosed() {
	ntprof dump "$1" | awk -F, '
	NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	$1 == "host" && $(col["h_blk_complete"]) == "" && index("13579bdfBDF", substr($(col["flags"]), length($(col["flags"])))) == 0 { bad++ }
	END { print bad + 0 }'
}

# ntp_no_progs: true when bpftool lists no ntprof program (names ntp_*); waits
# up to 5 s for the kernel to free programs whose last fd just closed.
ntp_no_progs() {
	local i=0
	while [ $i -lt 25 ]; do
		bpftool prog show 2>/dev/null | grep -q ' name ntp_' || return 0
		sleep 0.2
		i=$((i + 1))
	done
	return 1
}

NTP_READ_TS="h_blk_submit h_drv_submit h_cmd_sent h_rsp_arrive h_rsp_drv h_drv_complete h_blk_complete"
NTP_R2T_TS="$NTP_READ_TS h_r2t_arrive h_r2t_drv h_data_sent"
# the target's times of the same commands
NTP_T_READ_TS="t_cmd_arrive t_cmd_recv t_storage_submit t_storage_done t_rsp_sent"
NTP_T_R2T_TS="$NTP_T_READ_TS t_r2t_sent t_data_arrive"

# ntp_json_qd FILE.json: the first group's queue depths from a report's JSON:
#   "seconds commands qd_commands qd_incomplete qd_counted bytes all_commands"
#   on the first line (qd_counted 1/0; bytes: every group's commands times
#   its size, so that a load's I/Os of one size are bytes / size even where
#   the block layer merged two adjacent ones into one command of a larger
#   group; all_commands: every group's commands), then
#   one line per stage "KEY COUNTED LITTLE" (avg_qd and avg_qd_little of the
#   "stages" array; COUNTED is Little's when not counted).
ntp_json_qd() {
	awk '
	function num(s) { sub(/^[^:]*:/, "", s); gsub(/[^0-9.eE+-]/, "", s); return s + 0 }
	{ gsub(/^[ \t]+/, "") }
	/^"seconds":/ && secs == "" { secs = num($0) }
	/^"label":/ { ng++; size = "" }
	ng && /^"size":/ && size == "" { size = num($0) }
	ng && /^"commands":/ && size != "" { bytes += num($0) * size; all += num($0); size = "" }
	ng != 1 { next }
	/^"commands":/ { cmds = num($0) }
	/^"qd_counted":true/ { counted = 1 }
	/^"qd_commands":/ { qdc = num($0) }
	/^"qd_incomplete":/ { qdi = num($0) }
	/^"stages":/ { inst = 1; next }
	/^"rows":/ { inst = 0 }
	inst && /^"stage":"/ { cur = $0; sub(/^"stage":"/, "", cur); sub(/",?$/, "", cur); order[++n] = cur }
	inst && /^"avg_qd":/ { qd[cur] = num($0) }
	inst && /^"avg_qd_little":/ { lit[cur] = num($0) }
	END {
		printf "%s %d %d %d %d %.0f %.0f\n", secs, cmds, qdc, qdi, counted, bytes, all
		for (i = 1; i <= n; i++) printf "%s %.4f %.4f\n", order[i], qd[order[i]], lit[order[i]]
	}' "$1"
}

# ntp_inflight_mean DEV SECS: the requests in flight on DEV's blk-mq path (the
# busy tags of every hctx, as tb_inflight_max reads them), sampled about every
# 0.1 s for SECS: "MEAN SAMPLES SE", SE the mean's standard error (the
# samples' standard deviation over the square root of their count). A tag is
# held from the request's allocation to its free after block_rq_complete: the
# span of ntprof's host side.
ntp_inflight_mean() {
	local b=${1#/dev/} d end n sum=0 sq=0 cnt=0
	d=$(ls -d /sys/kernel/debug/block/${b%n*}c*n${b##*n} 2>/dev/null | head -1)
	[ -n "$d" ] || d=/sys/kernel/debug/block/$b
	end=$(awk -v t=$(tb_ts) -v s=$2 'BEGIN { print t + s }')
	while tb_fcmp "$(tb_ts) < $end"; do
		n=$(cat "$d"/hctx*/tags 2>/dev/null | awk '/^bitmap_tags:/ { b = 1 } /^breserved_tags:/ { b = 0 }
			b && /^busy=/ { n += substr($0, 6) } END { print n + 0 }')
		sum=$((sum + n))
		sq=$((sq + n * n))
		cnt=$((cnt + 1))
		sleep 0.1
	done
	# the mean, the count, and the mean's variance (the samples' over their count)
	set -- $(awk -v s=$sum -v q=$sq -v c=$cnt 'BEGIN { m = c ? s / c : 0
		printf "%.3f %d %.6f\n", m, c, (c > 1 ? (q - c * m * m) / (c - 1) / c : 0) }')
	echo "$1 $2 $(tb_sqrt $3)"
}

# ntp_groups_read NAME: the report $TB_OUT/NAME.json's largest group and
# its records (NAME.groups, ntp_json_groups), set in the caller's variables:
# label recs e2e hb hd net td st p50 (the group), rh rt rm (host, target,
# joined records), sum (the five stage means added) and gap (the load's
# mean less e2e).
ntp_groups_read() {
	local line
	ntp_json_groups $TB_OUT/$1.json > $TB_OUT/$1.groups
	line=$(grep -v '^records ' $TB_OUT/$1.groups | sort -t'|' -k2 -n | tail -1)
	set -- $(grep '^records ' $TB_OUT/$1.groups)
	rh=$2 rt=$3 rm=$4
	IFS='|' read -r label recs e2e hb hd net td st p50 <<EOT
$line
EOT
	sum=$(awk "BEGIN{printf \"%.3f\", $hb+$hd+$net+$td+$st}")
	gap=$(awk "BEGIN{printf \"%.1f\", $TB_LOAD_MEAN_US-$e2e}")
}

# ntp_tcp_record_check NAME TS-COLUMNS BYTES-PER-IO ntp-load options...:
# `ntprof record -r both -s 1` on the NVMe/TCP device (tb_setup_tcp) while
# the load runs 8 s, then the checks record-tcp.sh describes (NAME-join,
# -slots, -tslots, -order, -fentry, -sum, -tdata for writes, -e2e, and -lost with PAUSE). Environment:
# RING_KIB (NTPROF_RING_KIB for the recorder), PAUSE (seconds the recorder
# is stopped mid-load), NTP_REC_FLAVOUR (kprobes or fentry: asked for with
# --kprobes/--fentry; kprobes replaces NAME-fentry by NAME-flavour, the
# kprobe flavour loaded). The programs the recorder loaded are listed in
# $TB_OUT/NAME.progs.
ntp_tcp_record_check() {
	local name=$1 cols=$2 bs=$3 rc label recs e2e hb hd net td st p50 rh rt rm sum gap inc tinc tcols hbytes
	shift 3
	local pauser=
	[ -z "${RING_KIB:-}" ] || export NTPROF_RING_KIB=$RING_KIB
	ntp_rec_start $name -r both -s 1 --offline ${NTP_REC_FLAVOUR:+--$NTP_REC_FLAVOUR} -o $TB_OUT/$name.ntp ||
		{ unset NTPROF_RING_KIB; tb_result $name FAIL "ntprof record did not start: $(tail -1 $TB_OUT/$name.err)"; return; }
	unset NTPROF_RING_KIB
	# the programs the recorder loaded, by name
	bpftool prog show 2>/dev/null | sed -n 's/.* name \(ntp_[a-z0-9_]*\) .*/\1/p' | sort > $TB_OUT/$name.progs
	if [ -n "${PAUSE:-}" ]; then	# the reader stopped a moment, mid-load
		( sleep 3; kill -STOP $NTP_REC_PID; sleep $PAUSE; kill -CONT $NTP_REC_PID ) &
		pauser=$!
	fi
	tb_load "$@" --secs 8
	[ -z "$pauser" ] || wait $pauser
	ntp_rec_stop INT
	rc=$?
	ntprof report -j $TB_OUT/$name.json --detail $TB_OUT/$name.ntp > $TB_OUT/$name.report 2>&1
	ntp_groups_read $name
	inc=$(ntp_host_incomplete $TB_OUT/$name.ntp "$cols")
	# the target's side: a send the context hooks missed leaves no
	# t_rsp_sent (the stages fall back to the storage's end, and the sums
	# still add up) or, for a write, no t_r2t_sent
	tcols=$NTP_T_READ_TS
	case " $cols " in *" h_r2t_arrive "*) tcols=$NTP_T_R2T_TS ;; esac
	tinc=$(ntp_side_incomplete target $TB_OUT/$name.ntp "$tcols")
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
	# With fentry the kernel counts the runs it skipped (recursion_misses):
	# on a preemptible kernel (7.x) a program is skipped on a CPU where a
	# preempted task is inside it. There the same allowance, at most as
	# many as the kernel counted; and as many records as that (at most 1 %)
	# may lack a timestamp, one per skipped run.
	local misses=${NTP_REC_MISSES:-0} skip_allow=0
	tb_figure $name-misses recursion_misses=$misses closed_target=${closed_t:-0}
	ntp_skip_count_check $name $TB_OUT/$name.err
	[ "$rh" -gt "$rt" ] && short=$((rh - rt))
	if [ ! -e /sys/kernel/btf/nvme_tcp ] || [ "$misses" -gt 0 ]; then
		allow=$(( ${closed_t:-0} + short ))
		[ -e /sys/kernel/btf/nvme_tcp ] && [ $allow -gt "$misses" ] && allow=$misses
		[ $allow -gt $((rh / 100)) ] && allow=$((rh / 100))
	fi
	if [ -e /sys/kernel/btf/nvme_tcp ]; then
		skip_allow=$misses
		[ $skip_allow -gt $((rh / 100)) ] && skip_allow=$((rh / 100))
	fi
	tb_check $name-join "$rc == 0 && $rh > 0 && $lost < $TB_LOAD_IOS && $rh - $rm <= $allow + $lost && $hbytes >= ($TB_LOAD_IOS - $lost) * $bs" \
		"$label: $rh host records ($hbytes bytes), $rt target, $rm joined (unjoined allowed: $allow: target records closed after a missed program run ${closed_t:-0}, never made $short, runs the kernel skipped $misses; plus $lost the kernel dropped, ring buffer full); load generator $TB_LOAD_IOS I/Os of $bs bytes"
	# the same kprobe misses leave a few host records without a timestamp on
	# 5.10; the report leaves them out and counts them. With fentry, a host
	# socket send was, rarely, not stamped on the command (on a loaded
	# machine only): over loopback the round trip can end on the other CPU
	# before the send's exit hook runs; the entry's time is now confirmed
	# at the completion (send_settle in bpf/ntprof.bpf.c). Still allowed:
	# at most 1 in 2000 records, on either side.
	local inc_allow=$((rh / 2000))
	[ -e /sys/kernel/btf/nvme_tcp ] || inc_allow=$((rh / 100))
	tb_check $name-slots "$inc <= $inc_allow + $skip_allow && $rh > 0" \
		"$inc of $rh host records lack one of: $cols (allowed: $inc_allow, plus $skip_allow for runs the kernel skipped)"
	tb_check $name-tslots "$tinc <= $inc_allow + $skip_allow && $rt > 0" \
		"$tinc of $rt target records lack one of: $tcols (allowed: $inc_allow, plus $skip_allow for runs the kernel skipped)"
	local order pairs obad
	order=$(ntp_arrival_order $TB_OUT/$name.ntp)
	pairs=${order% *}
	obad=${order#* }
	tb_check $name-order "$obad <= $inc_allow && $pairs > 0" \
		"$obad of $pairs joined commands have a host arrival before the target's send or after the host driver's handling (allowed: $inc_allow)"
	# With module BTF the recorder must have loaded the fentry flavour: a
	# verifier rejection of an fentry program makes it fall back to kprobes
	# (it says "using kprobes"), which would pass every other check here.
	# NTP_REC_FLAVOUR=kprobes: the kprobe flavour, asked for.
	if [ "${NTP_REC_FLAVOUR:-}" = kprobes ]; then
		tb_check $name-flavour "$(grep -c 'hooks: kprobe/kretprobe' $TB_OUT/$name.err) == 1" \
			"$(grep -m1 'hooks:' $TB_OUT/$name.err)"
	elif [ -e /sys/kernel/btf/nvme_tcp ]; then
		local fell=0
		grep -q 'using kprobes' $TB_OUT/$name.err && fell=1
		tb_check $name-fentry "$fell == 0" \
			"module BTF present, flavour: $([ $fell = 0 ] && echo fentry || grep -m1 'using kprobes' $TB_OUT/$name.err)"
	fi
	tb_check $name-sum "($sum - $e2e) < 0.01 && ($e2e - $sum) < 0.01" \
		"stages $hb + $hd + $net + $td + $st = $sum us, end to end $e2e us"
	if [ "$tcols" = "$NTP_T_R2T_TS" ]; then
		local split nw nbad
		split=$(ntp_r2t_data_split $TB_OUT/$name.ntp)
		nw=${split% *}
		nbad=${split#* }
		tb_check $name-tdata "$nbad <= $inc_allow && $nw > 0" \
			"$nbad of $nw R2T writes' target records lack t_data_arrive <= t_data_recv < t_storage_submit (allowed: $inc_allow); report's row: $(grep -m1 'target driver, data' $TB_OUT/$name.report | tr -s ' ')"
	fi
	tb_check $name-e2e "$e2e > 0 && $e2e <= $TB_LOAD_MEAN_US" \
		"ntprof mean $e2e us, load generator mean $TB_LOAD_MEAN_US us: gap $gap us"
}
