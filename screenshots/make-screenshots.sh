#!/usr/bin/env bash
# Captures real tmux panes of ntprof-top replaying a generated recording
# (main screen, detail view, help, what-if view) with their colours (capture-pane -e) and
# draws them as PNGs (tools/ansi2png.py, ImageMagick, DejaVu Sans Mono).
# Usage: screenshots/make-screenshots.sh [NTPROF NTPROF_TOP]   (make screenshots)
set -eu
cd "$(dirname "$0")/.."
NTPROF=$(realpath "${1:-build/ntprof}")
TOP=$(realpath "${2:-build/ntprof-top}")
for t in tmux convert python3; do
	command -v $t >/dev/null || { echo "screenshots: $t is needed (tools/install-deps.sh)"; exit 1; }
done
work=$(mktemp -d /tmp/ntprof-shots.XXXXXX)
sock=ntprof-shots-$$
tm() { tmux -L "$sock" -f /dev/null "$@"; }
trap 'tm kill-server 2>/dev/null; rm -rf "$work"' EXIT
# the host's queues in the header (1 of 128 tags), as ntprof record writes them
"$NTPROF" generate -q -o "$work/run.ntp" -d 120 --rate 40000 --sizes 4K,128K --read 70 -s 100 --qd 128 --host-queues
tm new-session -d -s shot -x 110 -y 32 \
	"cd '$work' && LANG=C.UTF-8 TERM=xterm-256color '$TOP' --replay run.ntp --what-if-servers storage=16; sleep 5"
tm set-option -g window-size manual >/dev/null
wait_for() {
	for _ in $(seq 250); do tm capture-pane -p -t shot | grep -qF -- "$1" && return 0; sleep 0.1; done
	echo "screenshots: the pane never showed '$1'"; exit 1
}
shot() {
	sleep 0.3
	tm capture-pane -e -p -t shot >"$work/$1.ansi"
	python3 tools/ansi2png.py "$work/$1.ansi" "screenshots/$1.png" 110
	echo "screenshots/$1.png"
}
wait_for "#12"
shot main
tm send-keys -t shot d
wait_for "components, in path order"
shot detail
tm send-keys -t shot h
wait_for "keys (h, ? or F1 again: back)"
shot help
# the what-if view of the selected group at QD 64 (the drive given 16 servers)
tm send-keys -t shot h
tm send-keys -t shot W
wait_for "what-if: the selected group"
tm send-keys -t shot '>'
tm send-keys -t shot '>'
wait_for "predicted QD 64"
shot whatif
tm send-keys -t shot q
