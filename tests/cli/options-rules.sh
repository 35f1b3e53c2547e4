#!/usr/bin/env bash
# The option rules of docs/options.md, in the table parser (record, report,
# compare, dump, btf, ntprof-top) and in generate's own: an option given twice
# takes the last value (getopt's convention; a size list adds up, generate's
# --delay is given per segment); a list (sizes, --what-if-qd, --what-if-fit,
# --what-if-servers) has no empty item; --name=value on an option that takes
# no value says so; generate names what is wrong with --lba-size and --sizes;
# ntprof-top's --theme and live capture errors are option errors; ntprof
# --help lists --version. Environment: NTPROF, NTPROF_TOP.
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

# the last value wins: one file, the second
accepted report-j-twice "$NTPROF" report -j "$tmp/a.json" -j "$tmp/b.json" "$tmp/a.ntp"
[ ! -e "$tmp/a.json" ] && [ -s "$tmp/b.json" ] || { echo "  FAIL report-j-twice: not b.json alone"; fail=1; }
rm -f "$tmp/b.json"
"$NTPROF" generate -q -o "$tmp/x.ntp" -o "$tmp/y.ntp" -d 0.01 -r host -r target --sizes 4K --sizes 8K ||
	{ echo "  FAIL generate-twice refused"; fail=1; }
if [ ! -e "$tmp/x.ntp" ] && "$NTPROF" report -j - "$tmp/y.ntp" >"$tmp/y.json" &&
	grep -q '"role": *"target"' "$tmp/y.json" && grep -q '"size": *8192' "$tmp/y.json" && ! grep -q '"size": *4096' "$tmp/y.json"; then
	echo "  ok   generate-twice: the last -o, -r and --sizes"
else
	echo "  FAIL generate-twice: not y.ntp of -r target, 8K"; fail=1
fi
rm -f "$tmp/x.ntp" "$tmp/y.ntp"
# ntprof-top: the last -r of `make vm-top NTP_VM_TOP_ARGS="-r host"` (tests/vm/guest/init)
accepted top-r-twice "$NTPROF_TOP" -b -n 1 -r both -r host --replay "$tmp/a.ntp"
accepted top-replay-twice "$NTPROF_TOP" -b -n 1 --replay "$tmp/none.ntp" --replay "$tmp/a.ntp"
accepted generate-same-twice "$NTPROF" generate -q -o "$tmp/x.ntp" -d 0.01 --seed 3 --seed 3
accepted generate-delay-each "$NTPROF" generate -q -o "$tmp/x.ntp" -d 0.01 --delay storage=fixed:10us --delay wire=fixed:1us
rm -f "$tmp/x.ntp"

expect record-size-empty "^ntprof: option --size: '4K,,8K' has an empty size between two commas$" "$NTPROF" record --size 4K,,8K
expect record-size-end "^ntprof: option --size: '4K,' ends with a comma$" "$NTPROF" record --size 4K,
expect top-size-start "^ntprof-top: option --size: ',4K' starts with a comma$" "$NTPROF_TOP" -b --size ,4K --replay "$tmp/a.ntp"
expect generate-sizes-empty "^ntprof: option --sizes: '4K,,8K' has an empty size" "$NTPROF" generate -o "$tmp/x.ntp" --sizes 4K,,8K
expect generate-sizes-end "^ntprof: option --sizes: '4K,' ends with a comma$" "$NTPROF" generate -o "$tmp/x.ntp" --sizes 4K,
# the what-if lists, in report and ntprof-top, in the same words
expect report-servers-end "^ntprof: option --what-if-servers: 'storage=4,' ends with a comma$" \
	"$NTPROF" report --what-if-qd 4 --what-if-servers storage=4, "$tmp/a.ntp"
expect report-servers-start "^ntprof: option --what-if-servers: ',storage=4' starts with a comma$" \
	"$NTPROF" report --what-if-qd 4 --what-if-servers ,storage=4 "$tmp/a.ntp"
expect report-servers-empty "^ntprof: option --what-if-servers: 'storage=4,,network=2' has an empty stage between two commas$" \
	"$NTPROF" report --what-if-qd 4 --what-if-servers storage=4,,network=2 "$tmp/a.ntp"
expect report-fit-empty "^ntprof: option --what-if-fit: '$tmp/a.ntp,,$tmp/a.ntp' has an empty file between two commas$" \
	"$NTPROF" report --what-if-qd 4 --what-if-fit "$tmp/a.ntp,,$tmp/a.ntp" "$tmp/a.ntp"
expect report-qd-empty "^ntprof: option --what-if-qd: '4,,8' has an empty queue depth between two commas$" \
	"$NTPROF" report --what-if-qd 4,,8 "$tmp/a.ntp"
expect top-servers-end "^ntprof-top: option --what-if-servers: 'storage=4,' ends with a comma$" \
	"$NTPROF_TOP" -b -n 1 --replay "$tmp/a.ntp" --what-if-servers storage=4,
expect top-servers-empty "^ntprof-top: option --what-if-servers: 'a,,b' has an empty stage between two commas$" \
	"$NTPROF_TOP" -b -n 1 --replay "$tmp/a.ntp" --what-if-servers a,,b
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

# ntprof-top: a theme that does not load is an option error (exit 2, as
# ntprof-top(8) says); live, the capture options' own errors come before
# the kernel's (as in ntprof record)
expect top-theme "^ntprof-top: option --theme: theme 'nosuch'" "$NTPROF_TOP" -b -n 1 --theme nosuch --replay "$tmp/a.ntp"
rc=0; "$NTPROF_TOP" -b -n 1 --theme nosuch --replay "$tmp/a.ntp" >/dev/null 2>&1 || rc=$?
if [ $rc = 2 ]; then echo "  ok   top-theme-exit"; else echo "  FAIL top-theme-exit: $rc, not 2"; fail=1; fi
expect top-live-session "^ntprof-top: --session nvme0n1 names a host.s namespace" "$NTPROF_TOP" -b -r target --session nvme0n1
expect top-live-btf "^ntprof-top: option --btf: $tmp/none.btf: No such file or directory$" "$NTPROF_TOP" -b --btf "$tmp/none.btf"
expect top-live-target-session "^ntprof-top: option --target-session: -r host records no target side" \
	"$NTPROF_TOP" -b -r host --target-session nqn.x:1

if "$NTPROF" --help | grep -q -- '--version'; then echo "  ok   help-version"; else echo "  FAIL help-version: ntprof --help does not list --version"; fail=1; fi
exit $fail
