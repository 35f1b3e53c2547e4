#!/usr/bin/env bash
# Inputs refused or read as they are (inpfix): compare's comma lists refuse an
# empty name and take an existing file whose name holds a comma whole
# (docs/reports.md); a record whose times one machine's clock cannot give (an
# end before its start) or of an unknown side is left out and counted
# (docs/reports.md); an option without a value given one, and --help's
# listing of -V. Environment: NTPROF.
set -u
cd "$(dirname "$0")/../.."
NTPROF=${NTPROF:-build/ntprof}
tmp=$(mktemp -d /tmp/ntprof-inputs.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # NAME CONDITION-RESULT(0 ok) DETAILS
	if [ "$2" = 0 ]; then echo "  ok   $1"; else echo "  FAIL $1: $3"; fail=1; fi
}
"$NTPROF" generate -q -o "$tmp/h.ntp" --target-out "$tmp/t.ntp" --rate 2000 -d 1 || exit 1

# ---- compare: empty names, a comma in a file's name ----
for a in "$tmp/h.ntp,,$tmp/t.ntp" "$tmp/h.ntp," ",$tmp/h.ntp"; do
	out=$("$NTPROF" compare "$a" "$tmp/h.ntp" 2>&1); rc=$?
	check "compare-empty-item $a" "$([ $rc = 1 ] && [ "$(wc -l <<<"$out")" = 1 ] &&
		grep -Eq "^ntprof: compare: '$a' (has an empty file name between two commas|ends with a comma|starts with a comma)$" <<<"$out"
		echo $?)" "exit $rc: $(head -2 <<<"$out")"
done
cp "$tmp/h.ntp" "$tmp/a,b.ntp"
out=$("$NTPROF" compare "$tmp/a,b.ntp" "$tmp/h.ntp" 2>&1); rc=$?
check compare-comma-name "$([ $rc = 0 ] && grep -q "^A: $tmp/a,b.ntp, " <<<"$out"; echo $?)" "exit $rc: $(head -3 <<<"$out")"
out=$("$NTPROF" compare "$tmp/h.ntp,$tmp/t.ntp" "$tmp/h.ntp" 2>&1); rc=$?
check compare-joined "$([ $rc = 0 ] && grep -q "^A: $tmp/h.ntp,$tmp/t.ntp, " <<<"$out"; echo $?)" "exit $rc: $(head -3 <<<"$out")"

# ---- options: a value to an option that takes none; -V in --help ----
out=$("$NTPROF" report --detail=1 "$tmp/h.ntp" 2>&1); rc=$?
check detail-value "$([ $rc = 1 ] && [ "$out" = "ntprof: option --detail takes no value" ]; echo $?)" "exit $rc: $out"
out=$("$NTPROF" report -h=1 "$tmp/h.ntp" 2>&1); rc=$?
check short-value "$([ $rc = 1 ] && [ "$out" = "ntprof: option -h takes no value" ]; echo $?)" "exit $rc: $out"
out=$("$NTPROF" report -dZ "$tmp/h.ntp" 2>&1); rc=$?
check short-unknown "$([ $rc = 1 ] && [ "$out" = "ntprof: unknown option '-Z' (ntprof report --help)" ]; echo $?)" "exit $rc: $out"
out=$("$NTPROF" --help); v=$("$NTPROF" -V)
check help-lists-V "$(grep -q -- '-V' <<<"$out" && grep -q '^ntprof ' <<<"$v"; echo $?)" "$(head -2 <<<"$out")"

# ---- probe: root refused is told why it may be; kprobes' absence said plainly ----
if [ "$(id -u)" = 0 ]; then
	out=$("$NTPROF" probe 2>/dev/null)
	check probe-kprobes "$(grep -Eq '^kprobes: (yes|no \(the kernel was built without CONFIG_KPROBES\))$' <<<"$out"; echo $?)" \
		"$(grep '^kprobes' <<<"$out")"
	if grep -q '^fentry: no (.*Operation not permitted' <<<"$out"; then
		check probe-eperm-hint "$(grep -q "^fentry: no (.*Operation not permitted; .*root" <<<"$out"; echo $?)" \
			"$(grep '^fentry' <<<"$out")"
	fi
	# a row says ok only where its flavour loads: none when no program does
	if grep -q '^bpf: no' <<<"$out"; then
		check probe-nothing-ok "$(! grep -q '^ok ' <<<"$out"; echo $?)" "$(grep '^ok ' <<<"$out" | head -2)"
	fi
fi
# root of a user namespace where unprivileged BPF is off: no program loads,
# no row says ok, and why is said
out=$(unshare -Ur "$NTPROF" probe 2>/dev/null)
if [ -n "$out" ] && [ "$(cat /proc/sys/kernel/unprivileged_bpf_disabled 2>/dev/null || echo 0)" != 0 ]; then
	check probe-userns "$(! grep -q '^ok ' <<<"$out" && grep -q '^bpf: no (.*; root of a user namespace' <<<"$out"
		echo $?)" "$(grep -E '^(ok |bpf)' <<<"$out" | head -3)"
fi

exit $fail
