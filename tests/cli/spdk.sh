#!/usr/bin/env bash
# SPDK through ntprof's USDT probes, with the stand-in of tests/tools (no
# SPDK needed): refusals; probe; record as target and host (the records are
# exactly the commands the stand-in sampled); the sampling variable written
# and set back to 0 on a normal end, on SIGTERM, and what SIGKILL leaves; two
# recorders refused; a process started later picked up; at the stop, the
# sampled commands in flight waited for (one 200 ms late is recorded), one
# never handed over counted lost within the bound, one whose submission
# failed not waited for, a count already non-zero
# at the start not waited on, a take-over with a command in flight, and the
# older patch's fixed grace; the join with a
# generated kernel-side file of the same commands both ways (the shared
# hash) and of two stand-ins; the reports' SPDK layout (docs/spdk.md); the
# stand-in's options for bench/spdk_cold.sh.
# Needs root and uprobes; skipped (77) otherwise.
set -u
cd "$(dirname "$0")/../.."
. tests/tools/standin-env.sh

# check NAME PATTERN FILE: FILE matches the extended regex
check() {
	if grep -qE -- "$2" "$3"; then ok "$1"; else bad "$1: no /$2/ in:"; sed 's/^/       /' "$3" | head -20; fi
}

# start_si NAME ARGS...: a stand-in in the background, its stdout in $W/NAME.out
start_si() {
	local name=$1
	shift
	"${SI}" "$@" > "$W/$name.out" 2> "$W/$name.si.err" &
	pids+=($!)
	eval "pid_$name=$!"
	for _ in $(seq 600); do grep -q ready "$W/$name.out" 2>/dev/null && return; sleep 0.05; done
}

# ended NAME PID SECONDS: until the stand-in NAME has ended; stopped (SIGTERM)
# if the recorder PID ends first or after SECONDS (the check then fails)
ended() {
	local p
	p=$(eval echo "\$pid_$1")
	for _ in $(seq $(($3 * 10))); do
		kill -0 "$p" 2>/dev/null && kill -0 "$2" 2>/dev/null || break
		sleep 0.1
	done
	kill -TERM "$p" 2>/dev/null
	wait "$p" 2>/dev/null
}

# sampling NAME: the stand-in's variable as it sees it (SIGUSR1); "none"
# when it has not answered within 10 s (not an earlier answer)
sampling() {
	local p n
	p=$(eval echo "\$pid_$1")
	n=$(grep -c '^sampling' "$W/$1.out")
	kill -USR1 "$p"
	for _ in $(seq 500); do
		if [ "$(grep -c '^sampling' "$W/$1.out")" -gt "$n" ]; then
			grep '^sampling' "$W/$1.out" | tail -1 | cut -d' ' -f2
			return
		fi
		sleep 0.02
	done
	echo none
}

# keys FILE.ntp: "cid,slba,nlb" of every record, sorted
keys() { "$NTPROF" dump "$1" | awk -F, 'NR > 1 { print $4 "," $7 "," $8 }' | sort; }

# ---- refusals ----
"$NTPROF" record -r target --spdk-target /bin/true -d 1 > "$W/r1" 2>&1
check refuse-no-probes '^ntprof: --spdk-target /bin/true: neither it nor a library it loads has the USDT probe ntprof:nvmf_tcp_done' "$W/r1"
# a number is not taken for a process id: BIN is a file
"$NTPROF" record --spdk-host 99999999 -d 1 > "$W/r1b" 2>&1
check refuse-pid '^ntprof: --spdk-host 99999999: no such file \(BIN is the SPDK program.s file, e\.g\. build/bin/nvmf_tgt; its processes are found by it, not given by process id\)$' "$W/r1b"
"$NTPROF" record -r target --spdk-target "$SI" -d 1 > "$W/r2" 2>&1
check refuse-no-process "^ntprof: --spdk-target $SI: no process of it is running \(start it first\)$" "$W/r2"
"$NTPROF" record -r host --spdk-target "$SI" -d 1 > "$W/r3" 2>&1
check refuse-role '^ntprof: --spdk-target records the target side: it needs -r target or -r both$' "$W/r3"
"$NTPROF" probe -r host --spdk-target "$SI" > "$W/r4" 2>&1
check probe-refuse-role '^ntprof: --spdk-target checks the target side: it needs -r target or -r both$' "$W/r4"
"$NTPROF" record --spdk-host "$SI" --session nvme0n1 -d 1 > "$W/r5" 2>&1
check refuse-session '^ntprof: --session names a kernel block device; an SPDK side has none$' "$W/r5"

