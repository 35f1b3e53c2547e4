#!/usr/bin/env bash
# ntprof-top and the terminal when things go wrong, in tmux: Ctrl-S does not
# freeze the screen (flow control off), a fatal signal (SIGABRT; SIGBUS from
# a replayed file truncated under the reader) leaves the alternate screen,
# shows the cursor and restores the terminal's modes, and TERM unset,
# unknown or dumb is refused with a word before the screen is touched.
# Environment: NTPROF, NTPROF_TOP (set by tests/run-tests.sh).
set -u
cd "$(dirname "$0")/../.."
NTPROF=$(realpath "${NTPROF:-build/ntprof}")
TOP=$(realpath "${NTPROF_TOP:-build/ntprof-top}")
if ! command -v tmux >/dev/null 2>&1; then
	echo "SKIP: top_term.sh: tmux is not installed"
	exit 77
fi
work=$(mktemp -d /tmp/ntprof-top-term.XXXXXX)
sock=ntprof-top-term-$$
tm() { tmux -L "$sock" -f /dev/null "$@"; }
cleanup() { tm kill-server 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
fails=0
ok() { echo "  ok   $1"; }
fail() { echo "  FAIL $*"; fails=$((fails + 1)); }
pane() { tm capture-pane -p -t "$1"; }
# wait_for SESSION TEXT [SECONDS]
wait_for() {
	local end=$((SECONDS + ${3:-15}))
	while [ $SECONDS -lt "$end" ]; do
		pane "$1" | grep -qF -- "$2" && return 0
		sleep 0.1
	done
	fail "$1: pane never showed '$2'; it shows:"
	pane "$1" | sed 's/^/    | /'
	return 1
}
wait_file() {
	local end=$((SECONDS + ${2:-15}))
	while [ $SECONDS -lt "$end" ]; do
		[ -s "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
# start SESSION ENV [OPTION...]: ntprof-top --replay in a new session; its
# pid, exit status and the terminal's modes afterwards land in $work/SESSION.*
start() {
	local s=$1 e=$2
	shift 2
	tm new-session -d -s "$s" -x 100 -y 30 \
		"cd '$work' && echo \$\$ >$s.pid && ${PRE:-} env $e LANG=C.UTF-8 '$TOP' --replay $s.ntp $* 2>$s.err; \
		 echo \$? >$s.exit; stty -a >$s.stty; sleep 60"
}

"$NTPROF" generate -q -o "$work/base.ntp" -d 8 --rate 20000 -s 1 || { echo "FAIL: generate"; exit 1; }
for s in ctls abrt bus dumb unset unknown; do cp "$work/base.ntp" "$work/$s.ntp"; done

# Ctrl-S, then a key: with IXON on the terminal would hold all output until Ctrl-Q
start ctls TERM=xterm-256color
if wait_for ctls "#1"; then
	tm send-keys -t ctls C-s
	sleep 0.3
	tm send-keys -t ctls h
	wait_for ctls "keys (h, ? or F1 again: back)" 5 && ok "ctrl-s: the screen still answers"
	tm send-keys -t ctls q
	wait_file "$work/ctls.exit" && [ "$(cat "$work/ctls.exit")" = 0 ] || fail "ctrl-s: q did not quit with 0"
	grep -qw -- -echo "$work/ctls.stty" && fail "ctrl-s: echo left off after q"
fi

# a fatal signal: the terminal comes back (alternate screen left, cursor shown, echo on)
restored() {
	local s=$1 before=$fails
	[ "$(tm display -p -t "$s" '#{alternate_on}')" = 0 ] || fail "$s: still in the alternate screen"
	[ "$(tm display -p -t "$s" '#{cursor_flag}')" = 1 ] || fail "$s: the cursor stays hidden"
	grep -qw echo "$work/$s.stty" && grep -qw ixon "$work/$s.stty" ||
		fail "$s: terminal modes not restored: $(grep -o -- '-\?echo\b\|-\?ixon' "$work/$s.stty" | tr '\n' ' ')"
	[ "$fails" = "$before" ]
}
start abrt TERM=xterm-256color
if wait_for abrt "#1"; then
	# the pane's shell waits for ntprof-top, its one child
	kill -ABRT "$(pgrep -P "$(cat "$work/abrt.pid")")"
	if wait_file "$work/abrt.stty"; then
		if [ "$(cat "$work/abrt.exit")" != 134 ]; then
			fail "abrt: exit $(cat "$work/abrt.exit"), not 134 (SIGABRT)"
		elif restored abrt; then
			ok "sigabrt: terminal restored, exit 134"
		fi
	else
		fail "abrt: ntprof-top did not die"
	fi
fi

start bus TERM=xterm-256color
if wait_for bus "#1"; then
	truncate -s 100000 "$work/bus.ntp"
	if wait_file "$work/bus.stty"; then
		if [ "$(cat "$work/bus.exit")" != 1 ]; then
			fail "bus: exit $(cat "$work/bus.exit"), not 1"
		elif ! grep -q 'bus.ntp: the file was truncated while being read' "$work/bus.err"; then
			fail "bus: no word on stderr: $(head -c 300 "$work/bus.err")"
		elif restored bus; then
			ok "sigbus (file truncated under the replay): a word, terminal restored, exit 1"
		fi
	else
		fail "bus: ntprof-top kept running on a truncated file"
	fi
fi

# `w` on a full disk (a file size limit stands in: the same cut write, then
# EFBIG): the screen says why, and the whole blocks that fit stay readable
cp "$work/base.ntp" "$work/full.ntp"
PRE="ulimit -f 400;" start full TERM=xterm-256color
if wait_for full "#1"; then
	tm send-keys -t full w
	if wait_for full "recording stopped: " 15; then
		rec=$(ls "$work"/ntprof-top-*.ntp 2>/dev/null | head -1)
		if ! pane full | grep -q "File too large; [0-9]* records kept"; then
			fail "full: the screen does not say why: $(pane full | grep -m1 'recording stopped')"
		elif ! out=$("$NTPROF" report "$rec" 2>&1) || ! grep -q 'commands sampled' <<<"$out"; then
			fail "full: the recording is not readable: $(head -c 300 <<<"$out")"
		else
			ok "w on a full disk: the reason on screen, the records that fit readable"
		fi
	fi
	tm send-keys -t full q
fi

# `S` on a full disk: the reason on screen, no empty or partial file left
cp "$work/base.ntp" "$work/snap.ntp"
mkdir "$work/snapdir"
PRE="ulimit -f 1;" start snap TERM=xterm-256color --dir snapdir
if wait_for snap "#2"; then
	tm send-keys -t snap S
	if wait_for snap "cannot save: " 10; then
		left=$(ls "$work/snapdir")
		if ! pane snap | grep -q "File too large"; then
			fail "S: no reason on screen: $(pane snap | grep -m1 'cannot save')"
		elif [ -n "$left" ]; then
			fail "S: files left behind: $left"
		else
			ok "S on a full disk: the reason on screen, nothing left behind"
		fi
	fi
	tm send-keys -t snap q
fi

# TERM the full screen cannot use: refused before curses, a word, exit 1, no leak
for c in "dumb TERM=dumb|cannot move the cursor" "unset -u TERM|TERM is not set" \
	 "unknown TERM=no-such-terminal|no such terminal type"; do
	s=${c%% *}
	rest=${c#* }
	envs=${rest%%|*}
	want=${rest#*|}
	start "$s" "$envs"
	if wait_file "$work/$s.exit"; then
		if [ "$(cat "$work/$s.exit")" = 1 ] && grep -q "$want" "$work/$s.err" &&
		   ! grep -q 'Sanitizer' "$work/$s.err"; then
			ok "term-$s: refused with a word"
		else
			fail "term-$s: exit $(cat "$work/$s.exit"): $(head -c 300 "$work/$s.err")"
		fi
	else
		fail "term-$s: ntprof-top did not exit"
	fi
done

[ $fails -eq 0 ]
