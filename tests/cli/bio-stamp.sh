#!/usr/bin/env bash
# Host records with the bio's submission (H_BIO_SUBMIT; docs/stage-model.md,
# "What end to end spans"), as `generate --bio-stamp` writes them: the same
# commands near their tags' limit, with and without the stamp. Without it the
# tag wait is outside end to end and the report says commands may have
# waited; with it the wait is in the host block layer, end to end grows by
# exactly that, the other stages are unchanged, and neither the tag note nor
# the note on stage QDs above the tags (a waiting command holds no tag) is
# printed. Environment: NTPROF (the binary under test).
set -u
cd "$(dirname "$0")/../.."
root=$PWD
NTPROF=${NTPROF:-$root/build/ntprof}
case $NTPROF in /*) ;; *) NTPROF=$root/$NTPROF ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "  ok   $1"; }
bad() { echo "  FAIL $1"; fail=1; }

# 60k commands/s of about 116 us on 8 tags: 7 in flight, some wait for a tag
for v in plain bio; do
	extra=
	[ $v = bio ] && extra=--bio-stamp
	"$NTPROF" generate -q -o "$tmp/$v.ntp" -d 1 --rate 60000 --qd 8 --host-queues -s 10 --seed 3 $extra ||
		{ echo "generate $v failed"; exit 1; }
	"$NTPROF" report "$tmp/$v.ntp" >"$tmp/$v.txt" 2>&1 || bad "report $v: exit $?"
	"$NTPROF" report -j - "$tmp/$v.ntp" >"$tmp/$v.json" 2>&1 || bad "report -j $v: exit $?"
done

grep -q "commands may have waited for a tag before end to end starts" "$tmp/plain.txt" &&
	ok "plain: tag note" || { bad "plain: tag note"; cat "$tmp/plain.txt"; }
if grep -q "^note:" "$tmp/bio.txt"; then
	bad "bio: no note expected"
	cat "$tmp/bio.txt"
else
	ok "bio: no tag or QD note"
fi

python3 - "$tmp/plain.json" "$tmp/bio.json" <<'PY' && ok "bio: the wait in the host block layer only" || bad "bio: stages"
import json, sys
p, b = (json.load(open(f))["groups"][0] for f in sys.argv[1:3])
assert p["sampled"] == b["sampled"] > 5000, (p["sampled"], b["sampled"])
ps, bs = ({s["stage"]: s for s in g["stages"]} for g in (p, b))
wait = bs["host_block"]["mean_us"] - ps["host_block"]["mean_us"]
# the tag wait: tens of microseconds on average at this load
assert wait > 20, wait
for k in ("host_driver", "network", "target_driver", "storage"):
    assert abs(ps[k]["mean_us"] - bs[k]["mean_us"]) < 1e-6, (k, ps[k], bs[k])
grow = b["latency_us"]["mean"] - p["latency_us"]["mean"]
assert abs(grow - wait) < 0.01, (grow, wait)
PY

exit $fail
