#!/usr/bin/env bash
# `ntprof btf`: merges the kernel's BTF with standalone module BTF made by
# pahole, deduplicates, and refuses inputs that hold no NVMe types. The
# module here is a small C file declaring the structures ntprof reads (as
# bpf/nvme_types.bpf.h names them) next to a struct list_head identical to the
# kernel's: after the merge the kernel's list_head must be the only one.
# The real file (5.10's -dbg package) is built and used in the test bed
# (tests/vm/btf.sh, scenarios record-probe and record-tcp on KERNEL=5.10).
set -u
cd "$(dirname "$0")/../.."
NTPROF=${NTPROF:-build/ntprof}
O=${O:-build}
KBTF=/sys/kernel/btf/vmlinux
for t in pahole bpftool cc; do
	command -v $t >/dev/null || { echo "  skip: $t missing"; exit 77; }
done
[ -r $KBTF ] || { echo "  skip: no $KBTF"; exit 77; }
W=$(mktemp -d "${TMPDIR:-/tmp}/ntprof-btf-test.XXXXXX")
trap 'rm -rf "$W"' EXIT
fail=0
check() { # NAME CONDITION-RESULT(0 ok) DETAILS
	if [ "$2" = 0 ]; then echo "  ok   $1"; else echo "  FAIL $1: $3"; fail=1; fi
}

cat > "$W/mod.c" <<'EOF'
struct list_head { struct list_head *next, *prev; };
struct nvme_ctrl { int instance; unsigned short cntlid; struct list_head node; };
struct nvme_request { void *cmd; struct nvme_ctrl *ctrl; };
struct nvme_tcp_queue;
struct nvme_tcp_request { struct nvme_request req; struct nvme_tcp_queue *queue; int state; };
struct nvme_tcp_queue { void *sock; struct nvme_tcp_request *request; struct list_head send_list; };
struct nvme_tcp_queue q;
EOF
cc -g -c "$W/mod.c" -o "$W/mod.o" && pahole --btf_encode_detached="$W/mod.btf" "$W/mod.o" ||
	{ echo "  FAIL could not make the module BTF"; exit 1; }

out=$("$NTPROF" btf -o "$W/merged.btf" $KBTF "$W/mod.btf" 2>&1); rc=$?
check merge "$([ $rc = 0 ] && grep -q 'types of: nvme_core nvme_tcp$' <<<"$out"; echo $?)" "exit $rc: $out"
bpftool btf dump file "$W/merged.btf" format raw > "$W/merged.txt" 2>&1
nk=$(bpftool btf dump file $KBTF format raw | grep -c '^\[')
nm=$(grep -c '^\[' "$W/merged.txt")
check merge-types "$([ "$(grep -c "STRUCT 'nvme_tcp_request' size=32" "$W/merged.txt")" = 1 ] &&
	[ "$(grep -c "STRUCT 'task_struct' " "$W/merged.txt")" = 1 ]; echo $?)" "nvme_tcp_request or task_struct missing"
# the kernel's types, then only the module's own (5 structs + their pointers):
# list_head, int, void * and unsigned short went to the kernel's copies
check merge-dedup "$([ "$(grep -c "STRUCT 'list_head' " "$W/merged.txt")" = 1 ] && [ $((nm - nk)) -le 8 ]; echo $?)" \
	"$((nm - nk)) types added to the kernel's $nk; list_head: $(grep -c "STRUCT 'list_head' " "$W/merged.txt")"