# ---- probe: probes in the library, the process and its variable; probe leaves it 0 ----
start_si t1 -r target -l "$W/t1.list"
"$NTPROF" probe -r target --spdk-target "$SI" > "$W/probe" 2>&1
rc=$?
# the probe's site is a 5-byte nop (spdk/ntprof_usdt.h), which a kernel with
# arch_uprobe_optimize turns into a call instead of a trap
check probe-probes '^  ok      nvmf_tcp_done +1 site$' "$W/probe"
check probe-probes-nop5 '^  ok      nvmf_tcp_done_nop5 +1 site \(5-byte nop\)$' "$W/probe"
if grep -q ' arch_uprobe_optimize$' /proc/kallsyms; then
	optimized=1
	check probe-uprobe-optimized '^  uprobes on 5-byte nops: optimized by this kernel \(arch_uprobe_optimize in /proc/kallsyms\): the _nop5 probes are used$' "$W/probe"
else
	optimized=0
	check probe-uprobe-not-optimized '^  uprobes on 5-byte nops: not optimized \(no arch_uprobe_optimize in /proc/kallsyms\): the 1-byte ones are used$' "$W/probe"
fi
check probe-process "^running processes: $pid_t1 \(sampling variable at 0x[0-9a-f]+, in-flight count at 0x[0-9a-f]+\)$" "$W/probe"
check probe-program '^ok      ntp_u_nvmf_tcp_done USDT ntprof:nvmf_tcp_done \(required\)$' "$W/probe"
check probe-sock '^(ok|missing) +ntp_s_recvmsg_fe +fentry +tcp_recvmsg' "$W/probe"
check probe-load '^load: ok$' "$W/probe"
[ $rc = 0 ] && ok probe-exit || bad "probe-exit: $rc"
# a probe made by sys/sdt.h alone sits on a 1-byte nop: no "5-byte" said
printf '#include <sys/sdt.h>\nint main(void) { DTRACE_PROBE3(ntprof, nvmf_tcp_done, 0, 0, 0); return 0; }\n' \
	> "$W/plain.c"
if cc "$W/plain.c" -o "$W/plain" 2> "$W/plain.err"; then
	"$NTPROF" probe -r target --spdk-target "$W/plain" > "$W/plain.probe" 2>&1
	check probe-probes-short-nop '^  ok      nvmf_tcp_done +1 site$' "$W/plain.probe"
	if grep -q 'uprobes on 5-byte nops' "$W/plain.probe"; then bad probe-no-optimize-line; else ok probe-no-optimize-line; fi
else
	bad "probe-plain-build: $(head -3 "$W/plain.err")"
fi
[ "$(sampling t1)" = 0 ] && ok probe-leaves-variable || bad "probe-leaves-variable: $(sampling t1)"

# ---- record as target: the variable goes back to 0 at -d's end; the records at the stop ----
"$NTPROF" record -r target --spdk-target "$SI" -s 10 -d 2 --offline -o "$W/t1.ntp" > "$W/rec1" 2> "$W/rec1.err"
rc=$?
[ $rc = 0 ] && ok record-exit || { bad "record-exit: $rc"; cat "$W/rec1.err"; }
[ "$(sampling t1)" = 0 ] && ok record-reset-at-end || bad "record-reset-at-end: $(sampling t1)"
kill -TERM "$pid_t1"; wait "$pid_t1" 2>/dev/null
# The stand-in ran on through the stop. It runs one command at a time, in the
# order of its list: only the last one listed can have been in flight when
# the recorder wrote 0, and the recorder waits for it (docs/spdk.md, "when it
# stops"), however long a stand-in waiting for the CPU takes (within the
# bound). Every sampled command is recorded, none that was not sampled.
n_list=$(wc -l < "$W/t1.list")
keys "$W/t1.ntp" > "$W/t1.keys"
miss=$(sort "$W/t1.list" | comm -23 - "$W/t1.keys")
extra=$(sort "$W/t1.list" | comm -13 - "$W/t1.keys")
if [ "$n_list" -gt 100 ] && [ -z "$miss" ] && [ -z "$extra" ]; then
	ok "record-target-stop ($n_list sampled, $(wc -l < "$W/t1.keys") recorded)"
else
	bad "record-target-stop: $n_list sampled, $(wc -l < "$W/t1.keys") recorded; not recorded: $(
		echo $miss | head -c 200); recorded, not sampled: $(echo $extra | head -c 200)"
