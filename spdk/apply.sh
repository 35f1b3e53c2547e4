#!/bin/sh
# spdk/apply.sh SPDK_TREE [configure options...]
#
# Adds ntprof's USDT probes and sampling variable to an SPDK source tree and
# configures it with --with-usdt (docs/spdk.md):
#   1. checks that the tree is a version the patch was made against;
#   2. copies ntprof's headers (bpf/ntprof_spdk.h, bpf/ntprof_hash.h,
#      spdk/ntprof_usdt.h) into include/spdk_internal/;
#   3. applies spdk/ntprof-usdt.patch: added lines only, no context, so it is
#      applied with --unidiff-zero and its hunks are placed by line number
#      alone, which is why the version must match exactly;
#   4. runs ./configure --with-usdt plus the options given.
# It fetches nothing and changes nothing outside the tree. Run it again on an
# already patched tree and it says so and only configures.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
patch="$here/ntprof-usdt.patch"

# The SPDK trees the patch was made and checked against: VERSION file and
# the commit of the snapshot (git rev-parse HEAD), or "-" for any commit of
# that VERSION whose lines the patch still fits (git apply --check decides).
KNOWN="26.09.0-pre 3230130e6a4114a97991d7e27cecd5ab64b696c3"

die() { echo "spdk/apply.sh: $*" >&2; exit 1; }

[ $# -ge 1 ] || die "usage: spdk/apply.sh SPDK_TREE [configure options...]"
tree=$1
shift
[ -f "$tree/VERSION" ] && [ -f "$tree/lib/nvmf/tcp.c" ] || die "$tree: not an SPDK source tree (no VERSION, lib/nvmf/tcp.c)"
version=$(cat "$tree/VERSION")
commit=$(git -C "$tree" rev-parse HEAD 2>/dev/null || echo unknown)

ok=0
echo "$KNOWN" | while read -r v c; do
	[ "$v" = "$version" ] && { [ "$c" = "-" ] || [ "$c" = "$commit" ]; } && exit 3
	true
done || ok=$?
[ "$ok" = 3 ] || die "SPDK $version (commit $commit) is not a version this patch was made against ($(echo "$KNOWN" | awk '{printf "%s%s %s", (NR > 1 ? ", " : ""), $1, substr($2, 1, 12)}')): its hunks are placed by line number only, so it would land in the wrong lines"

cd "$tree"
if grep -q 'ntprof_usdt.h' lib/nvmf/tcp.c; then
	echo "spdk/apply.sh: $tree already carries ntprof's probes"
else
	git apply --unidiff-zero --check "$patch" 2>/dev/null || patch -p1 --dry-run -s < "$patch" >/dev/null ||
		die "spdk/ntprof-usdt.patch does not apply to $tree (edited locally?)"
	if git apply --unidiff-zero "$patch" 2>/dev/null; then :; else patch -p1 -s < "$patch"; fi
	echo "spdk/apply.sh: ntprof's probes added to SPDK $version"
fi
cp "$repo/bpf/ntprof_spdk.h" "$repo/bpf/ntprof_hash.h" "$here/ntprof_usdt.h" include/spdk_internal/
./configure --with-usdt "$@"