out=$("$NTPROF" btf -o "$W/x.btf" $KBTF $KBTF 2>&1); rc=$?
check no-nvme-types "$([ $rc != 0 ] && grep -q "^ntprof: btf: no NVMe module's types in the inputs" <<<"$out" && [ ! -e "$W/x.btf" ]; echo $?)" "exit $rc: $out"
out=$("$NTPROF" btf -o "$W/x.btf" $KBTF "$W/nonexistent.btf" 2>&1); rc=$?
check missing-input "$([ $rc != 0 ] && grep -q "^ntprof: $W/nonexistent.btf: " <<<"$out"; echo $?)" "exit $rc: $out"
out=$("$NTPROF" btf -o "$W/x.btf" $KBTF "$W/mod.c" 2>&1); rc=$?
check not-btf "$([ $rc != 0 ] && grep -q "^ntprof: $W/mod.c: no BTF in it" <<<"$out"; echo $?)" "exit $rc: $out"
out=$("$NTPROF" btf $KBTF "$W/mod.btf" 2>&1); rc=$?
check no-output "$([ $rc != 0 ] && grep -q '^ntprof: btf: -o OUT is required' <<<"$out"; echo $?)" "exit $rc: $out"
out=$("$NTPROF" btf -o "$W/x.btf" $KBTF 2>&1); rc=$?
check one-input "$([ $rc != 0 ] && grep -q "^ntprof: btf: needs the kernel's BTF and at least one module's" <<<"$out"; echo $?)" "exit $rc: $out"
# damaged module BTF: libbpf 1.1 parses it and then dereferences the bad
# offset (a segfault in btf__add_btf or btf__dedup); ntprof checks first.
# mod.btf: a 24-byte header, types from 24: [1] STRUCT list_head (name at 24,
# member 'next' name at 36, type at 40), [2] PTR (its type at 68).
hl=$(od -An -tu4 -j4 -N4 "$W/mod.btf" | tr -d ' ')
to=$(od -An -tu4 -j8 -N4 "$W/mod.btf" | tr -d ' ')
if [ "$hl" = 24 ] && [ "$to" = 0 ] && bpftool btf dump file "$W/mod.btf" format raw | head -1 | grep -q "STRUCT 'list_head'"; then
	for c in "24:type 1: its name is past the string section" "36:type 1: a member's name is past the string section" \
		 "40:type 1: a member's type is past the last type" "68:type 2: the type it refers to is past the last type"; do
		at=${c%%:*}
		cp "$W/mod.btf" "$W/bad$at.btf"
		printf '\377\377\177\000' | dd of="$W/bad$at.btf" bs=1 seek="$at" conv=notrunc 2>/dev/null
		out=$("$NTPROF" btf -o "$W/x.btf" $KBTF "$W/bad$at.btf" 2>&1); rc=$?
		check "damaged-btf-$at" "$([ $rc = 1 ] && grep -q "^ntprof: $W/bad$at.btf: damaged BTF: ${c#*:}" <<<"$out" &&
			! grep -q Sanitizer <<<"$out" && [ ! -e "$W/x.btf" ]; echo $?)" "exit $rc: $(head -c 300 <<<"$out")"
	done
else
	echo "  skip damaged-btf: pahole laid mod.btf out differently"
fi
# the output is not one of the inputs
cp "$W/mod.btf" "$W/keep.btf"
out=$("$NTPROF" btf -o "$W/mod.btf" $KBTF "$W/mod.btf" 2>&1); rc=$?
check output-is-input "$([ $rc = 1 ] && grep -q "refusing to write over" <<<"$out" && cmp -s "$W/mod.btf" "$W/keep.btf"; echo $?)" "exit $rc: $out"
# tools/ntprof-btf.sh refuses what is not a -dbg package or tree
out=$(NTPROF=$NTPROF tools/ntprof-btf.sh -o "$W/x.btf" "$W" 2>&1); rc=$?
check script-not-dbg "$([ $rc != 0 ] && grep -q 'no usr/lib/debug/lib/modules/<release>' <<<"$out"; echo $?)" "exit $rc: $out"
# tools/ntprof-btf.sh on the tree of a -dbg package: the kernel's BTF and
# every module it takes (mod.o stands in for each); without the RDMA modules
# it still makes the file, for NVMe/TCP, and says so
D=$W/dbg/usr/lib/debug
mkdir -p $D/boot $D/lib/modules/9.9.9-test/kernel/drivers/nvme/host $D/lib/modules/9.9.9-test/kernel/drivers/nvme/target \
	$D/lib/modules/9.9.9-test/kernel/drivers/infiniband/core
cp $KBTF $D/boot/vmlinux-9.9.9-test
for m in nvme/host/nvme-core nvme/host/nvme-tcp nvme/target/nvmet nvme/target/nvmet-tcp; do
	cp "$W/mod.o" $D/lib/modules/9.9.9-test/kernel/drivers/$m.ko
