#!/usr/bin/env bash
# `ntprof btf`: an input that cannot hold BTF is named with what is wrong
# with it (a directory, an empty file), not with libbpf's "Input/output
# error"; nothing is written. Environment: NTPROF.
set -u
cd "$(dirname "$0")/../.."
NTPROF=${NTPROF:-build/ntprof}
W=$(mktemp -d /tmp/ntprof-btfin.XXXXXX)
trap 'rm -rf "$W"' EXIT
fail=0
# expect NAME PATTERN inputs...: exit 1, one line matching PATTERN, no output file
expect() {
	local name=$1 pat=$2 out rc
	shift 2
	out=$("$NTPROF" btf -o "$W/out.btf" "$@" 2>&1); rc=$?
	if [ $rc != 1 ] || [ "$(wc -l <<<"$out")" != 1 ] || ! grep -qE -- "$pat" <<<"$out" || [ -e "$W/out.btf" ]; then
		echo "  FAIL $name (exit $rc): $out"; fail=1
	else
		echo "  ok   $name"
	fi
}
mkdir "$W/dir"
: >"$W/empty.btf"
printf 'not BTF at all\n' >"$W/text.btf"
expect dir-first "^ntprof: $W/dir: is a directory, not a BTF file$" "$W/dir" "$W/empty.btf"
expect empty-first "^ntprof: $W/empty.btf: an empty file, no BTF in it$" "$W/empty.btf" "$W/dir"
expect text-first "^ntprof: $W/text.btf: no BTF in it \(neither raw BTF nor an ELF file" "$W/text.btf" "$W/dir"
expect missing-first "^ntprof: $W/none.btf: No such file or directory$" "$W/none.btf" "$W/dir"
KBTF=/sys/kernel/btf/vmlinux
if [ -r $KBTF ]; then
	expect dir-module "^ntprof: $W/dir: is a directory, not a BTF file$" $KBTF "$W/dir"
	expect empty-module "^ntprof: $W/empty.btf: an empty file, no BTF in it$" $KBTF "$W/empty.btf"
fi
exit $fail