fi

# ---- the records are exactly the commands sampled ----
# Without a stop in the middle: the stand-in runs its commands once the
# recorder has set the variable and ends, and only then is the recorder
# stopped.
# recorded NAME N LABEL [VAR=VALUE...]: a stand-in of N commands recorded at
# -s 10 from its first command to its end (VAR=VALUE in the recorder's
# environment); LABEL passes when every command it sampled was recorded
# and no other
recorded() {
	local name=$1 n=$2 label=$3 rc n_list
	shift 3
	start_si "$name" -r target -n "$n" --wait-sampling -l "$W/$name.list"
	env "$@" "$NTPROF" record -r target --spdk-target "$SI" -s 10 --offline -o "$W/$name.ntp" \
		> /dev/null 2> "$W/rec-$name.err" &
	rec=$!
	pids+=($rec)
	ended "$name" "$rec" 300
	kill -INT "$rec"; wait "$rec"
	rc=$?
	n_list=$(wc -l < "$W/$name.list")
	if [ $rc = 0 ] && [ "$n_list" -gt 100 ] && grep -qx "standin: $n commands, $n_list sampled" "$W/$name.si.err" &&
		diff <(sort "$W/$name.list") <(keys "$W/$name.ntp") > /dev/null; then
		ok "$label ($n_list sampled, every one recorded)"
	else
		bad "$label: $n_list sampled, $(keys "$W/$name.ntp" | wc -l) recorded, the recorder's exit $rc:"
		sed 's/^/       /' "$W/rec-$name.err" "$W/$name.si.err" | head -20
	fi
}
recorded tl 12000 record-target-records
# the probes the recorder attached: the 5-byte twins where the kernel
# optimizes uprobes, the 1-byte ones elsewhere and with NTPROF_NO_NOP5=1,
# every sampled command recorded either way
said_nop1='^ntprof: SPDK: USDT probes attached to 1 process, sampling 1 in 10$'
if [ $optimized = 1 ]; then
	check record-probes-nop5 '^ntprof: SPDK: USDT probes attached to 1 process \(on 5-byte nops: uprobes this kernel optimizes\), sampling 1 in 10$' "$W/rec-tl.err"
	recorded tl1 3000 record-probes-nop1 NTPROF_NO_NOP5=1
	check record-probes-nop1-said "$said_nop1" "$W/rec-tl1.err"
else
	check record-probes-nop1 "$said_nop1" "$W/rec-tl.err"
fi
check report-target-stage '^target driver \(SPDK\) ' "$W/rec1"
check report-target-storage '^storage \(SPDK bdev, drive\) ' "$W/rec1"
check report-target-group '^== read 4KiB spdk-c1n1: [0-9]+ commands sampled \(from about .* commands/s\), target side only$' "$W/rec1"
check report-estimated '^throughput \(estimated from the sampled commands\): read ' "$W/rec1"
check record-says-missing "socket calls are not hooked \(.+\): the receive paths" "$W/rec1.err"
"$NTPROF" dump "$W/t1.ntp" | awk -F, 'NR > 1 && ($11 != "tcp" || $12 != "spdk" || $1 != "target") { bad = 1 } END { exit bad }' &&
	ok record-target-fields || bad record-target-fields

# ---- SIGTERM resets; a second recorder is refused while the first runs ----
start_si t2 -r target
"$NTPROF" record -r target --spdk-target "$SI" -s 7 --offline > /dev/null 2> "$W/rec2.err" &
rec=$!
pids+=($rec)
for _ in $(seq 300); do [ "$(sampling t2)" = 7 ] && break; sleep 0.1; done
[ "$(sampling t2)" = 7 ] && ok record-writes-variable || bad "record-writes-variable: $(sampling t2)"
"$NTPROF" record -r target --spdk-target "$SI" -s 3 -d 1 > "$W/r6" 2>&1
check refuse-two-recorders "^ntprof: process $pid_t2 of $SI: its sampling variable is held by another ntprof recorder \(pid $rec\)" "$W/r6"
[ "$(sampling t2)" = 7 ] && ok refused-recorder-left-it || bad "refused-recorder-left-it: $(sampling t2)"