done
out=$(NTPROF=$NTPROF tools/ntprof-btf.sh -o "$W/tree.btf" "$W/dbg" 2>&1); rc=$?
check script-tcp-only "$([ $rc = 0 ] && [ -s "$W/tree.btf" ] &&
	grep -q 'no nvme-rdma.ko nvmet-rdma.ko ib_core.ko for 9.9.9-test under .*, and no modules.builtin for 9.9.9-test (.*) to tell whether they are built in: .*if not, it serves NVMe/TCP only' <<<"$out"; echo $?)" "exit $rc: $out"
for m in nvme/host/nvme-rdma nvme/target/nvmet-rdma infiniband/core/ib_core; do
	cp "$W/mod.o" $D/lib/modules/9.9.9-test/kernel/drivers/$m.ko
done
# the types before deduplication: the kernel's and 4 modules', then 7 modules'
before() { sed -n 's/.*(\([0-9]*\) before deduplication).*/\1/p' <<<"$1"; }
b4=$(before "$out")
out=$(NTPROF=$NTPROF tools/ntprof-btf.sh -o "$W/tree.btf" "$W/dbg" 2>&1); rc=$?
b7=$(before "$out")
check script-rdma "$([ $rc = 0 ] && ! grep -q 'NVMe/TCP only' <<<"$out" && [ -n "$b4" ] && [ -n "$b7" ] &&
	[ $(( (b7 - nk) * 4 )) = $(( (b4 - nk) * 7 )) ]; echo $?)" "exit $rc (types before deduplication: $b4 with 4 modules, $b7 with 7, kernel $nk): $out"
# ib_core built into the kernel (CONFIG_INFINIBAND=y): no .ko, a line of
# modules.builtin; the file still serves NVMe/RDMA, from the other 6 modules
rm $D/lib/modules/9.9.9-test/kernel/drivers/infiniband/core/ib_core.ko
out=$(NTPROF=$NTPROF tools/ntprof-btf.sh -o "$W/tree.btf" "$W/dbg" 2>&1); rc=$?
check script-ib-core-missing "$([ $rc = 0 ] && grep -q 'no ib_core.ko for 9.9.9-test .*NVMe/TCP only' <<<"$out"; echo $?)" "exit $rc: $out"
mkdir -p "$W/dbg/lib/modules/9.9.9-test"
printf 'kernel/drivers/infiniband/core/ib_core.ko\nkernel/fs/ext4/ext4.ko\n' > "$W/dbg/lib/modules/9.9.9-test/modules.builtin"
out=$(NTPROF=$NTPROF tools/ntprof-btf.sh -o "$W/tree.btf" "$W/dbg" 2>&1); rc=$?
b6=$(before "$out")
check script-ib-core-builtin "$([ $rc = 0 ] && ! grep -q 'NVMe/TCP only' <<<"$out" && grep -q 'ib_core is built into 9.9.9-test' <<<"$out" &&
	[ -n "$b6" ] && [ $(( (b6 - nk) * 4 )) = $(( (b4 - nk) * 6 )) ]; echo $?)" "exit $rc (types before deduplication: $b6 with 6 modules, $b4 with 4): $out"
# with modules.builtin, a module neither there nor built in: NVMe/TCP only
mv $D/lib/modules/9.9.9-test/kernel/drivers/nvme/host/nvme-rdma.ko "$W/nvme-rdma.ko"
out=$(NTPROF=$NTPROF tools/ntprof-btf.sh -o "$W/tree.btf" "$W/dbg" 2>&1); rc=$?
check script-rdma-not-builtin "$([ $rc = 0 ] && grep -q "no nvme-rdma.ko for 9.9.9-test under .*, nor built in ($W/dbg/lib/modules/9.9.9-test/modules.builtin): the file serves NVMe/TCP only" <<<"$out"; echo $?)" "exit $rc: $out"
mv "$W/nvme-rdma.ko" $D/lib/modules/9.9.9-test/kernel/drivers/nvme/host/nvme-rdma.ko
rm $D/lib/modules/9.9.9-test/kernel/drivers/nvme/target/nvmet-tcp.ko
out=$(NTPROF=$NTPROF tools/ntprof-btf.sh -o "$W/tree.btf" "$W/dbg" 2>&1); rc=$?
check script-missing-module "$([ $rc != 0 ] && grep -q 'error: no nvmet-tcp.ko for 9.9.9-test under' <<<"$out"; echo $?)" "exit $rc: $out"

