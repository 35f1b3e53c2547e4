# record-session: --session nvmeXnY records the commands of that namespace
# (which run on its hidden multipath path nvmeXcYnZ) and only those; a name
# that is no block device is refused naming it. The subsystem exports two
# namespaces (two null_blk disks) and both carry load, so:
#  record-session: -r host --session: only the session's host records;
#  record-session-both: -r both --session: the target side follows the
#    session too (the backing disk of the namespace the host's maps to): host
#    and target records of that namespace only, joined;
#  record-session-target: -r target --target-session NQN:2: the target
#    records of namespace 2 only; -r target --session nvmeXnY is refused,
#    naming --target-session;
#  record-session-top: ntprof-top -r both --session shows the session's
#    commands, joined (it once showed no record at all).
# tb-timeout: 480
. /tb/ntprof-checks.sh
tb_modules tcp
TB_BACKDEV=$(tb_nullblk tb0) && back2=$(tb_nullblk tb1) ||
	{ tb_result record-session FAIL "null_blk setup failed"; exit 0; }
export TB_BACKDEV
s=$NVMET/subsystems/$TB_NQN
mkdir "$s" && echo 1 > "$s/attr_allow_any_host" && mkdir "$s/namespaces/1" "$s/namespaces/2" &&
	echo -n "$TB_BACKDEV" > "$s/namespaces/1/device_path" && echo 1 > "$s/namespaces/1/enable" &&
	echo -n "$back2" > "$s/namespaces/2/device_path" && echo 1 > "$s/namespaces/2/enable" ||
	{ tb_result record-session FAIL "nvmet subsystem with two namespaces failed"; exit 0; }