# a process started later is picked up within the interval
start_si t3 -r target -l "$W/t3.list"
for _ in $(seq 300); do [ "$(sampling t3)" = 7 ] && break; sleep 0.1; done
[ "$(sampling t3)" = 7 ] && ok record-picks-up-later || bad "record-picks-up-later: $(sampling t3)"
check record-says-picked-up "process $pid_t3 of .* picked up, sampling 1 in 7" "$W/rec2.err"
kill -TERM "$rec"; wait "$rec"
[ "$(sampling t2)" = 0 ] && [ "$(sampling t3)" = 0 ] && ok record-reset-on-sigterm ||
	bad "record-reset-on-sigterm: $(sampling t2) $(sampling t3)"

# SIGKILL leaves the variable set; the next recorder takes it over and resets it
"$NTPROF" record -r target --spdk-target "$SI" -s 5 --offline > /dev/null 2>&1 &
rec=$!
pids+=($rec)
for _ in $(seq 300); do [ "$(sampling t2)" = 5 ] && break; sleep 0.1; done
kill -9 "$rec"; wait "$rec" 2>/dev/null
[ "$(sampling t2)" = 5 ] && ok sigkill-leaves-variable || bad "sigkill-leaves-variable: $(sampling t2)"
"$NTPROF" record -r target --spdk-target "$SI" -s 9 -d 1 --offline > /dev/null 2> "$W/rec3.err"
check takeover-says "process $pid_t2 of .* was left sampling 1 in 5 .*taking it over" "$W/rec3.err"
[ "$(sampling t2)" = 0 ] && ok takeover-resets || bad "takeover-resets: $(sampling t2)"
kill -TERM "$pid_t2" "$pid_t3"; wait "$pid_t2" "$pid_t3" 2>/dev/null

# ---- the stop waits for the sampled commands in flight (ntprof_inflight) ----
# secs START END: the seconds between two `date +%s%N`
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b - a) / 1e9 }'; }
# A sampled command held until the stop, then 200 ms more: recorded (with the
# old fixed 20 ms it was not), not counted lost, the stop waits for it.
start_si ho -r target --wait-sampling --hold-us 200000 -l "$W/ho.list"
t0=$(date +%s%N)
"$NTPROF" record -r target --spdk-target "$SI" -s 1 -d 1 --offline -o "$W/ho.ntp" > "$W/ho.rep" 2> "$W/ho.err"
t1=$(date +%s%N)
kill -TERM "$pid_ho"; wait "$pid_ho" 2>/dev/null
if [ "$(wc -l < "$W/ho.list")" = 1 ] && diff "$W/ho.list" <(keys "$W/ho.ntp") > /dev/null; then
	ok "stop-waits-in-flight (1 sampled, held 200 ms past the stop, recorded; $(secs "$t0" "$t1") s)"
else
	bad "stop-waits-in-flight: $(wc -l < "$W/ho.list") sampled, $(keys "$W/ho.ntp" | wc -l) recorded:"
	sed 's/^/       /' "$W/ho.err" | head -10
fi
grep -qE "lost|still in flight" "$W/ho.err" && bad "stop-waits-not-lost: $(grep -E "lost|still in flight" "$W/ho.err")" ||
	ok stop-waits-not-lost
# One never handed over (freed at the stop without its probe, as a qpair torn
# down): counted lost, in one line and in the report, and the stop returns
# within its bound (1 s) instead of waiting for it.
start_si ab -r target --wait-sampling --hold-us 0 --abandon -l "$W/ab.list"
t0=$(date +%s%N)
"$NTPROF" record -r target --spdk-target "$SI" -s 1 -d 1 --offline -o "$W/ab.ntp" > "$W/ab.rep" 2> "$W/ab.err"
rc=$?
t1=$(date +%s%N)
check stop-counts-lost "^ntprof: SPDK: 1 sampled command still in flight 1000 ms after the stop \(process $pid_ab of $SI\): not recorded, counted as lost$" "$W/ab.err"
[ "$(grep -c 'still in flight' "$W/ab.err")" = 1 ] && ok stop-lost-one-line || bad "stop-lost-one-line: $(grep -c 'still in flight' "$W/ab.err")"
check stop-lost-in-report '^note: records lost before reaching the recording: 1 ' "$W/ab.rep"
# said as the SPDK side's, by its cause: not as the kernel's ring buffer's
check stop-lost-spdk-side "^ntprof: SPDK side: 1 records lost: 0 with its ring buffer full, 1 in flight past the stop's wait$" "$W/ab.err"
grep -q 'kernel side' "$W/ab.err" && bad "stop-lost-not-kernel: $(grep 'kernel side' "$W/ab.err")" || ok stop-lost-not-kernel
[ $rc = 0 ] && [ "$(keys "$W/ab.ntp" | wc -l)" = 0 ] && ok stop-lost-not-recorded || bad "stop-lost-not-recorded: exit $rc, $(keys "$W/ab.ntp" | wc -l) records"
# -d 1, loading, the bound's 1 s: far less than the 10 s said here
s_ab=$(secs "$t0" "$t1")
awk -v s="$s_ab" 'BEGIN { exit !(s >= 2.0 && s < 10) }' && ok "stop-bounded ($s_ab s)" || bad "stop-bounded: $s_ab s"
# The bound itself, from the stand-in's sight of the 0 (polled every 0.2 ms)
# to the recorder's exit: not less than the second the stop waits for the
# abandoned command (load only lengthens it); not several.
seen=$(sed -n 's/^standin: stop seen at //p' "$W/ab.si.err" | head -1)
w_ab=$(secs "${seen:-0}" "$t1")
if [ -z "$seen" ]; then
	bad "stop-waits-its-second: the stand-in saw no stop"