# tools/ntprof-btf.sh -l: the RDMA modules too (their types are what
# record -t rdma needs on a kernel without module BTF)
out=$(tools/ntprof-btf.sh -l 2>&1); rc=$?
check script-modules "$([ $rc = 0 ] && [ "$(echo $out)" = "nvme-core nvme-tcp nvmet nvmet-tcp nvme-rdma nvmet-rdma ib_core" ]; echo $?)" "exit $rc: $(echo $out)"

# Before any load, record and probe check the BTF that CO-RE will use (the
# --btf file when a module has none of its own) for every structure and field
# the programs read (src/collector/btf_need.c), and name what is missing.
# `ntprof probe` shows it on its "types:" line without the NVMe modules.
if [ "$(id -u)" = 0 ]; then
	# merged.btf has nvme_core's and nvme_tcp's structures but no
	# nvme_tcp_queue.pdu, no include/linux/nvme.h and nothing of RDMA
	out=$("$NTPROF" probe -r host -t rdma --btf "$W/merged.btf" 2>&1)
	check need-rdma-types "$(grep -q "^types: missing: rdma: the kernel's BTF has no struct .*nvme_rdma_request.* (looked for in --btf $W/merged.btf, which stands for the modules' BTF; make it again with tools/ntprof-btf.sh, docs/kernel-btf.md)$" <<<"$out" &&
		! grep -q "^types: .*struct [^;]*nvme_tcp_request" <<<"$out"; echo $?)" "$(grep '^types' <<<"$out")"
	out=$("$NTPROF" probe -r host -t tcp --btf "$W/merged.btf" 2>&1)
	check need-tcp-field "$(grep -q "^types: missing: tcp: the kernel's BTF has no struct nvme_command.*; no field nvme_tcp_queue.pdu (" <<<"$out" &&
		! grep -q "nvme_rdma\|nvmet_" <<<"$(grep '^types' <<<"$out")"; echo $?)" "$(grep '^types' <<<"$out")"
	# every structure the programs read (the object's own declarations, the
	# ___ntp suffix dropped, next to the kernel's types): nothing missing
	bpftool btf dump file "$O/bpf/ntprof.bpf.o" format c > "$W/obj.h" 2>/dev/null
	{
		echo '#include "vmlinux.h"'
		awk -v V="$O/bpf/vmlinux.h" '
			BEGIN { while ((getline l < V) > 0) if (l ~ /^(struct|union|enum) [a-z_0-9]+ \{/) { split(l, f, " "); have[f[2]] = 1 } }
			/^(struct|union|enum) [a-z_0-9]*___ntp \{/ { n = $2; sub(/___ntp$/, "", n); p = !(n in have) }
			p { print } /^\};/ { p = 0 }' "$W/obj.h" | sed 's/___ntp//g; s/__attribute__((preserve_access_index))//'
		sed -n "s/^\(struct\|union\) \([a-z_0-9]*\)___ntp {.*/\1 \2 *use_\2;/p" "$W/obj.h"
	} > "$W/all.c"
	# vmlinux.h as bpftool writes it drops an enum's size: the kernel's
	# one-byte enums (struct bio's bi_write_hint) made packed again, so
	# that gcc lays out the structures that embed them as the kernel did
	# (two differing struct bio make libbpf's relocations ambiguous)
	bpftool btf dump file $KBTF format raw 2>/dev/null |
		sed -n "s/^\[[0-9]*\] ENUM '\([a-z_0-9]*\)' .*size=1 .*/\1/p" > "$W/enum1"
	awk 'NR == FNR { one[$1] = 1; next }
		/^enum [a-z_0-9]+ \{/ { e = ($2 in one) } e && /^\};/ { print "} __attribute__((packed));"; e = 0; next } { print }' \
		"$W/enum1" "$O/bpf/vmlinux.h" > "$W/vmlinux.h"
	if cc -g -I"$W" -I"$O/bpf" -c "$W/all.c" -o "$W/all.o" 2>"$W/all.err" && pahole --btf_encode_detached="$W/all.btf" "$W/all.o" &&
	   "$NTPROF" btf -o "$W/all-merged.btf" $KBTF "$W/all.btf" >/dev/null 2>&1; then
		for tr in tcp rdma; do
			out=$("$NTPROF" probe -r both -t $tr --btf "$W/all-merged.btf" 2>&1)
			check need-$tr-complete "$(grep -q "^types: ok (from $W/all-merged.btf)$" <<<"$out"; echo $?)" "$(grep '^types' <<<"$out")"
		done
		# a field read only where bpf_core_field_exists() finds it is not
		# required (cdw10 and cdw11 of nvme_common_command); the members
		# on the way to it and the others read of them are (common,
		# opcode): the file of every structure, less those
		cut() { # NAME SED-SCRIPT: all.c edited, merged into all-NAME.btf
			sed "$2" "$W/all.c" > "$W/all-$1.c" &&
			cc -g -I"$W" -I"$O/bpf" -c "$W/all-$1.c" -o "$W/all-$1.o" 2>"$W/all.err" &&
			pahole --btf_encode_detached="$W/all-$1.bt" "$W/all-$1.o" &&
			"$NTPROF" btf -o "$W/all-$1.btf" $KBTF "$W/all-$1.bt" >/dev/null 2>&1
		}
		if cut noguarded '/^struct nvme_common_command {/,/^};/{/cdw1[01];/d}'; then
			out=$("$NTPROF" probe -r both -t tcp --btf "$W/all-noguarded.btf" 2>&1)
			check need-guarded-optional "$(grep -q "^types: ok (from $W/all-noguarded.btf)$" <<<"$out" &&
				! grep -q "cdw10" "$W/all-noguarded.c"; echo $?)" "$(grep '^types' <<<"$out")"
		else
			check need-guarded-optional 1 "could not build it: $(head -3 "$W/all.err")"
		fi
		if cut noopcode '/^struct nvme_common_command {/,/^};/{/opcode;/d}'; then
			out=$("$NTPROF" probe -r both -t tcp --btf "$W/all-noopcode.btf" 2>&1)
			check need-unguarded-opcode "$(grep -q "^types: missing: tcp: the kernel's BTF has no field nvme_common_command.opcode (" <<<"$out"; echo $?)" "$(grep '^types' <<<"$out")"
		else
			check need-unguarded-opcode 1 "could not build it: $(head -3 "$W/all.err")"
		fi
		if cut nocommon '/^struct nvme_command {/,/^};/s/ common;/ common_renamed;/'; then
			out=$("$NTPROF" probe -r both -t tcp --btf "$W/all-nocommon.btf" 2>&1)
			check need-unguarded-common "$(grep -q "^types: missing: tcp: the kernel's BTF has no field nvme_command.common (" <<<"$out"; echo $?)" "$(grep '^types' <<<"$out")"
		else
			check need-unguarded-common 1 "could not build it: $(head -3 "$W/all.err")"
		fi
		# what is required is what libbpf relocates, no more: bpftool's
		# min_core_btf keeps of a kernel's BTF only the types and members
		# the object's CO-RE relocations use (a field declared in
		# bpf/nvme_types.bpf.h that no program reads is not in it), and a
		# kernel that has just those passes
		if bpftool gen min_core_btf "$W/all-merged.btf" "$W/min.btf" "$O/bpf/ntprof.bpf.o" 2>"$W/min.err"; then
			for tr in tcp rdma; do
				out=$("$NTPROF" probe -r both -t $tr --btf "$W/min.btf" 2>&1)
				check need-$tr-relocated "$(grep -q "^types: ok (from $W/min.btf)$" <<<"$out"; echo $?)" "$(grep '^types' <<<"$out")"
			done
		else
			echo "  skip need-relocated: bpftool gen min_core_btf failed: $(head -1 "$W/min.err")"
		fi
	else
		check need-complete 1 "could not build the file of every structure: $(head -3 "$W/all.err")"
	fi
fi
# btf_need.c places every structure the BPF object declares in a module (a
# structure it does not know is needed by every transport and side)
if [ -f "$O/bpf/ntprof.bpf.o" ]; then
	unplaced=$(bpftool btf dump file "$O/bpf/ntprof.bpf.o" format raw 2>/dev/null |
		sed -n "s/^\[[0-9]*\] \(STRUCT\|UNION\) '\([a-z_]*\)___ntp'.*/\2/p" |
		while read -r t; do grep -q "{ \"$t\", " src/collector/btf_need.c || echo "$t"; done)
	check need-table "$([ -z "$unplaced" ]; echo $?)" "not in src/collector/btf_need.c's table: $unplaced"
fi
exit $fail
