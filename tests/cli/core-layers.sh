#!/usr/bin/env bash
# src/core is pure logic in layers (docs/building.md, "Layout"): no libbpf,
# no curses, nothing of the programs around it; and each layer includes only
# the helpers at src/core's top, the layers below it and the shared BPF
# headers:
#   (top)   threads, huge pages, option parsing, the clock
#   store   the .ntp files             top
#   model   the reducer                top, store
#   render  the outputs                top, store, model
#   pump    the driver, files' source  top, store, model
#   synth   the generator              top, store, model
# Every quoted include is resolved against its file's directory, as the
# compiler does first.
set -u
cd "$(dirname "$0")/../.."
fail=0
declare -A allowed=(
	[top]="top"
	[store]="top store"
	[model]="top store model"
	[render]="top store model render"
	[pump]="top store model pump"
	[synth]="top store model synth"
)
layer_of() { # PATH below the repository: its layer, or what else it is
	case $1 in
	bpf/*) echo bpf ;;
	src/core/*/*) local d=${1#src/core/}; echo "${d%%/*}" ;;
	src/core/*) echo top ;;
	*) echo outside ;;
	esac
}
n=0
while IFS= read -r f; do
	n=$((n + 1))
	from=$(layer_of "$f")
	[ -n "${allowed[$from]:-}" ] || { echo "  FAIL core-layers: $f is in no layer ($from): add it to docs/building.md and this test"; fail=1; continue; }
	while IFS=: read -r line inc; do
		case $inc in
		*'<bpf/'*|*'<curses.h>'*|*'<ncurses'*|*'<ncursesw/'*)
			echo "  FAIL core-layers: $f:$line includes ${inc#*#include } (src/core uses neither libbpf nor curses)"; fail=1; continue ;;
		*'#include "'*) ;;
		*) continue ;;
		esac
		target=${inc#*\"}; target=${target%%\"*}
		to=$(layer_of "$(realpath -m --relative-to=. "$(dirname "$f")/$target")")
		[ "$to" = bpf ] && continue
		case " ${allowed[$from]} " in
		*" $to "*) ;;
		*) echo "  FAIL core-layers: $f:$line includes \"$target\" ($to), not a layer $from may use (${allowed[$from]})"; fail=1 ;;
		esac
	done < <(grep -n '^[[:space:]]*#[[:space:]]*include' "$f")
done < <(find src/core -name '*.[ch]' | sort)
[ "$fail" = 0 ] && echo "  ok   core-layers ($n files of src/core, each including only what its layer may)"
exit $fail
