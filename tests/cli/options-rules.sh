#!/usr/bin/env bash
# The option rules of docs/options.md, in the table parser (record, report,
# compare, dump, btf, ntprof-top) and in generate's own: an option given twice
# with two values is refused, the same value twice and a repeated size list
# are not; a list has no empty item; --name=value on an option that takes no
# value says so; generate names what is wrong with --lba-size and --sizes;
# ntprof --help lists --version. Environment: NTPROF, NTPROF_TOP.
set -u
cd "$(dirname "$0")/../.."
NTPROF=${NTPROF:-build/ntprof}
NTPROF_TOP=${NTPROF_TOP:-build/ntprof-top}
tmp=$(mktemp -d /tmp/ntprof-optrules.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
# expect NAME PATTERN command...: exit non-zero, one line on stderr matching PATTERN
expect() {
	local name=$1 pat=$2 rc=0
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	if [ $rc = 0 ] || [ "$(wc -l <"$tmp/err")" != 1 ] || ! grep -qE -- "$pat" "$tmp/err"; then
		echo "  FAIL $name (exit $rc): $(head -3 "$tmp/err")"; fail=1
	else
		echo "  ok   $name"
	fi
}
# accepted NAME command...: exit 0
accepted() {
	local name=$1
	shift
	if "$@" >"$tmp/out" 2>"$tmp/err"; then echo "  ok   $name"; else echo "  FAIL $name: $(head -3 "$tmp/err")"; fail=1; fi
}
"$NTPROF" generate -q -o "$tmp/a.ntp" -d 0.05 -s 10

expect report-j-twice "^ntprof: option -j given twice \('$tmp/a.json', then '$tmp/b.json'\)$" \
	"$NTPROF" report -j "$tmp/a.json" -j "$tmp/b.json" "$tmp/a.ntp"
[ ! -e "$tmp/a.json" ] && [ ! -e "$tmp/b.json" ] || { echo "  FAIL report-j-twice wrote a file"; fail=1; }
accepted report-j-same "$NTPROF" report -j "$tmp/a.json" -j "$tmp/a.json" "$tmp/a.ntp"
expect record-s-twice "^ntprof: option -s given twice \('10', then '100'\)$" "$NTPROF" record -s 10 -s 100
expect top-replay-twice "^ntprof-top: option --replay given twice" \
	"$NTPROF_TOP" -b --replay "$tmp/a.ntp" --replay "$tmp/b.ntp"
expect generate-o-twice "^ntprof: option -o given twice \('$tmp/x.ntp', then '$tmp/y.ntp'\)$" \
	"$NTPROF" generate -o "$tmp/x.ntp" -o "$tmp/y.ntp"
expect generate-sizes-twice "^ntprof: option --sizes given twice" "$NTPROF" generate -o "$tmp/x.ntp" --sizes 4K --sizes 8K
accepted generate-same-twice "$NTPROF" generate -q -o "$tmp/x.ntp" -d 0.01 --seed 3 --seed 3
accepted generate-delay-each "$NTPROF" generate -q -o "$tmp/x.ntp" -d 0.01 --delay storage=fixed:10us --delay wire=fixed:1us
rm -f "$tmp/x.ntp"

expect record-size-empty "^ntprof: option --size: '4K,,8K' has an empty size between two commas$" "$NTPROF" record --size 4K,,8K
expect record-size-end "^ntprof: option --size: '4K,' ends with a comma$" "$NTPROF" record --size 4K,
expect top-size-start "^ntprof-top: option --size: ',4K' starts with a comma$" "$NTPROF_TOP" -b --size ,4K --replay "$tmp/a.ntp"
expect generate-sizes-empty "^ntprof: option --sizes: '4K,,8K' has an empty size" "$NTPROF" generate -o "$tmp/x.ntp" --sizes 4K,,8K
expect generate-sizes-end "^ntprof: option --sizes: '4K,' ends with a comma$" "$NTPROF" generate -o "$tmp/x.ntp" --sizes 4K,
# a size list given twice adds up: the replay keeps both sizes
accepted top-size-adds "$NTPROF_TOP" -b -n 1 --size 4K --size 8K --replay "$tmp/a.ntp"

expect report-detail-value "^ntprof: option --detail takes no value$" "$NTPROF" report --detail=1 "$tmp/a.ntp"
expect top-batch-value "^ntprof-top: option --batch takes no value$" "$NTPROF_TOP" --batch=1
expect generate-quiet-value "^ntprof: option --quiet takes no value$" "$NTPROF" generate -o "$tmp/x.ntp" --quiet=1
expect generate-unknown "^ntprof: unknown option '--frob=1'" "$NTPROF" generate -o "$tmp/x.ntp" --frob=1

expect generate-lba-size "^ntprof: option --lba-size: '1000' is not a power of two" "$NTPROF" generate -o "$tmp/x.ntp" --lba-size 1000
expect generate-ns-size "^ntprof: option --sizes: 131072 is larger than the namespace \(--ns-size 1024 bytes\)$" \
	"$NTPROF" generate -o "$tmp/x.ntp" --ns-size 1K --sizes 128K
expect generate-lba-multiple "^ntprof: option --sizes: 2048 is not a multiple of the LBA size 4096 \(--lba-size\)$" \
	"$NTPROF" generate -o "$tmp/x.ntp" --lba-size 4096 --sizes 2K
[ ! -e "$tmp/x.ntp" ] || { echo "  FAIL a refused generate left x.ntp"; fail=1; }

if "$NTPROF" --help | grep -q -- '--version'; then echo "  ok   help-version"; else echo "  FAIL help-version: ntprof --help does not list --version"; fail=1; fi
exit $fail
