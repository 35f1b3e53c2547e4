#!/usr/bin/env bash
# --help, the man pages and the bash completion must list the same options:
# tools/gen-docs.sh makes the pages and the completion from the programs'
# --help, here from the binaries under test. Checked: every option of every
# command's --help is accepted by its parser, is in the command's section of
# the man page and is completed for that command; groff renders the pages
# without a warning; completion works as a user types (`ntprof re<TAB>`, option arguments).
set -u
cd "$(dirname "$0")/../.."
root=$PWD
NTPROF=${NTPROF:-$root/build/ntprof}
NTPROF_TOP=${NTPROF_TOP:-$root/build/ntprof-top}
O=${O:-build}
case $NTPROF in /*) ;; *) NTPROF=$root/$NTPROF ;; esac
case $NTPROF_TOP in /*) ;; *) NTPROF_TOP=$root/$NTPROF_TOP ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "  FAIL $*"; fail=1; }
ok() { echo "  ok   $*"; }

tools/gen-docs.sh "$NTPROF" "$NTPROF_TOP" "$tmp" || { echo "  FAIL tools/gen-docs.sh"; exit 1; }

# the options of one --help: the names on its option lines
opts_of() { awk '/^ +-/ { sub(/^ +/, ""); p = match($0, /  +/); s = p ? substr($0, 1, p - 1) : $0
	n = split(s, t, /, /); for (i = 1; i <= n; i++) { sub(/ .*/, "", t[i]); print t[i] } }'; }
# the man page's text of one command: "ntprof record" up to the next command
man_section() { # page cmd
	if [ -z "$2" ]; then cat "$1"; return; fi
	awk -v c="$2" '/^\.SS / { on = ($0 == ".SS \"ntprof " c "\"") } on' "$1"
}
# the words the completion offers after `prog cmd -`
complete_words() { # prog cmd
	bash -c '
		. "$1"
		if [ -n "$3" ]; then COMP_WORDS=("$2" "$3" -); COMP_CWORD=2; else COMP_WORDS=("$2" -); COMP_CWORD=1; fi
		fn=_${2//-/_}; $fn; printf "%s\n" "${COMPREPLY[@]}"' _ "$tmp/completion/$1" "$1" "$2"
}

cmds=$("$NTPROF" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }')
[ -n "$cmds" ] || bad "no commands in ntprof --help"
n=0
for pc in $(for c in $cmds; do echo "ntprof:$c"; done) "ntprof-top:"; do
	prog=${pc%%:*} cmd=${pc#*:}
	bin=$NTPROF; [ "$prog" = ntprof-top ] && bin=$NTPROF_TOP
	"$bin" $cmd --help >"$tmp/help" 2>&1 || bad "$prog $cmd --help: exit $?"
	man_section "$tmp/man/$prog.8" "$cmd" | sed 's/\\-/-/g' >"$tmp/man-sec"
	complete_words "$prog" "$cmd" >"$tmp/words"
	found=0
	for o in $(opts_of <"$tmp/help"); do
		found=$((found + 1)); n=$((n + 1))
		grep -q -- "fB$o\\\\fR" "$tmp/man-sec" || bad "$prog $cmd $o: in --help, not in the man page"
		grep -qx -- "$o" "$tmp/words" || bad "$prog $cmd $o: in --help, not completed"
		# the parser knows it (an argument it may need: x; then --help ends it)
		"$bin" $cmd $o x --help </dev/null >/dev/null 2>"$tmp/err"
		grep -q "unknown option" "$tmp/err" && bad "$prog $cmd $o: in --help, unknown to the parser: $(head -1 "$tmp/err")"
	done
	# and nothing in the completion that --help does not list
	for w in $(cat "$tmp/words"); do
		opts_of <"$tmp/help" | grep -qx -- "$w" || bad "$prog $cmd: completes $w, which --help does not list"
	done
	[ $found -gt 0 ] || bad "$prog $cmd: no option in --help"
done
[ $fail = 0 ] && ok "$n options: in --help, the man pages, the completion and the parsers"

# the pages render without a warning
if command -v groff >/dev/null; then
	for p in ntprof ntprof-top; do
		w=$(groff -man -ww -z "$tmp/man/$p.8" 2>&1)
		[ -z "$w" ] && ok "groff: $p.8 without warnings" || bad "groff $p.8: $w"
	done
fi
# as a user types
comp() { # expected, then the words (the last one is being completed)
	local want=$1 got
	shift
	got=$(bash -c '
		prog=$1; . "$2"; shift 2
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		fn=_${prog//-/_}; $fn; printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' _ "$1" "$tmp/completion/$1" "$@" 2>&1)
	[ "$got" = "$want" ] && ok "completion: $* -> $got" || bad "completion: $* -> '$got', want '$want'"
}
comp "record report " ntprof re
comp "--role " ntprof record --ro
comp "both host target " ntprof record -r ""
comp "rdma tcp " ntprof probe --transport ""
comp "--replay " ntprof-top --rep
comp "examples/tb61-tcp-write128k-qd4-both.ntp " ntprof report examples/tb61-tcp-w

# and in an interactive bash, with a real Tab (tmux, as tests/cli/top_tmux.sh)
if command -v tmux >/dev/null; then
	sock=ntprof-docs-$$
	tmux -L $sock new-session -d -x 100 -y 10 "env -i PATH=/usr/bin:/bin HOME=/nonexistent HISTFILE= TERM=xterm PS1='$ ' bash --norc -i"
	sleep 0.5
	tmux -L $sock send-keys ". $tmp/completion/ntprof" Enter
	sleep 0.3
	tmux -L $sock send-keys "ntprof re" Tab Tab
	got=
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		sleep 0.2
		got=$(tmux -L $sock capture-pane -p | grep -E '^record +report *$')
		[ -n "$got" ] && break
	done
	tmux -L $sock capture-pane -p >"$tmp/pane"
	tmux -L $sock kill-server 2>/dev/null
	[ -n "$got" ] && ok "bash -i: ntprof re<Tab><Tab> lists '$got'" || bad "bash -i: ntprof re<Tab><Tab>: $(cat "$tmp/pane")"
fi
exit $fail
