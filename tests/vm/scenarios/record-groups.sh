# record-groups: the kernel's exact command counts with groups that share
# count_group's per-CPU slots (bpf/ntprof_common.bpf.h: 64 per CPU, picked
# by a hash of the group's key; a group whose slot another owns counts in
# the per-CPU hash group_counts, and user space adds both,
# src/collector/collector.c). 60 sizes of random reads over NVMe/TCP, 512 B
# to 30 KiB (a report shows 64 groups at most), NTP_GROUP_IOS each at QD1
# from CPU 0 (taskset), so that the host's nvme_setup_cmd sees every group
# on one CPU: 60 keys in 64 slots, of which some share one (the keys, hence
# their slots, are the same in every run). Recorded twice, -r host then
# -r target, -s 1. Checks, per side:
#   record-groups-host-count, record-groups-target-count
#                          every size's group counted exactly NTP_GROUP_IOS
#                          commands (4 KiB: up to 8 more, the kernel's own
#                          I/O), and no other size was counted
#   record-groups-host-hash
#                          the hash held some of the groups while the host
#                          recorder ran (read with bpftool): the counts went
#                          through both ways
# The target's hash is a figure: its completions may run on either CPU, and
# two groups that share a slot on different CPUs both count in it.
# tb-timeout: 240
. /tb/ntprof-checks.sh
name=record-groups
n_sizes=60
ios=${NTP_GROUP_IOS:-12}
tb_setup_tcp || { tb_result $name FAIL "NVMe/TCP setup failed"; exit 0; }

# the "size commands" of each group of a report's JSON
json_counts() {
	awk '
	function num(s) { sub(/^[^:]*:/, "", s); gsub(/[^0-9.eE+-]/, "", s); return s + 0 }
	{ gsub(/^[ \t]+/, "") }
	/^"label":/ { ng++; size = "" }
	ng && /^"size":/ && size == "" { size = num($0) }
	ng && /^"commands":/ && size != "" { print size, num($0); size = "" }' "$1"
}

run_side() { # ROLE
	local role=$1 rec=$name-$1 i bs rc hashed bad=0 seen=0 extra=0 line
	ntp_rec_start $rec -r $role -s 1 --offline -o $TB_OUT/$rec.ntp ||
		{ tb_result $rec-count FAIL "ntprof record -r $role did not start: $(tail -1 $TB_OUT/$rec.err)"; return; }
	for i in $(seq 1 $n_sizes); do
		bs=$((i * 512))
		taskset -c 0 ntp-load --rw randread --bs $bs --qd 1 --count $ios --seed $i --quiet $TB_DEV \
			>> $TB_OUT/$rec.load 2>&1 || tb_log "ntp-load --bs $bs failed: $(tail -1 $TB_OUT/$rec.load)"
	done
	# the groups that count in the hash, before the maps go with the recorder
	hashed=$(bpftool -j map dump name group_counts 2>/dev/null | grep -o '"key":' | wc -l)
	ntp_rec_stop INT
	rc=$?
	ntprof report -j $TB_OUT/$rec.json $TB_OUT/$rec.ntp > $TB_OUT/$rec.report 2>&1
	json_counts $TB_OUT/$rec.json > $TB_OUT/$rec.counts
	while read -r bs cmds; do
		if [ $((bs % 512)) -ne 0 ] || [ $bs -gt $((n_sizes * 512)) ]; then
			extra=$((extra + 1))
			line="$line; unexpected group of $bs bytes: $cmds"
		elif [ $bs -eq 4096 ] && [ $cmds -ge $ios ] && [ $cmds -le $((ios + 8)) ]; then
			seen=$((seen + 1))
		elif [ $cmds -eq $ios ]; then
			seen=$((seen + 1))
		else
			bad=$((bad + 1))
			line="$line; $bs bytes: $cmds"
		fi
	done < $TB_OUT/$rec.counts
	tb_figure $rec sizes=$seen wrong=$bad extra=$extra hash_groups=$hashed
	tb_check $rec-count "$rc == 0 && $seen == $n_sizes && $bad == 0 && $extra == 0" \
		"exit $rc; $seen of $n_sizes sizes counted $ios commands each, $bad otherwise, $extra other groups; $hashed groups in the hash${line}"
	if [ $role = host ]; then
		tb_check $rec-hash "$hashed > 0" \
			"$hashed of $n_sizes groups counted in group_counts, the rest in their slots"
	fi
}

run_side host
run_side target
