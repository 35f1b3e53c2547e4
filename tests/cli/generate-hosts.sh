#!/usr/bin/env bash
# ntprof generate --hosts N: a one-file -r both recording is one machine, so
# every host's records are on the target's clock and the report spans the
# simulated run (not the hours the separate host clocks of per-host files are
# apart); per-host files keep a clock each. Environment: NTPROF.
set -u
cd "$(dirname "$0")/../.."
NTPROF=${NTPROF:-build/ntprof}
tmp=$(mktemp -d /tmp/ntprof-genhosts.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # NAME CONDITION-RESULT(0 ok) DETAILS
	if [ "$2" = 0 ]; then echo "  ok   $1"; else echo "  FAIL $1: $3"; fail=1; fi
}
rows() { "$NTPROF" dump "$1" | tail -n +2 | tr -d '\r'; }	# dump writes CSV lines ending in CRLF
# the span of every timestamp in a file (columns 17 on), in ns
span() { rows "$1" | awk -F, '{ for (i = 17; i <= NF; i++) if ($i != "") {
	if (lo == "" || $i < lo) lo = $i; if (hi == "" || $i > hi) hi = $i } }
	END { printf "%.0f\n", hi - lo }'; }

"$NTPROF" generate -q -o "$tmp/g3.ntp" --hosts 3 -d 0.1 -s 10 --rate 20000
s=$(span "$tmp/g3.ntp")
check one-file-one-clock "$([ "$s" -lt 200000000 ]; echo $?)" "records span $s ns for a 0.1 s run"
check one-file-every-host "$([ "$(rows "$tmp/g3.ntp" | cut -d, -f2 | sort -u | tr '\n' ' ')" = "1 2 3 " ]; echo $?)" \
	"cntlids $(rows "$tmp/g3.ntp" | cut -d, -f2 | sort -u | tr '\n' ' ')"
out=$("$NTPROF" report "$tmp/g3.ntp" 2>&1)
check one-file-report "$(grep -q '^=== 0.1 s, one command in 10 sampled ===$' <<<"$out" &&
	grep -q '^throughput (commands counted in the kernel): read 20.[0-9] kIOPS' <<<"$out"; echo $?)" \
	"$(head -3 <<<"$out")"
# every host record joined its target twin (same clock: the join needs no alignment)
check one-file-matched "$(grep -qE '^records: ([0-9]+) host, \1 target; \1 matched \(100 % of the host' <<<"$out"; echo $?)" \
	"$(grep '^records' <<<"$out")"
# --target-clock-offset moves the target only: the hosts stay on one clock
"$NTPROF" generate -q -o "$tmp/g3o.ntp" --hosts 3 -d 0.1 -s 10 --rate 20000 --target-clock-offset 5000000000
s=$(rows "$tmp/g3o.ntp" | awk -F, '$1 == "host" { for (i = 17; i <= NF; i++) if ($i != "") {
	if (lo == "" || $i < lo) lo = $i; if (hi == "" || $i > hi) hi = $i } } END { printf "%.0f\n", hi - lo }')
check one-file-offset-hosts "$([ "$s" -lt 200000000 ]; echo $?)" "host records span $s ns"

# one file per host: a machine (and a clock) each, as before
"$NTPROF" generate -q -o "$tmp/h%d.ntp" --target-out "$tmp/t.ntp" --hosts 2 -n 2000 -s 1
a=$(rows "$tmp/h1.ntp" | head -1 | cut -d, -f17)
b=$(rows "$tmp/h2.ntp" | head -1 | cut -d, -f17)
d=$(( b - a ))
check per-host-clocks "$([ "$d" -gt 3000000000000 ] && [ "$d" -lt 4000000000000 ]; echo $?)" "host 2 - host 1: $d ns"
exit $fail
