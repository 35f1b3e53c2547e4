#!/usr/bin/env bash
# The report's note on the host's tags (docs/stage-model.md, "What end to end
# spans"): a synthetic host whose load needs more commands in flight than its
# tags allow (`ntprof generate --host-queues`, whose commands then wait for a
# tag in no timestamp) gets the note; one with tags to spare, and a file
# without the header's host queue table, do not.
set -u
cd "$(dirname "$0")/../.."
NTPROF=${NTPROF:-build/ntprof}
fail=0
work=$(mktemp -d /tmp/ntp-tags-XXXXXX)
trap 'rm -rf "$work"' EXIT

gen() { "$NTPROF" generate -o "$work/$1.ntp" --rate 50000 -d 0.1 -s 1 --delay wire=fixed:200us "${@:2}" >/dev/null 2>&1; }
gen full --host-queues --qd 8
gen spare --host-queues --qd 64
gen none --qd 8
note='^note: nvme1n1 held 8\.0 commands in flight on average \(rate x mean\), two thirds or more of its 8 tags \(1 hardware queue x 8\): commands may have waited for a tag before end to end starts \(docs/stage-model\.md\)$'
check() {	# NAME WANT(1|0) FILE
	local got=0
	"$NTPROF" report "$work/$3.ntp" | grep -qE "$note|^note: .* tags" && got=1
	if [ "$got" = "$2" ]; then echo "  ok   $1"; else echo "  FAIL $1 (note: $got, wanted $2)"; fail=1; fi
}
"$NTPROF" report "$work/full.ntp" | grep -qE "$note" && echo "  ok   tags-note-text" || { echo "  FAIL tags-note-text"; fail=1; }
check tags-full 1 full
check tags-spare 0 spare
check tags-no-table 0 none
exit $fail
