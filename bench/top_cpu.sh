#!/usr/bin/env bash
# CPU used by ntprof-top at a 1 s interval over 60 s of replay, beside htop
# (1 s delay) over the same 60 s in the same run, both in 120x40 tmux
# windows, as shares of one core from /proc/PID/stat (utime + stime).
# Target: ntprof-top uses no more than htop.
# Usage: bench/top_cpu.sh [NTPROF NTPROF_TOP] [SECONDS]   (make bench-top)
# Environment: RATE (commands/s, default 20000) and SAMPLING (-s, default
# 100) of the replayed file: RATE=200000 SAMPLING=1 replays 200k records/s,
# where the reader and the model are most of ntprof-top's CPU.
set -eu
cd "$(dirname "$0")/.."
NTPROF=$(realpath "${1:-build/ntprof}")
TOP=$(realpath "${2:-build/ntprof-top}")
SECS=${3:-60}
for t in tmux htop; do
	command -v $t >/dev/null || { echo "top_cpu: $t is needed (tools/install-deps.sh)"; exit 1; }
done
work=$(mktemp -d /tmp/ntprof-top-bench.XXXXXX)
sock=ntprof-top-bench-$$
tm() { tmux -L "$sock" -f /dev/null "$@"; }
trap 'tm kill-server 2>/dev/null; rm -rf "$work"' EXIT
# 20k commands/s, one in 100 sampled: 200 records/s, four groups on screen.
"$NTPROF" generate -q -o "$work/run.ntp" -d $((SECS + 30)) --rate "${RATE:-20000}" --sizes 4K,128K --read 70 \
	-s "${SAMPLING:-100}"
tm new-session -d -s top -x 120 -y 40 "cd '$work' && LANG=C.UTF-8 TERM=xterm-256color exec '$TOP' --replay run.ntp -i 1"
tm new-session -d -s htop -x 120 -y 40 "LANG=C.UTF-8 TERM=xterm-256color exec htop -d 10"
# =NAME: the session of exactly that name (a bare "top" is also a pattern
# for a window's name, and was found to name htop's)
top_pid=$(tm list-panes -t =top: -F '#{pane_pid}')
htop_pid=$(tm list-panes -t =htop: -F '#{pane_pid}')
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }	# utime + stime, after the comm field
sleep 5	# both started and drawing
hz=$(getconf CLK_TCK)
t0=$(ticks "$top_pid") h0=$(ticks "$htop_pid") w0=$(date +%s.%N)
sleep "$SECS"
t1=$(ticks "$top_pid") h1=$(ticks "$htop_pid") w1=$(date +%s.%N)
tm capture-pane -p -t =top: >"$work/pane.txt"
grep -q "replay run.ntp" "$work/pane.txt" || { echo "top_cpu: ntprof-top was not showing the replay at the end:"; cat "$work/pane.txt"; exit 1; }
awk -v t="$((t1 - t0))" -v h="$((h1 - h0))" -v hz="$hz" -v w0="$w0" -v w1="$w1" 'BEGIN {
	wall = w1 - w0; ts = t / hz / wall; hs = h / hz / wall
	printf "top_cpu: %.1f s of a 1 s interval, both in 120x40 tmux windows\n", wall
	printf "  ntprof-top --replay: %6.3f%% of a core (%d ticks)\n", ts * 100, t
	printf "  htop -d 10:          %6.3f%% of a core (%d ticks)\n", hs * 100, h
	if (hs > 0) printf "  ratio ntprof-top/htop: %.2f (target <= 1)\n", ts / hs
	exit ts <= hs ? 0 : 1
}'
