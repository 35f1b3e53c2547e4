#!/usr/bin/env bash
# ntprof generate: determinism, the files it writes for each role, two files
# with different clocks, one file per host, and one-line errors naming the
# option. Environment: NTPROF (the binary under test).
set -euo pipefail
cd "$(dirname "$0")/../.."
NTPROF=${NTPROF:-build/ntprof}
tmp=$(mktemp -d /tmp/ntprof-gen.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "generate.sh: $*" >&2; exit 1; }
rows() { "$NTPROF" dump "$1" | tail -n +2; }

# same seed, same bytes; another seed, other bytes
"$NTPROF" generate -q -o "$tmp/a.ntp" -d 0.2 -s 10 --seed 5
"$NTPROF" generate -q -o "$tmp/b.ntp" -d 0.2 -s 10 --seed 5
"$NTPROF" generate -q -o "$tmp/c.ntp" -d 0.2 -s 10 --seed 6
cmp -s "$tmp/a.ntp" "$tmp/b.ntp" || fail "same seed, different files"
! cmp -s "$tmp/a.ntp" "$tmp/c.ntp" || fail "different seeds, same file"

# -r host and -r target write exactly the two files of a --target-out run
"$NTPROF" generate -q -o "$tmp/2h.ntp" --target-out "$tmp/2t.ntp" -d 1.5 --seed 4 --read 50 --sizes 4K,128K
"$NTPROF" generate -q -o "$tmp/1h.ntp" -r host -d 1.5 --seed 4 --read 50 --sizes 4K,128K
"$NTPROF" generate -q -o "$tmp/1t.ntp" -r target -d 1.5 --seed 4 --read 50 --sizes 4K,128K
cmp -s "$tmp/2h.ntp" "$tmp/1h.ntp" || fail "-r host differs from the host file of --target-out"
cmp -s "$tmp/2t.ntp" "$tmp/1t.ntp" || fail "-r target differs from the --target-out file"

# the summary line counts what dump shows
"$NTPROF" generate -o "$tmp/s.ntp" -r host -n 1000 -s 4 2>"$tmp/err"
n=$(rows "$tmp/s.ntp" | wc -l)
grep -q "^ntprof: $n records written to $tmp/s.ntp$" "$tmp/err" || fail "summary: $(cat "$tmp/err")"
grep -q "^ntprof: 1000 commands issued, $n sampled (one in 4)$" "$tmp/err" || fail "summary: $(cat "$tmp/err")"
[ "$(rows "$tmp/s.ntp" | cut -d, -f1 | sort -u)" = host ] || fail "-r host wrote non-host records"

# host + target in two files, the target's clock shifted by an arbitrary amount
"$NTPROF" generate -q -o "$tmp/h.ntp" --target-out "$tmp/t.ntp" -n 500 -s 1 --target-clock-offset -123456789012
[ "$(rows "$tmp/h.ntp" | cut -d, -f1 | sort -u)" = host ] || fail "host file"
[ "$(rows "$tmp/t.ntp" | cut -d, -f1 | sort -u)" = target ] || fail "target file"
[ "$(rows "$tmp/h.ntp" | wc -l)" = 500 ] && [ "$(rows "$tmp/t.ntp" | wc -l)" = 500 ] || fail "500 + 500 records"
# first command: host sends at h_cmd_sent (col 19), target sees it at t_cmd_arrive (col 28)
# on a clock 123.456789012 s behind: the difference is one wire crossing, not the offset
h=$(rows "$tmp/h.ntp" | awk -F, '$14 == 0 { print $19 }')
t=$(rows "$tmp/t.ntp" | awk -F, '$14 == 0 { print $28 }')
d=$(( t + 123456789012 - h ))
[ "$d" -gt 0 ] && [ "$d" -lt 100000 ] || fail "target clock offset: wire of $d ns"

# several hosts: one host file each (%d), one target file with every cntlid
"$NTPROF" generate -q -o "$tmp/host%d.ntp" --target-out "$tmp/tgt.ntp" --hosts 3 -n 3000 -s 1
for i in 1 2 3; do
	[ "$(rows "$tmp/host$i.ntp" | cut -d, -f2 | sort -u)" = "$i" ] || fail "host$i.ntp has other cntlids"
done
[ "$(rows "$tmp/tgt.ntp" | cut -d, -f2 | sort -u | tr '\n' ' ')" = "1 2 3 " ] || fail "target file cntlids"

# -s: the sampled share follows the hash; missing timestamps are injected
"$NTPROF" generate -q -o "$tmp/m.ntp" -n 4000 -s 1 --miss-rsp-sent 50 --drop-target 25
tg=$(rows "$tmp/m.ntp" | awk -F, '$1 == "target"' | wc -l)
miss=$(rows "$tmp/m.ntp" | awk -F, '$1 == "target" && $36 == ""' | wc -l)
[ "$tg" -gt 2800 ] && [ "$tg" -lt 3200 ] || fail "--drop-target 25: $tg of 4000 target records"
[ "$miss" -gt $((tg * 4 / 10)) ] && [ "$miss" -lt $((tg * 6 / 10)) ] || fail "--miss-rsp-sent 50: $miss of $tg"

# errors: one line, naming the option, non-zero exit, no file written
check_err() {
	local want=$1; shift
	local rc=0
	"$NTPROF" generate "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" -ne 0 ] || fail "generate $*: exit 0"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "generate $*: not one line: $(cat "$tmp/err")"
	grep -q -- "$want" "$tmp/err" || fail "generate $*: '$(cat "$tmp/err")' does not name $want"
}
check_err "option -o" -n 5
check_err "option --qd" -o "$tmp/x.ntp" --qd 5000
check_err "option --qd" -o "$tmp/x.ntp" --qd
check_err "option -s" -o "$tmp/x.ntp" -s 0
check_err "option --sizes" -o "$tmp/x.ntp" --sizes 4K,abc
check_err "option --delay" -o "$tmp/x.ntp" --delay storage=exp:80
check_err "option --delay" -o "$tmp/x.ntp" --delay disk=exp:80us
check_err "option --delay" -o "$tmp/x.ntp" --delay storage=gauss:80us
check_err "option -r" -o "$tmp/x.ntp" -r client
check_err "option -t" -o "$tmp/x.ntp" -t fc
check_err "option --read" -o "$tmp/x.ntp" --read 101
check_err "option --target-out" -o "$tmp/x.ntp" -r host --target-out "$tmp/y.ntp"
check_err "option --hosts" -o "$tmp/x.ntp" -r host --hosts 2
check_err "'--frobnicate'" -o "$tmp/x.ntp" --frobnicate
check_err "option --sizes: 1000" -o "$tmp/x.ntp" --sizes 1000
check_err "option --ns-size" -o "$tmp/x.ntp" --ns-size 1Q
check_err "$tmp/nodir/x.ntp" -o "$tmp/nodir/x.ntp"
[ ! -e "$tmp/x.ntp" ] || fail "a failed generate left $tmp/x.ntp"
check_err "$tmp/nodir/t.ntp" -o "$tmp/x.ntp" --target-out "$tmp/nodir/t.ntp"
[ ! -e "$tmp/x.ntp" ] || fail "a failed generate left the host file $tmp/x.ntp"
"$NTPROF" generate --help | grep -q "^usage: ntprof generate -o FILE" || fail "--help"
exit 0
