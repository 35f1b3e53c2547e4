#!/usr/bin/env bash
# ntprof's SPDK patch carries no line of SPDK's code: every hunk inserts
# (header "-N,0", without the function name git puts after it: that is
# SPDK's text too), every line in a hunk is an added one, no context, no
# removal. It defines and exports the sampling variable and the count of
# sampled commands in flight (ntprof_inflight) that the recorder's stop
# waits on, which the helpers count only on a sampled command's path.
# spdk/apply.sh refuses a tree of another version, and a directory
# that is not an SPDK tree, each in one line. The headers it copies into
# SPDK compile on their own (C, -Wall -Wextra -Werror).
set -u
cd "$(dirname "$0")/../.."
P=spdk/ntprof-usdt.patch
fail=0
ok() { echo "  ok   $1"; }
bad() { echo "  FAIL $1"; fail=1; }

bad_lines=$(awk '
	/^diff --git / || /^index / || /^--- a\// || /^\+\+\+ b\// { next }
	/^@@ -[0-9]+,0 \+[0-9]+(,[0-9]+)? @@$/ { next }
	/^\+/ { added++; next }
	{ print NR ": " $0 }
	END { if (!added) print "no added line" }' "$P")
[ -z "$bad_lines" ] && ok "patch-added-lines-only ($(grep -c '^+[^+]' "$P") lines, $(grep -c '^@@' "$P") hunks)" ||
	{ bad "patch-added-lines-only:"; echo "$bad_lines" | head -5; }
# what it touches: the four transports, the request's build time, the variable and its export
files=$(grep '^+++ b/' "$P" | cut -c7- | sort | tr '\n' ' ')
[ "$files" = "lib/nvme/nvme.c lib/nvme/nvme_internal.h lib/nvme/nvme_rdma.c lib/nvme/nvme_tcp.c lib/nvme/spdk_nvme.map lib/nvmf/rdma.c lib/nvmf/tcp.c " ] &&
	ok patch-files || bad "patch-files: $files"
# the variables: defined in lib/nvme/nvme.c, exported by its version script
for v in 'volatile uint32_t ntprof_sample_n' 'struct ntp_spdk_flight ntprof_inflight'; do
	awk -v v="^\\+$v;\$" '/^\+\+\+ b\// { f = $2 } f == "b/lib/nvme/nvme.c" && $0 ~ v { found = 1 } END { exit !found }' "$P" &&
		ok "patch-defines-${v##* }" || bad "patch-defines-${v##* }"
done
for v in ntprof_sample_n ntprof_inflight; do
	awk -v v="^\\+\t$v;\$" '/^\+\+\+ b\// { f = $2 } f == "b/lib/nvme/spdk_nvme.map" && $0 ~ v { found = 1 } END { exit !found }' "$P" &&
		ok "patch-exports-$v" || bad "patch-exports-$v"
done
# the count: begun in ntprof_begin after the decision (an unsampled command
# returns before it), done in NTPROF_DONE after the probe, inside its branch
awk '/^static inline void ntprof_begin\(/ { b = 1 } b && /^\t\treturn;$/ { ret = NR } b && /ntprof_count\(0\);/ { cnt = NR } b && /^}/ { b = 0 }
	END { exit !(ret && cnt > ret) }' spdk/ntprof_usdt.h && ok header-counts-begun-when-sampled || bad header-counts-begun-when-sampled
awk '/^#define NTPROF_DONE\(/ { d = 1 } d && /DTRACE_PROBE3/ { p = NR } d && /ntprof_count\(1\);/ { c = NR } d && /^} while \(0\)$/ { d = 0 }
	END { exit !(p && c > p) }' spdk/ntprof_usdt.h && ok header-counts-done-after-probe || bad header-counts-done-after-probe
# a sampled command whose submission fails after ntprof_begin is counted
# done without its probe (NTPROF_DROP); the RDMA host has two such paths
awk '/^#define NTPROF_DROP\(/ { d = 1 } d && /DTRACE_PROBE/ { p = 1 } d && /ntprof_count\(1\);/ { c = 1 } d && /^} while \(0\)$/ { d = 0 }
	END { exit !(c && !p) }' spdk/ntprof_usdt.h && ok header-drop-counts-done-no-probe || bad header-drop-counts-done-no-probe
n=$(awk '/^\+\+\+ b\// { f = $2 } f == "b/lib/nvme/nvme_rdma.c" && /^\+.*NTPROF_DROP\(&rdma_req->ntprof\);$/ { n++ } END { print n + 0 }' "$P")
[ "$n" = 2 ] && ok patch-rdma-host-drops-failed-submits || bad "patch-rdma-host-drops-failed-submits ($n)"
for probe in nvmf_tcp_done nvmf_rdma_done nvme_tcp_done nvme_rdma_done; do
	grep -q "^+.*NTPROF_DONE($probe," "$P" && ok "patch-fires-$probe" || bad "patch-fires-$probe"
done

W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/old/lib/nvmf" "$W/none"
echo 24.01 > "$W/old/VERSION"
touch "$W/old/lib/nvmf/tcp.c"
out=$(spdk/apply.sh "$W/old" 2>&1); rc=$?
[ $rc != 0 ] && grep -qE '^spdk/apply.sh: SPDK 24.01 \(commit unknown\) is not a version this patch was made against \(26.09.0-pre 3230130e6a41\)' <<<"$out" &&
	ok apply-refuses-version || bad "apply-refuses-version (exit $rc): $out"
out=$(spdk/apply.sh "$W/none" 2>&1); rc=$?
[ $rc != 0 ] && grep -qE "^spdk/apply.sh: $W/none: not an SPDK source tree" <<<"$out" &&
	ok apply-refuses-non-tree || bad "apply-refuses-non-tree (exit $rc): $out"
[ "$(wc -l <<<"$out")" = 1 ] && ok apply-one-line || bad "apply-one-line: $out"

# <sys/sdt.h> found as mk/spdk.mk finds it (Debian: the multiarch include
# directory); without it the check is said skipped, not passed
if printf '#include <sys/sdt.h>\n' | ${CC:-cc} -E -x c - > /dev/null 2>&1; then
	printf '#include "ntprof_usdt.h"\nvolatile uint32_t ntprof_sample_n;\nstruct ntp_spdk_flight ntprof_inflight;\nint main(void) { struct ntp_spdk_rec r; ntprof_begin(&r, 1, 2, 2, 1, 8, 0, 7, 0, 0); NTPROF_STAMP(&r, 1); NTPROF_DONE(nvmf_tcp_done, &r); NTPROF_DROP(&r); return 0; }\n' > "$W/t.c"
	${CC:-cc} -Wall -Wextra -Werror -std=gnu11 -Ispdk -Ibpf "$W/t.c" -o "$W/t" 2> "$W/cc.err" &&
		ok headers-compile || { bad headers-compile; head -5 "$W/cc.err"; }
else
	echo "  skip headers-compile (no <sys/sdt.h>: systemtap-sdt-dev)"
fi

# With NTP_SPDK_TREE, an SPDK tree of the version the patch names (CI has
# none: nothing fetched is in the repository), the patch applies to its
# files and lands where the record is still the command's when the probe
# fires: the RDMA host calls the application's callback before it puts the
# request back on the free list (a command the callback submits takes
# another one) and fires right after the put; the TCP host puts it back
# before the callback and so fires from a copy taken before the put; each
# failed submit of the RDMA host after ntprof_begin drops the record.
if [ -n "${NTP_SPDK_TREE:-}" ]; then
	mkdir -p "$W/tree"
	for f in $(grep '^+++ b/' "$P" | cut -c7-); do
		mkdir -p "$W/tree/$(dirname "$f")"
		cp "$NTP_SPDK_TREE/$f" "$W/tree/$f"
	done
	if grep -q ntprof_usdt.h "$W/tree/lib/nvmf/tcp.c"; then
		ok "tree-already-patched ($NTP_SPDK_TREE)"
	elif (cd "$W/tree" && git apply --unidiff-zero "$OLDPWD/$P" 2> "$W/apply.err"); then
		ok tree-patch-applies
	else
		bad tree-patch-applies; head -3 "$W/apply.err"
	fi
	# the function's lines, "N:text", from its name at the start of a line to its closing brace
	fn() { awk -v f="^$2\\(" '$0 ~ f { in_ = 1 } in_ { print NR ":" $0 } in_ && /^}/ { exit }' "$W/tree/$1"; }
	fn lib/nvme/nvme_rdma.c nvme_rdma_req_complete | awk -F: '
		/nvme_complete_request\(/ { cb = $1 } /nvme_rdma_req_put\(/ { put = $1 } /NTPROF_DONE\(nvme_rdma_done,/ { done = $1 }
		END { exit !(cb && put > cb && done == put + 1) }' &&
		ok tree-rdma-host-callback-put-done || bad tree-rdma-host-callback-put-done
	fn lib/nvme/nvme_rdma.c nvme_rdma_req_put | grep -q 'TAILQ_INSERT_HEAD(&rqpair->free_reqs' &&
		fn lib/nvme/nvme_rdma.c nvme_rdma_req_get | grep -q 'TAILQ_FIRST(&rqpair->free_reqs)' &&
		ok tree-rdma-host-free-list-lifo || bad tree-rdma-host-free-list-lifo
	fn lib/nvme/nvme_rdma.c nvme_rdma_qpair_submit_request | awk -F: '
		/ntprof_begin\(/ { b = 1 } b && /NTPROF_DROP\(/ { drop = $1 }
		b && /nvme_rdma_req_put\(/ { puts++; if (drop != $1 - 1) bad++ }
		END { exit !(b && puts == 2 && !bad) }' &&
		ok tree-rdma-host-drops-failed-submits || bad tree-rdma-host-drops-failed-submits
	fn lib/nvme/nvme_tcp.c nvme_tcp_req_complete | awk -F: '
		/memcpy\(&ntprof_rec, &tcp_req->ntprof/ { cp = $1 } /nvme_tcp_req_put\(/ { put = $1 }
		/nvme_complete_request\(/ { cb = $1 } /NTPROF_DONE\(nvme_tcp_done, &ntprof_rec\)/ { done = $1 }
		END { exit !(cp && put > cp && cb > put && done > cb) }' &&
		ok tree-tcp-host-copies-before-put || bad tree-tcp-host-copies-before-put
	# the targets fire in the COMPLETED state, before the request is freed
	fn lib/nvmf/rdma.c nvmf_rdma_request_process | awk -F: '
		/NTPROF_DONE\(nvmf_rdma_done,/ { done = $1 } done && !fr && /nvmf_rdma_request_free\(/ { fr = $1 }
		END { exit !(done && fr > done) }' &&
		ok tree-rdma-target-done-before-free || bad tree-rdma-target-done-before-free
	fn lib/nvmf/tcp.c nvmf_tcp_req_process | awk -F: '
		/NTPROF_DONE\(nvmf_tcp_done,/ { done = $1 } done && !put && /nvmf_tcp_req_put\(/ { put = $1 }
		END { exit !(done && put > done) }' &&
		ok tree-tcp-target-done-before-put || bad tree-tcp-target-done-before-put
else
	echo "  skip tree-* (no NTP_SPDK_TREE: an SPDK tree of the patch's version)"
fi
[ $fail = 0 ] && echo "spdk-patch.sh: all checks passed"
exit $fail
