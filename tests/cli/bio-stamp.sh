#!/usr/bin/env bash
# Host records with the bio's submission (H_BIO_SUBMIT; docs/stage-model.md,
# "What end to end spans"), as `generate --bio-stamp` writes them: the same
# commands near their tags' limit, with and without the stamp. Without it the
# tag wait is outside end to end and the report says commands may have
# waited; with it the wait is in the host block layer, end to end grows by
# exactly that, the other stages are unchanged, and neither the tag note nor
# the note on stage QDs above the tags (a waiting command holds no tag) is
# printed; the what-if takes the wait out of the host block layer's
# station. Environment: NTPROF (the binary under test).
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
# the wait counted apart (BLK_SUBMIT - BIO_SUBMIT): the same amount
assert "tag_wait" not in p, p.get("tag_wait")
tw = b["tag_wait"]
assert tw["n"] == b["sampled"] and abs(tw["mean_us"] - wait) < 0.01, (tw, wait)
PY
"$NTPROF" report --detail "$tmp/bio.ntp" | grep -q "^  of it, waiting for a tag  *[0-9]" &&
	! "$NTPROF" report --detail "$tmp/plain.ntp" | grep -q "waiting for a tag" &&
	ok "bio: --detail's tag wait row" || bad "bio: --detail's tag wait row"

# The what-if (docs/what-if.md, "The host's tags"): the tag wait is out of
# the host block layer's station. These 8 tags were not held full (7 holding
# one on average: an open loop's bursts), so the model is that of the
# commands holding a tag, as without the stamp: at QD 4, below the tags, no
# command waits for one and the mean is the unstamped file's (not the
# stamped run's end to end, wait included).
for v in plain bio; do
	"$NTPROF" report --what-if-qd 4,16 -j "$tmp/$v-wi.json" "$tmp/$v.ntp" >"$tmp/$v-wi.txt" 2>&1 ||
		bad "report --what-if-qd $v: exit $?"
done
grep -q "^tag wait: .* us a command, left out: the 8 tags were not held full" "$tmp/bio-wi.txt" &&
	! grep -q "^tag wait" "$tmp/plain-wi.txt" && ok "bio: what-if says the tag wait is left out" ||
	{ bad "bio: what-if tag wait line"; cat "$tmp/bio-wi.txt"; }
python3 - "$tmp/plain-wi.json" "$tmp/bio-wi.json" <<'PY' && ok "bio: what-if as without the stamp" || bad "bio: what-if"
import json, sys
p, b = (json.load(open(f))["what_if"]["groups"][0] for f in sys.argv[1:3])
assert p["ok"] and b["ok"], (p, b)
pm, bm = p["measured"], b["measured"]
assert pm["tag_wait_us"] is None and bm["tag_wait_us"] > 20, (pm, bm)
assert bm["tag_wait_modelled"] is False and bm["qd"] == pm["qd"] == 7, bm
assert abs(bm["qd_holding_tag"] - pm["qd_little"]) < 1e-3 and bm["qd_little"] > pm["qd_little"] + 2, bm
assert bm["mean_us"] > pm["mean_us"] + 20, (bm, pm)
ps, bs = ({s["stage"]: s for s in g["stations"]} for g in (p, b))
assert abs(bs["host_block"]["service_us"] - ps["host_block"]["service_us"]) < 0.01, (ps, bs)
pp, bp = ({q["qd"]: q for q in g["predictions"]} for g in (p, b))
assert bp[4]["tag_wait_us"] == 0 and abs(bp[4]["mean_us"] - pp[4]["mean_us"]) < 0.01, (bp[4], pp[4])
assert abs(bp[4]["iops"] - pp[4]["iops"]) < 0.5, (bp[4], pp[4])
assert bp[16]["tag_wait_us"] > 0 and abs(bp[16]["mean_us"] - pp[16]["mean_us"]) < 0.01, (bp[16], pp[16])
PY

# At 66k commands/s the tags are held nearly full (7.7 of 8): the wait is
# the tags', the QD counts the waiting commands (rate x end to end), the
# prediction at that QD is near the measurement, and below the tags it is
# the unstamped file's mean with no wait.
for v in plain bio; do
	extra=
	[ $v = bio ] && extra=--bio-stamp
	"$NTPROF" generate -q -o "$tmp/$v-66.ntp" -d 1 --rate 66000 --qd 8 --host-queues -s 10 --seed 3 $extra ||
		{ echo "generate $v 66k failed"; exit 1; }
	"$NTPROF" report --what-if-qd 4,24 -j "$tmp/$v-66.json" "$tmp/$v-66.ntp" >/dev/null 2>&1 ||
		bad "report --what-if-qd $v 66k: exit $?"
done
python3 - "$tmp/plain-66.json" "$tmp/bio-66.json" <<'PY' && ok "bio: what-if with the tags held full" || bad "bio: what-if 66k"
import json, sys
p, b = (json.load(open(f))["what_if"]["groups"][0] for f in sys.argv[1:3])
pm, bm = p["measured"], b["measured"]
assert bm["tag_wait_modelled"] is True and bm["qd"] == 24 and pm["qd"] == 8, (pm, bm)
pp, bp = ({q["qd"]: q for q in g["predictions"]} for g in (p, b))
assert bp[4]["tag_wait_us"] == 0 and abs(bp[4]["mean_us"] - pp[4]["mean_us"]) < 0.01, (bp[4], pp[4])
at = bp[24]
assert abs(at["mean_us"] - bm["mean_us"]) < 0.05 * bm["mean_us"], (at, bm)
assert abs(at["iops"] - bm["iops"]) < 0.05 * bm["iops"], (at, bm)
assert abs(at["tag_wait_us"] - bm["tag_wait_us"]) < 0.1 * bm["tag_wait_us"], (at, bm)
PY

# compare of the two: the stamp's side is named in a note (text and JSON's
# start_note), in either order; two recordings alike have none
for ab in "plain bio B" "bio plain A"; do
	set -- $ab
	"$NTPROF" compare "$tmp/$1.ntp" "$tmp/$2.ntp" >"$tmp/cmp.txt" 2>&1 || bad "compare $1 $2: exit $?"
	"$NTPROF" compare -j - "$tmp/$1.ntp" "$tmp/$2.ntp" >"$tmp/cmp.json" 2>&1 || bad "compare -j $1 $2: exit $?"
	other=$([ $3 = A ] && echo B || echo A)
	want="note: $3's host records start at the bio's submission, $other's at the request's allocation: end to end and the host block layer are not measured alike"
	grep -qF "$want" "$tmp/cmp.txt" && ok "compare $1 $2: the start's note" || bad "compare $1 $2: no note: $(grep note "$tmp/cmp.txt")"
	python3 - "$tmp/cmp.json" "$3" <<'PY' && ok "compare -j $1 $2: start_note" || bad "compare -j $1 $2: start_note"
import json, sys
g = json.load(open(sys.argv[1]))["groups"][0]
assert g["start_note"].startswith(sys.argv[2] + "'s host records start at the bio's submission"), g["start_note"]
PY
done
for v in plain bio; do
	"$NTPROF" compare "$tmp/$v.ntp" "$tmp/$v.ntp" >"$tmp/cmp.txt" 2>&1
	"$NTPROF" compare -j - "$tmp/$v.ntp" "$tmp/$v.ntp" >"$tmp/cmp.json" 2>&1
	! grep -q "bio's submission" "$tmp/cmp.txt" && grep -q '"start_note":null' "$tmp/cmp.json" &&
		ok "compare $v $v: no start note" || bad "compare $v $v: a start note"
done

exit $fail