elif awk -v s="$w_ab" 'BEGIN { exit !(s >= 0.98 && s < 5) }'; then
	ok "stop-waits-its-second ($w_ab s from the 0 to the exit)"
else
	bad "stop-waits-its-second: $w_ab s from the 0 to the exit"
fi
# The same process again: the abandoned command stays begun and never done,
# a count already non-zero when this recorder starts; its stop does not wait
# on it, and this recorder's own held command (released at its stop) is
# recorded.
"$NTPROF" record -r target --spdk-target "$SI" -s 1 -d 1 --offline -o "$W/ab2.ntp" > /dev/null 2> "$W/ab2.err"
kill -TERM "$pid_ab"; wait "$pid_ab" 2>/dev/null
if [ "$(wc -l < "$W/ab.list")" = 2 ] && [ "$(keys "$W/ab2.ntp")" = "$(tail -1 "$W/ab.list")" ] &&
	! grep -q "still in flight" "$W/ab2.err"; then
	ok "stop-base-not-zero (the leaked command not waited on, the next one recorded)"
else
	bad "stop-base-not-zero: $(wc -l < "$W/ab.list") sampled, $(keys "$W/ab2.ntp" | wc -l) recorded:"
	sed 's/^/       /' "$W/ab2.err" | head -10
fi
# A sampled command whose submission fails once it was picked (the RDMA
# host puts the request back unsent): counted done without its probe, so
# the stop does not wait for it nor count it lost; the others recorded.
start_si sf -r host -t rdma --wait-sampling --submit-fail -l "$W/sf.list"
t0=$(date +%s%N)
"$NTPROF" record -r host -t rdma --spdk-host "$SI" -s 1 -d 1 --offline -o "$W/sf.ntp" > "$W/sf.rep" 2> "$W/sf.err"
rc=$?
t1=$(date +%s%N)
kill -TERM "$pid_sf"; wait "$pid_sf" 2>/dev/null
if [ $rc = 0 ] && grep -qx "standin: a sampled command's submission failed" "$W/sf.si.err" &&
	[ "$(wc -l < "$W/sf.list")" -gt 10 ] && diff <(sort "$W/sf.list") <(keys "$W/sf.ntp") > /dev/null &&
	! grep -qE "lost|still in flight" "$W/sf.err" "$W/sf.rep"; then
	ok "stop-submit-failed-not-waited ($(wc -l < "$W/sf.list") recorded, none lost; $(secs "$t0" "$t1") s)"
else
	bad "stop-submit-failed-not-waited: exit $rc, $(wc -l < "$W/sf.list") sampled, $(keys "$W/sf.ntp" | wc -l) recorded:"
	sed 's/^/       /' "$W/sf.err" "$W/sf.si.err" | grep -v '^ *$' | head -10
fi
# A take-over while a sampled command of the killed recorder is in flight:
# the new recorder lets it finish before it takes its base (the command is
# then its record), so its own held command is still waited for at its stop.
start_si tk -r target --wait-sampling --hold-us 300000 -l "$W/tk.list"
"$NTPROF" record -r target --spdk-target "$SI" -s 1 --offline > /dev/null 2> "$W/tk1.err" &
rec=$!
pids+=($rec)
for _ in $(seq 300); do grep -q 'profiling as' "$W/tk1.err" && break; sleep 0.1; done
sleep 0.5
kill -9 "$rec"; wait "$rec" 2>/dev/null
"$NTPROF" record -r target --spdk-target "$SI" -s 1 -d 1 --offline -o "$W/tk.ntp" > /dev/null 2> "$W/tk.err"
kill -TERM "$pid_tk"; wait "$pid_tk" 2>/dev/null
if [ "$(wc -l < "$W/tk.list")" = 2 ] && diff <(sort "$W/tk.list") <(keys "$W/tk.ntp") > /dev/null &&
	grep -q "was left sampling 1 in 1" "$W/tk.err" && ! grep -q "still in flight" "$W/tk.err"; then
	ok "stop-after-takeover (the killed recorder's command and this one's, both recorded)"
