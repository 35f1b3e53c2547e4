#!/usr/bin/env bash
# ntprof-top in a real terminal: starts `ntprof-top --replay` on a generated
# recording inside tmux, presses keys (help, detail, namespace, I/O type,
# pause, step, record, snapshot, what-if and its snapshot, resize, Ctrl-L, quit), checks the captured
# panes and the files written (the recording is read back by ntprof report).
# The panes are kept in $O/top-panes/ for people to look at.
# Environment: NTPROF, NTPROF_TOP (set by tests/run-tests.sh), O.
set -u
cd "$(dirname "$0")/../.."
NTPROF=$(realpath "${NTPROF:-build/ntprof}")
TOP=$(realpath "${NTPROF_TOP:-build/ntprof-top}")
if ! command -v tmux >/dev/null 2>&1; then
	echo "SKIP: top_tmux.sh: tmux is not installed (apt-get install tmux)"
	exit 77
fi
work=$(mktemp -d /tmp/ntprof-top-test.XXXXXX)
panes=${O:-build}/top-panes
mkdir -p "$panes"
sock=ntprof-top-test-$$
tm() { tmux -L "$sock" -f /dev/null "$@"; }
cleanup() { tm kill-server 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pane() { tm capture-pane -p -t top; }
# wait_for TEXT [SECONDS]: until the pane shows TEXT (fixed string).
wait_for() {
	local end=$((SECONDS + ${2:-10}))
	while [ $SECONDS -lt "$end" ]; do
		pane | grep -qF -- "$1" && return 0
		sleep 0.1
	done
	fail "pane never showed '$1'; it shows:"
	pane | sed 's/^/    | /'
	return 1
}
key() { tm send-keys -t top "$@"; }
# shown: the number of the interval in the header ("#N", "PAUSED #N"), or
# nothing before the first one
shown() { pane | sed -n '1s/.* #\([0-9][0-9]*\) *$/\1/p'; }
# wait_shown N [SECONDS]: until the header shows interval N or a later one.
# The intervals go by at the replay's pace whether or not the pane is looked
# at: one number may be on the screen for too short a time to be seen.
wait_shown() {
	local end=$((SECONDS + ${2:-20})) n
	while [ $SECONDS -lt "$end" ]; do
		n=$(shown)
		[ -n "$n" ] && [ "$n" -ge "$1" ] && return 0
		sleep 0.1
	done
	fail "the header never showed interval $1 or a later one; it shows:"
	pane | sed 's/^/    | /'
	return 1
}

"$NTPROF" generate -q -o "$work/run.ntp" -d 120 --rate 20000 --sizes 4K,128K --read 70 -s 100 --host-queues ||
	{ echo "FAIL: ntprof generate"; exit 1; }
tm new-session -d -s top -x 100 -y 30 \
	"cd '$work' && LANG=C.UTF-8 TERM=xterm-256color '$TOP' --replay run.ntp --dir '$work' 2>'$work/stderr'; echo \$? >'$work/exit'; sleep 30"
tm set-option -g window-size manual >/dev/null

# The main screen: header, groups with their five stages, a second interval.
wait_shown 1 30
wait_for "read 4KiB nvme1n1"
for t in "ntprof-top  synth-loopback  host+target NVMe/TCP  1 in 100 sampled" "lost 0" "rec off" \
	 "host block" "host driver" "network" "target driver" "storage" "avg QD" "h help"; do
	pane | grep -qF -- "$t" || fail "main screen lacks '$t'"
done
pane >"$panes/main.txt"

# Help, generated from the key table; any help key goes back.
key h
wait_for "keys (h, ? or F1 again: back)"
for t in "h ? F1" "Up Down" "n N" "Space" "Left Right" "Ctrl-L" "Little's law"; do
	pane | grep -qF -- "$t" || fail "help lacks '$t'"
done
pane >"$panes/help.txt"
key '?'
wait_for "avg QD"

# Detail: the component table (docs/stage-model.md) of the selected group (the second one).
key Down
key d
wait_for "components, in path order"
wait_for "== read 128KiB nvme1n1"
for t in "host driver, submission" "storage: target block layer and drive" "end to end"; do
	pane | grep -qF -- "$t" || fail "detail lacks '$t'"
done
pane >"$panes/detail.txt"
key Escape
wait_for "avg QD"

# Namespace and I/O type filters.
key n
wait_for "namespace: nvme1n1"
wait_for "ns nvme1n1"
key n
wait_for "namespace: all"
key t
wait_for "I/O type: read"
# and so does the next interval
wait_shown $(($(shown) + 1))
pane | grep -qF "write 4KiB" && fail "I/O type read still shows writes"
key t
wait_for "I/O type: write"
key t
wait_for "I/O type: all"

# Pause: the shown interval stays while collection goes on; step back and forth.
key Space
wait_for "paused at interval"
k=$(pane | sed -n 's/.*PAUSED #\([0-9]*\).*/\1/p' | head -1)
[ -n "$k" ] || fail "no PAUSED #N in the header"
key Left
wait_for "PAUSED #$((k - 1))"
# the source goes on at one interval a second; the screen stays
for _ in $(seq 20); do
	pane | grep -qF "PAUSED #$((k - 1))" || { fail "the paused screen moved"; break; }
	sleep 0.1
done
key Right
wait_for "PAUSED #$k"
key Space
wait_for "resumed"
# resumed: the newest interval, after k (those that went by while paused)
wait_shown $((k + 1))

# Record for three intervals; ntprof report reads the file.
key w
wait_for "recording to $work/ntprof-top-"
wait_for "● rec $work/ntprof-top-"
wait_shown $(($(shown) + 3))
key w
wait_for "recorded "
rec=$(ls "$work"/ntprof-top-*.ntp 2>/dev/null | head -1)
if [ -z "$rec" ]; then
	fail "no recording written"
else
	n=$(pane | sed -n 's/.*recorded \([0-9]*\) records to.*/\1/p' | head -1)
	[ "${n:-0}" -gt 100 ] || fail "only '${n:-?}' records recorded in 3 intervals of 1 s of 20k commands/s at 1 in 100"
	"$NTPROF" report "$rec" >"$work/report.txt" 2>&1 || fail "ntprof report $rec failed: $(cat "$work/report.txt")"
	grep -qF "read 4KiB nvme1n1" "$work/report.txt" || fail "the report of the recording lacks read 4KiB"
	# the replay's host queues go on into the recording's header
	"$NTPROF" dump --header "$rec" | grep -qx "host_queues: nvme1n1 1 hardware queue x 32 tags" ||
		fail "the recording made with w lacks the replay's host queues: $("$NTPROF" dump --header "$rec" 2>&1)"
	# its counts are from w on, not from ntprof-top's start: the replay's
	# 20k commands/s, 70 % reads (14k/s), give about 14 kIOPS of reads
	r=$(sed -n 's/^throughput (commands counted in the kernel): read \([0-9.]*\) kIOPS.*/\1/p' "$work/report.txt")
	echo "top_tmux: the recording made with w: ${r:-?} kIOPS of reads"
	awk -v r="${r:-0}" 'BEGIN { exit !(r >= 12.5 && r <= 15.5) }' ||
		fail "the recording made with w counts ${r:-?} kIOPS of reads, not about 14: $(grep throughput "$work/report.txt")"
fi

# Snapshot of the shown interval: the screen as text, and JSON.
key S
wait_for "saved $work/ntprof-top-"
txt=$(ls "$work"/ntprof-top-*-i*.txt 2>/dev/null | head -1)
json=${txt%.txt}.json
[ -s "$txt" ] && grep -qF "read 4KiB nvme1n1" "$txt" || fail "snapshot text missing or without the groups"
[ -s "$json" ] && grep -qF '"groups"' "$json" && grep -qF '"latency_us"' "$json" || fail "snapshot JSON missing or incomplete"

# What-if: in replay the host's tags come from the recording's header
# (generate --host-queues: 1 queue of --qd 32); ] gives the run's QD, [
# steps back to inferred.
key W
wait_for "what-if: the selected group at another queue depth"
wait_for "host tags: 32 per queue, 1 queue (recording)"
wait_for "QD inferred"
key ']'
wait_for "the run's QD: 1 (given)"
wait_for "QD given"
pane >"$panes/whatif.txt"
key '['
wait_for "the run's QD: inferred"
# S in the what-if view: both files hold the finished what-if (S waits for
# the worker), the JSON's fitted on the saved interval or an earlier one
# (a later interval shown first: the files of the S above have the same
# name when it is the same interval in the same second)
wait_shown $(($(shown) + 1))
nsaved=$(ls "$work"/ntprof-top-*-i*.json 2>/dev/null | wc -l)
key S
for _ in $(seq 100); do [ "$(ls "$work"/ntprof-top-*-i*.json 2>/dev/null | wc -l)" -gt "$nsaved" ] && break; sleep 0.1; done
wjson=$(ls -t "$work"/ntprof-top-*-i*.json 2>/dev/null | head -1)
wtxt=${wjson%.json}.txt
if [ "$(ls "$work"/ntprof-top-*-i*.json 2>/dev/null | wc -l)" -le "$nsaved" ]; then
	fail "S in the what-if view saved nothing; the pane shows:"; pane | sed 's/^/    | /'
else
	grep -qF "what-if: the selected group at another queue depth" "$wtxt" && ! grep -qF "computing" "$wtxt" ||
		fail "the what-if view's snapshot text lacks the computed what-if: $(cat "$wtxt")"
	python3 - "$wjson" <<'PY' || fail "the what-if view's snapshot JSON: $(head -c 400 "$wjson")"
import json, re, sys
d = json.load(open(sys.argv[1]))
i = int(re.search(r"-i([0-9]+)\.json$", sys.argv[1]).group(1))
g = d["what_if"]["groups"][0]
sys.exit(0 if isinstance(g["fitted_on"], int) and g["fitted_on"] <= i else 1)
PY
fi
key W
wait_for "avg QD"

# Resize below the minimum and back; Ctrl-L; q works on the too-small screen.
tm resize-window -t top -x 50 -y 10
wait_for "terminal too small: need 64x12"
pane >"$panes/too-small.txt"
tm resize-window -t top -x 120 -y 40
wait_for "avg QD"
key C-l
wait_for "avg QD"
tm resize-window -t top -x 40 -y 8
wait_for "terminal too small"
key q
for _ in $(seq 300); do [ -s "$work/exit" ] && break; sleep 0.1; done
[ "$(cat "$work/exit" 2>/dev/null)" = 0 ] || fail "ntprof-top exited with '$(cat "$work/exit" 2>/dev/null)': $(cat "$work/stderr")"

[ -s "$work/stderr" ] && fail "ntprof-top wrote to stderr: $(cat "$work/stderr")"
[ "$(tm display -p -t top '#{alternate_on}')" = 0 ] || fail "after q the terminal is still in curses' alternate screen"

# A signal: the loop leaves through its one exit path and gives the terminal back.
# A new server for it: a new session on the old one raced the server's exit
# once its last session was killed ("server exited unexpectedly" under load),
# and tmux 3.3a crashes on a new session where window-size is manual.
tm kill-server
sock=$sock-2
rm -f "$work/exit"
tm new-session -d -s top -x 100 -y 30 \
	"cd '$work' && LANG=C.UTF-8 TERM=xterm-256color exec '$TOP' --replay run.ntp --what-if-qd-was 4 2>'$work/stderr2'"
tm set-option -t top remain-on-exit on >/dev/null
wait_shown 0 30
# --what-if-qd-was: the view starts with the run's QD given
key W
wait_for "measured  QD 4 "
wait_for "QD given"
[ "$(tm display -p -t top '#{alternate_on}')" = 1 ] || fail "ntprof-top does not use the alternate screen"
kill -TERM "$(tm display -p -t top '#{pane_pid}')"
for _ in $(seq 300); do [ "$(tm display -p -t top '#{pane_dead}')" = 1 ] && break; sleep 0.1; done
[ "$(tm display -p -t top '#{pane_dead}')" = 1 ] || fail "SIGTERM did not stop ntprof-top"
[ "$(tm display -p -t top '#{alternate_on}')" = 0 ] || fail "after SIGTERM the terminal is still in the alternate screen"
grep -qF "ntprof-top: Terminated, stopping" "$work/stderr2" || fail "no note of the signal: $(cat "$work/stderr2")"
# A replay of a host file with a damaged target file: at its end the status
# line names the damaged file with its counts, whole (wrapped over rows),
# under "replay ended" that counts both files; after q the line is on
# stderr and the exit status is 1, as ntprof report's.
tm kill-server
sock=$sock-3
"$NTPROF" generate -q -o "$work/dh.ntp" --target-out "$work/dt.ntp" -d 1 --rate 50000 -s 10 ||
	{ echo "FAIL: ntprof generate"; exit 1; }
cp "$work/dt.ntp" "$work/dt_bad.ntp"
b=$(od -An -tu1 -j1000 -N1 "$work/dt.ntp" | tr -d ' ')
printf "\\$(printf %o $((b ^ 64)))" | dd of="$work/dt_bad.ntp" bs=1 seek=1000 conv=notrunc status=none
rm -f "$work/exit"
tm new-session -d -s top -x 80 -y 24 \
	"cd '$work' && LANG=C.UTF-8 TERM=xterm-256color '$TOP' --replay '$work/dh.ntp' '$work/dt_bad.ntp' --speed 0 2>'$work/stderr3'; echo \$? >'$work/exit'; sleep 30"
tm set-option -g window-size manual >/dev/null
wait_for "replay ended: 8990 records read, 1024 dropped"
want="$work/dt_bad.ntp is damaged (block at offset 256 fails its CRC): 3983 records read, 1024 dropped; the intervals are of the records read"
pane | tr -d ' \n' | grep -qF -- "$(tr -d ' ' <<<"$want")" ||
	{ fail "the status line lacks '$want':"; pane | sed 's/^/    | /'; }
pane >"$panes/damaged.txt"
key q
for _ in $(seq 300); do [ -s "$work/exit" ] && break; sleep 0.1; done
[ "$(cat "$work/exit" 2>/dev/null)" = 1 ] || fail "a replay with a damaged file exited with '$(cat "$work/exit" 2>/dev/null)'"
grep -qxF "ntprof-top: $want" "$work/stderr3" || fail "stderr after q lacks the damaged file: $(cat "$work/stderr3")"
echo "top_tmux: panes in $panes/ (main, help, detail, whatif, too-small, damaged); $fails failure(s)"
[ "$fails" -eq 0 ]
