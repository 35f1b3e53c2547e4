#!/usr/bin/env bash
# `ntprof record`'s final report is `ntprof report` of the file it wrote,
# byte for byte (text and JSON), at -d's end on the interval grid and off
# it, and at SIGINT: the records drained at the stop are in both, in the
# same time (docs/recording.md, "Output while recording"). Recorded from the
# SPDK stand-in of tests/tools (an SPDK recording takes the kernel's path to
# the final report: the live source, the pump, the drain at the stop).
# Needs root and uprobes; skipped (77) otherwise.
set -u
cd "$(dirname "$0")/../.."
. tests/tools/standin-env.sh

# same NAME LIVE FILE: the two reports are the same bytes
same() {
	if [ -s "$2" ] && cmp -s "$2" "$3"; then ok "$1"; else
		bad "$1: the live report and the file's differ:"; diff "$2" "$3" | head -20 | sed 's/^/       /'; fi
}

# one stand-in target (and host: -r both in one process) running until the end
"$SI" -r both > "$W/si.out" 2> "$W/si.err" &
pids+=($!)
for _ in $(seq 600); do grep -q ready "$W/si.out" 2>/dev/null && break; sleep 0.05; done

# rec NAME ARGS...: a recording of 1 in 1 with -o, its report into NAME.live
rec() {
	local name=$1
	shift
	"$NTPROF" record -r both --spdk-target "$SI" --spdk-host "$SI" -s 1 -o "$W/$name.ntp" "$@" \
		> "$W/$name.live" 2> "$W/$name.err"
}

# -d's end on the grid (-i 1): the last interval closes at the end
rec d -d 2 --offline
"$NTPROF" report "$W/d.ntp" > "$W/d.file" 2>&1
same record-d-on-grid "$W/d.live" "$W/d.file"
grep -q '^records: [1-9][0-9]* host, [1-9][0-9]* target; [1-9][0-9]* matched' "$W/d.live" && ok record-d-joined ||
	bad "record-d-joined: $(grep '^records' "$W/d.live")"

# off the grid (-i 0.3): the pump's finish closes it
rec i -d 1 -i 0.3 --offline
"$NTPROF" report "$W/i.ntp" > "$W/i.file" 2>&1
same record-d-off-grid "$W/i.live" "$W/i.file"

# JSON (-j -)
rec j -d 1 -j -
"$NTPROF" report -j - "$W/j.ntp" > "$W/j.file" 2>&1
same record-d-json "$W/j.live" "$W/j.file"

# SIGINT
"$NTPROF" record -r both --spdk-target "$SI" --spdk-host "$SI" -s 1 -o "$W/s.ntp" --offline \
	> "$W/s.live" 2> "$W/s.err" &
r=$!
pids+=($r)
sleep 1.5
kill -INT "$r"
wait "$r"
"$NTPROF" report "$W/s.ntp" > "$W/s.file" 2>&1
same record-sigint "$W/s.live" "$W/s.file"

[ $fail = 0 ] && echo "record-final.sh: all checks passed"
exit $fail