else
	bad "stop-after-takeover: $(wc -l < "$W/tk.list") sampled, $(keys "$W/tk.ntp" | wc -l) recorded:"
	sed 's/^/       /' "$W/tk.err" | head -10
fi
# A command of an earlier recording, in flight past that one's wait (counted
# lost there), handed over during the next recording (--rearm: just after
# that one set the variable). It is not the next recording's record, and its
# done lowers that one's base by one: its stop still waits for its own
# command in flight (held past the bound here, counted lost). Without this,
# the earlier command was recorded and the stop came back one command early,
# its own command neither recorded nor counted.
start_si er -r target --wait-sampling --hold-us 200000 --rearm -l "$W/er.list"
"$NTPROF" record -r target --spdk-target "$SI" -s 1 -d 1 --offline -o "$W/er1.ntp" > /dev/null 2> "$W/er1.err"
"$NTPROF" record -r target --spdk-target "$SI" -s 1 -d 1 --offline -o "$W/er2.ntp" > "$W/er2.rep" 2> "$W/er2.err"
kill -TERM "$pid_er"; wait "$pid_er" 2>/dev/null
lost1="^ntprof: SPDK: 1 sampled command still in flight 1000 ms after the stop \(process $pid_er of $SI\): not recorded, counted as lost$"
if [ "$(wc -l < "$W/er.list")" = 2 ] && grep -qE "$lost1" "$W/er1.err" && grep -qE "$lost1" "$W/er2.err" &&
	[ "$(keys "$W/er2.ntp" | wc -l)" = 0 ]; then
	ok "stop-earlier-recording (its command not recorded, the base lowered: this one's waited for, counted lost)"
else
	bad "stop-earlier-recording: $(wc -l < "$W/er.list") sampled, $(keys "$W/er2.ntp" | wc -l) recorded:"
	sed 's/^/       /' "$W/er1.err" "$W/er2.err" | grep -v 'socket calls' | head -12
fi
check stop-earlier-says "^ntprof: SPDK: 1 sampled command of an earlier recording \(in flight when this one set the sampling variable\) handed over during this one: not in this recording$" "$W/er2.err"

# A child forked by a recorded process (picked up at a rescan) holds this
# recorder's -s, inherited: not a killed recorder's to take over (no second's
# settling, no such message).
start_si fk -r target --wait-sampling --fork
"$NTPROF" record -r target --spdk-target "$SI" -s 3 -d 3 --offline -o "$W/fk.ntp" > /dev/null 2> "$W/fk.err"
pid_fkc=$(sed -n 's/^forked //p' "$W/fk.out")
kill -TERM "$pid_fk" ${pid_fkc:+"$pid_fkc"}; wait "$pid_fk" 2>/dev/null
if [ -n "$pid_fkc" ] && grep -q "process $pid_fkc of .* picked up, sampling 1 in 3" "$W/fk.err" &&
	! grep -q "was left sampling" "$W/fk.err"; then
	ok "fork-not-takeover (child $pid_fkc picked up as such)"
else
	bad "fork-not-takeover: child ${pid_fkc:-none}:"
	sed 's/^/       /' "$W/fk.err" | grep -v 'socket calls' | head -8
fi

