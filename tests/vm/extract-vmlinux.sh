#!/usr/bin/env bash
# Print the uncompressed ELF kernel (with its .BTF section) held inside a
# bzImage, in the manner of the kernel's scripts/extract-vmlinux: try each
# compressor's magic at each offset where it occurs, keep the first payload
# that decompresses to an ELF file. Debian 5.10/6.1 use XZ; others may use zstd or gzip.
#   tests/vm/extract-vmlinux.sh vmlinuz > vmlinux
set -euo pipefail
img=$1
tmp=$(mktemp); trap 'rm -f "$tmp"' EXIT
try() { # magic(PCRE escapes) decompress-command...
	local magic=$1 off; shift
	for off in $(LC_ALL=C grep -aboP "$magic" "$img" 2>/dev/null | cut -d: -f1 | head -5); do
		tail -c +$((off + 1)) "$img" | "$@" > "$tmp" 2>/dev/null || true
		if [ "$(head -c 4 "$tmp" | od -An -c | tr -d ' ')" = '177ELF' ]; then
			cat "$tmp"; exit 0
		fi
	done
}
try '\xfd7zXZ\x00' xz -dc
try '\x28\xb5\x2f\xfd' zstd -dc
try '\x1f\x8b\x08' gzip -dc
try 'BZh' bzip2 -dc
echo "extract-vmlinux: no known compressed ELF payload in $img" >&2
exit 1
