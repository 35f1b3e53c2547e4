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
	kill -${1:-INT} $NTP_REC_PID 2>/dev/null
	wait $NTP_REC_PID
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

# ntp_json_qd FILE.json: the first group's queue depths from a report's JSON:
#   "seconds commands qd_commands qd_incomplete qd_counted" on the first line
#   (qd_counted 1/0), then one line per stage "KEY COUNTED LITTLE" (avg_qd and
#   avg_qd_little of the "stages" array; COUNTED is Little's when not counted).
ntp_json_qd() {
	awk '
	function num(s) { sub(/^[^:]*:/, "", s); gsub(/[^0-9.eE+-]/, "", s); return s + 0 }
	{ gsub(/^[ \t]+/, "") }
	/^"seconds":/ && secs == "" { secs = num($0) }
	/^"label":/ { ng++ }
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
		printf "%s %d %d %d %d\n", secs, cmds, qdc, qdi, counted
		for (i = 1; i <= n; i++) printf "%s %.4f %.4f\n", order[i], qd[order[i]], lit[order[i]]
	}' "$1"
}

# ntp_inflight_mean DEV SECS: the requests in flight on DEV's blk-mq path (the
# busy tags of every hctx, as tb_inflight_max reads them), sampled about every
# 0.1 s for SECS: "MEAN SAMPLES". A tag is held from the request's allocation
# to its free after block_rq_complete: the span of ntprof's host side.
ntp_inflight_mean() {
	local b=${1#/dev/} d end n sum=0 cnt=0
	d=$(ls -d /sys/kernel/debug/block/${b%n*}c*n${b##*n} 2>/dev/null | head -1)
	[ -n "$d" ] || d=/sys/kernel/debug/block/$b
	end=$(awk -v t=$(tb_ts) -v s=$2 'BEGIN { print t + s }')
	while tb_fcmp "$(tb_ts) < $end"; do
		n=$(cat "$d"/hctx*/tags 2>/dev/null | awk '/^bitmap_tags:/ { b = 1 } /^breserved_tags:/ { b = 0 }
			b && /^busy=/ { n += substr($0, 6) } END { print n + 0 }')
		sum=$((sum + n))
		cnt=$((cnt + 1))
		sleep 0.1
	done
	awk -v s=$sum -v c=$cnt 'BEGIN { printf "%.3f %d\n", c ? s / c : 0, c }'
}