# ntprof's older patch (the library without ntprof_inflight, the stand-in's
# built with it renamed): probe says so, record says the 20 ms grace once
# and still records and resets the variable.
mkdir -p "$W/oldlib"
if ${CC:-cc} -std=gnu11 -D_GNU_SOURCE -pthread -I. -Ibpf -fPIC -shared -Dntprof_inflight=ntprof_old_inflight \
	tests/tools/spdk-standin-lib.c -o "$W/oldlib/libntp_standin.so" 2> "$W/oldlib.err"; then
	LD_LIBRARY_PATH=$W/oldlib start_si od -r target -l "$W/od.list"
	LD_LIBRARY_PATH=$W/oldlib "$NTPROF" probe -r target --spdk-target "$SI" > "$W/od.probe" 2>&1
	check old-patch-probe "^running processes: $pid_od \(sampling variable at 0x[0-9a-f]+, no in-flight count ntprof_inflight: an older patch, the stop waits 20 ms\)$" "$W/od.probe"
	LD_LIBRARY_PATH=$W/oldlib "$NTPROF" record -r target --spdk-target "$SI" -s 10 -d 1 --offline \
		-o "$W/od.ntp" > /dev/null 2> "$W/od.err"
	rc=$?
	check old-patch-says "^ntprof: SPDK: process $pid_od of $SI has no ntprof_inflight \(ntprof's older SPDK patch\): at the stop its sampled commands in flight get 20 ms" "$W/od.err"
	[ "$(grep -c 'older SPDK patch' "$W/od.err")" = 1 ] && ok old-patch-once || bad "old-patch-once: $(grep -c 'older SPDK patch' "$W/od.err")"
	[ $rc = 0 ] && [ "$(keys "$W/od.ntp" | wc -l)" -gt 10 ] && [ "$(sampling od)" = 0 ] && ok "old-patch-records ($(keys "$W/od.ntp" | wc -l))" ||
		bad "old-patch-records: exit $rc, $(keys "$W/od.ntp" | wc -l) records, variable $(sampling od)"
	kill -TERM "$pid_od"; wait "$pid_od" 2>/dev/null
else
	bad "old-patch-build: $(head -3 "$W/oldlib.err")"
fi

# ---- the join: the same commands on both sides, sampled by the shared hash ----
"$NTPROF" generate -r host -s 1 -n 3000 --qd 1 --rate 8000 -q -o "$W/all.ntp"
"$NTPROF" dump "$W/all.ntp" > "$W/all.csv"
"$NTPROF" generate -r host -s 10 -n 3000 --qd 1 --rate 8000 -q -o "$W/kh.ntp"
"$NTPROF" generate -r target -s 10 -n 3000 --qd 1 --rate 8000 -q -o "$W/kt.ntp"
# SPDK target against the kernel host's generated file
start_si jt -r target -t tcp -i "$W/all.csv" -n 3000 --wait-sampling --storage-us 30
"$NTPROF" record -r target --spdk-target "$SI" -s 10 -d 30 --offline -o "$W/jt.ntp" > /dev/null 2>&1 &
rec=$!
pids+=($rec)
ended jt "$rec" 300; kill -INT "$rec"; wait "$rec"
"$NTPROF" report --detail "$W/kh.ntp" "$W/jt.ntp" > "$W/join1" 2>&1
nh=$(keys "$W/kh.ntp" | wc -l)
check join-kernel-host-spdk-target "^records: $nh host, $nh target; $nh matched \(100 % of the host's\)$" "$W/join1"
check join1-stages '^target driver \(SPDK\) .*' "$W/join1"
check join1-host-driver '^host driver \(nvme-tcp\) ' "$W/join1"
check join1-says-missing "^note: no SPDK target record has a packet arrival from the socket hooks \(not hooked, or no socket traffic\): its receive path reads 0, its time is in the wire; the response counts as sent when SPDK queued it$" "$W/join1"
# SPDK host against the kernel target's generated file
start_si jh -r host -i "$W/all.csv" -n 3000 --wait-sampling --wait-us 40
"$NTPROF" record -r host --spdk-host "$SI" -s 10 -d 30 --offline -o "$W/jh.ntp" > "$W/jh.report" 2>&1 &
rec=$!
pids+=($rec)
ended jh "$rec" 300; kill -INT "$rec"; wait "$rec"
"$NTPROF" report --detail "$W/jh.ntp" "$W/kt.ntp" > "$W/join2" 2>&1
check join-spdk-host-kernel-target "^records: $nh host, $nh target; $nh matched \(100 % of the host's\)$" "$W/join2"
check join2-host-driver '^host driver \(SPDK\) ' "$W/join2"
check join2-target-driver '^target driver \(nvmet-tcp\) ' "$W/join2"
check hostonly-net-and-target '^network and target \(not recorded\) ' "$W/jh.report"
check hostonly-group '^== read 4KiB spdk-c1n1: [0-9]+ commands sampled .*host side only$' "$W/jh.report"
check hostonly-estimated '^throughput \(estimated from the sampled commands\)' "$W/jh.report"
# SPDK on both sides of one machine, over RDMA, in one recording (-r both):
# the host is another binary (as spdk_nvme_perf is not nvmf_tgt), since a
# recorder takes every running process of the binary it is given
cp "$SI" "$W/spdk-standin-host"
SIH=$W/spdk-standin-host
start_si rt -r target -t rdma -i "$W/all.csv" -n 3000 --wait-sampling
SI=$SIH start_si rh -r host -t rdma -i "$W/all.csv" -n 3000 --wait-sampling
"$NTPROF" record -r both -t rdma --spdk-target "$SI" --spdk-host "$SIH" -s 10 -d 30 --offline \
	-o "$W/rb.ntp" > /dev/null 2> "$W/rb.err" &