tb_setup_tcp "$TB_BACKDEV" || { tb_result record-session FAIL "NVMe/TCP setup failed"; exit 0; }
dev=${TB_DEV#/dev/}
# the other namespace of the subsystem, as the host names it
other_dev=
for b in $(ls /sys/block | grep "^${TB_CTRL}n"); do [ "$b" != "$dev" ] && other_dev=$b; done
tb_log "session $dev (nsid $(cat /sys/block/$dev/nsid)) -> ${TB_BACKDEV#/dev/}; other $other_dev -> ${back2#/dev/}"
[ -n "$other_dev" ] || { tb_result record-session FAIL "the second namespace did not appear on the host"; exit 0; }
tb1=${back2#/dev/} tb0=${TB_BACKDEV#/dev/}
# other_load SECS [DEV]: load on DEV (default the other namespace) in the
# background (own output: tb_load's files are the foreground load's);
# other_wait waits for it
other_load() {
	( exec timeout $(($1 + 60)) ntp-load --rw randread --bs 4k --qd 1 --secs $1 /dev/${2:-$other_dev} \
		> $TB_OUT/other-load.txt 2>&1 ) &
	other_pid=$!
}
other_wait() { wait $other_pid; }

ntp_rec_start session --session $dev -s 1 --offline -o $TB_OUT/session.ntp ||
	{ tb_result record-session FAIL "did not start: $(tail -1 $TB_OUT/session.err)"; exit 0; }
other_load 3
tb_load --rw randread --bs 4k --qd 1 --secs 3
ios=$TB_LOAD_IOS
other_wait
ntp_rec_stop INT
n=$(ntprof dump $TB_OUT/session.ntp | awk -F, -v d=$dev '$1 == "host" && $10 == d' | wc -l)
other=$(ntprof dump $TB_OUT/session.ntp | awk -F, -v d=$dev 'NR > 1 && $10 != d' | wc -l)
ntprof record --session nvme9n9 -d 1 > $TB_OUT/bad.txt 2>&1
rc=$?
tb_check record-session "$n >= $ios && $ios > 0 && $other == 0 && $rc != 0" \
	"--session $dev: $n host records for $ios I/Os, $other of other disks; nvme9n9: $(cat $TB_OUT/bad.txt)"

# -r both: the target follows the session
ntp_rec_start both -r both --session $dev -s 1 --offline -o $TB_OUT/both.ntp ||
	{ tb_result record-session-both FAIL "did not start: $(tail -1 $TB_OUT/both.err)"; exit 0; }
other_load 3
tb_load --rw randread --bs 4k --qd 1 --secs 3
ios=$TB_LOAD_IOS
other_wait
ntp_rec_stop INT
ntprof dump $TB_OUT/both.ntp > $TB_OUT/both.csv
h=$(awk -F, -v d=$dev '$1 == "host" && $10 == d' $TB_OUT/both.csv | wc -l)
t=$(awk -F, -v d=$tb0 '$1 == "target" && $10 == d' $TB_OUT/both.csv | wc -l)
stray=$(awk -F, -v d=$dev -v t=$tb0 'NR > 1 && !(($1 == "host" && $10 == d) || ($1 == "target" && $10 == t))' $TB_OUT/both.csv | wc -l)
ntprof report -j $TB_OUT/both.json $TB_OUT/both.ntp > $TB_OUT/both.report 2>&1
matched=$(ntp_json_groups $TB_OUT/both.json | awk '/^records / { print $4 }')
tb_check record-session-both "$h >= $ios && $ios > 0 && $t * 100 >= $h * 98 && $stray == 0 && ${matched:-0} * 100 >= $h * 98" \
	"-r both --session $dev: $h host records for $ios I/Os, $t target records of $tb0, ${matched:-?} joined, $stray of other disks"

# -r target: the namespace named by --target-session; --session refused
ntprof record -r target --session $dev -d 1 > $TB_OUT/bad-target.txt 2>&1
rc=$?
ntp_rec_start tgt -r target --target-session $TB_NQN:2 -s 1 --offline -o $TB_OUT/tgt.ntp ||
	{ tb_result record-session-target FAIL "did not start: $(tail -1 $TB_OUT/tgt.err)"; exit 0; }
other_load 3 $dev
tb_load --rw randread --bs 4k --qd 1 --secs 3 /dev/$other_dev
ios2=$TB_LOAD_IOS
other_wait
ntp_rec_stop INT
ntprof dump $TB_OUT/tgt.ntp > $TB_OUT/tgt.csv
t=$(awk -F, -v d=$tb1 '$1 == "target" && $10 == d' $TB_OUT/tgt.csv | wc -l)
stray=$(awk -F, -v d=$tb1 'NR > 1 && !($1 == "target" && $10 == d)' $TB_OUT/tgt.csv | wc -l)
tb_check record-session-target "$t >= $ios2 && $ios2 > 0 && $stray == 0 && $rc != 0 && $(grep -c -- '--target-session' $TB_OUT/bad-target.txt) == 1" \
	"--target-session $TB_NQN:2: $t target records of $tb1 for $ios2 I/Os on $other_dev, $stray others; -r target --session: $(cat $TB_OUT/bad-target.txt)"

# ntprof-top -r both --session: the session's commands, joined
tb_log "ntprof-top -b -n 6 -r both -s 1 --session $dev --json"
( exec timeout -k 5 240 ntprof-top -b -n 6 -r both -s 1 --session $dev --json \
	> "$TB_OUT/top.json" 2> "$TB_OUT/top.err" ) &
top_pid=$!
i=0
while ! grep -q "hooks:" "$TB_OUT/top.err" 2>/dev/null && kill -0 $top_pid 2>/dev/null && [ $i -lt 1500 ]; do
	sleep 0.1; i=$((i + 1))
done
other_load 4
tb_load --rw randread --bs 4k --qd 1 --secs 4
other_wait
wait $top_pid
# each line's records are of its interval alone (docs/json-schema.md): summed
rec=$(grep -o '"records":{[^}]*}' "$TB_OUT/top.json" | awk -F'[:,}]' '
	{ for (i = 2; i < NF; i += 2) { k = $i; gsub(/[^a-z]/, "", k); n[k] += $(i + 1) } }
	END { printf "{\"host\":%d,\"target\":%d,\"matched\":%d}", n["host"], n["target"], n["matched"] }')
th=$(echo "$rec" | sed -n 's/.*"host":\([0-9]*\).*/\1/p')
tm=$(echo "$rec" | sed -n 's/.*"matched":\([0-9]*\).*/\1/p')
labels=$(grep -o '"label":"[^"]*"' "$TB_OUT/top.json" | sort -u | tr '\n' ' ')
tb_check record-session-top "${th:-0} > 0 && ${tm:-0} * 10 >= ${th:-0} * 9 && $(echo "$labels" | grep -c "$other_dev") == 0" \
	"ntprof-top -r both --session $dev: records $rec; groups $labels; $(tail -2 $TB_OUT/top.err | tr '\n' ' ')"
