#!/usr/bin/env bash
# Make sure the packages the test bed needs are there; on a fresh Debian 12
# machine (as root) this runs tools/install-deps.sh, the project's one package list.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
missing=()
for c in qemu-system-x86_64 busybox cpio depmod modprobe xz tc rdma bpftool cc clang; do
	command -v "$c" >/dev/null || missing+=("$c")
done
for h in liburing.h bpf/libbpf.h json-c/json.h ncursesw/ncurses.h cmocka.h; do
	[ -e "/usr/include/$h" ] || missing+=("$h")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "vm: missing ${missing[*]}: running tools/install-deps.sh"
	"$TOP/tools/install-deps.sh"
fi