rec=$!
pids+=($rec)
ended rt "$rec" 300; ended rh "$rec" 300; kill -INT "$rec"; wait "$rec"
"$NTPROF" report --detail "$W/rb.ntp" > "$W/join3" 2>&1
check join-spdk-both-rdma "^records: $nh host, $nh target; $nh matched \(100 % of the host's\)$" "$W/join3"
check join3-network '^network \(RDMA, NICs, wire\) ' "$W/join3"
check join3-storage '^storage \(SPDK bdev, drive\) ' "$W/join3"
check join3-component '^storage: target block layer and drive +[0-9]+ ' "$W/join3"

# one process that is host and target: both sides attached to it, one lock,
# the variable written once and set back to 0
start_si hb -r both -i "$W/all.csv" -n 3000 --wait-sampling --wait-us 20 --storage-us 20
"$NTPROF" record -r both --spdk-target "$SI" --spdk-host "$SI" -s 10 -d 30 --offline \
	-o "$W/hb.ntp" > /dev/null 2> "$W/hb.err" &
rec=$!
pids+=($rec)
ended hb "$rec" 300; kill -INT "$rec"; wait "$rec"
"$NTPROF" report "$W/hb.ntp" > "$W/join4" 2>&1
check join-one-process-both-sides "^records: $nh host, $nh target; $nh matched \(100 % of the host's\)$" "$W/join4"

# ---- the stand-in's options for bench/spdk_cold.sh ----
"$SI" -r target -n 1 --bpf-time ntp_u_ > "$W/bt0" 2>&1
rc=$?
if [ $rc = 2 ] && [ "$(wc -l < "$W/bt0")" = 1 ] && grep -q -- '--bpf-time ntp_u_: needs --log$' "$W/bt0"; then
	ok standin-bpf-time-needs-log
else
	bad "standin-bpf-time-needs-log: exit $rc: $(cat "$W/bt0")"
fi
# a line per command, "sampled latency_ns", a sampled one's with the run
# time of the done probe's program (counted only with bpf_stats_enabled);
# a prefix that names no program: one line at the first sampled command
stats_was=$(cat /proc/sys/kernel/bpf_stats_enabled)
echo 1 > /proc/sys/kernel/bpf_stats_enabled
for p in ntp_u_ nosuch_; do
	start_si "bt_$p" -r target -n 300 --spin --storage-us 5 --wait-sampling --log "$W/bt_$p.log" --bpf-time "$p"
	"$NTPROF" record -r target --spdk-target "$SI" -s 1 --offline -o "$W/bt_$p.ntp" > /dev/null 2> "$W/bt_$p.rec" &
	rec=$!
	pids+=($rec)
	ended "bt_$p" "$rec" 120; kill -INT "$rec"; wait "$rec"
done
echo "$stats_was" > /proc/sys/kernel/bpf_stats_enabled
if [ "$(awk '$1 == 1 && $2 > $3 && $3 > 0' "$W/bt_ntp_u_.log" | wc -l)" = 300 ] &&
	[ "$(wc -l < "$W/bt_ntp_u_.log")" = 300 ]; then
	ok "standin-bpf-time (300 commands, each sampled, with its program's run time)"
else
	bad "standin-bpf-time: $(wc -l < "$W/bt_ntp_u_.log") lines:"; head -5 "$W/bt_ntp_u_.log"
fi
if [ "$(cat "$W/bt_nosuch_.si.err")" = "spdk-standin: --bpf-time nosuch_: no BPF program of that name is loaded" ] &&
	[ ! -s "$W/bt_nosuch_.log" ]; then
	ok standin-bpf-time-no-program
else
	bad "standin-bpf-time-no-program: $(head -3 "$W/bt_nosuch_.si.err")"
fi

[ $fail = 0 ] && echo "spdk.sh: all checks passed"
exit $fail
