# top-batch: ntprof-top live in batch mode (-b -n 9 -i 2 -r both -s 1) while a
# 14 s 4 KiB random read load at QD1 runs over NVMe/TCP; the load starts once
# the hooks are in, so screens 2-6 (2 s to 12 s) lie inside it. Checks:
#  top-batch-stages: on each of them the five stage means of the read group
#    add up to its end-to-end mean (to the rounding of the printed figures);
#  top-batch-rate: their mean command rate is within 15 % of the load
#    generator's IOPS (per screen it varies more under TCG). ntprof-top
#    outlives the load, so the load runs traced all along, as it is measured.
# tb-timeout: 420
tb_setup_tcp || { tb_result top-batch FAIL "NVMe/TCP setup failed"; exit 0; }
dev=${TB_DEV#/dev/}
# ntprof-top first: loading and attaching under TCG takes a while, and a
# running load slows it further. The load starts once the hooks are in;
# the first interval (load starting up) is not checked.
tb_log "ntprof-top -b -n 9 -r both -s 1 -i 2"
( LANG=C exec timeout -k 5 360 ntprof-top -b -n 9 -r both -s 1 -i 2 --width 100 \
	> "$TB_OUT/top.txt" 2> "$TB_OUT/top.err" ) &
top_pid=$!
: >> "$TB_OUT/top.err"
i=0
while ! grep -q "hooks:" "$TB_OUT/top.err" && kill -0 $top_pid 2>/dev/null && [ $i -lt 3000 ]; do
	sleep 0.1; i=$((i + 1))
done
tb_log "after $((i / 10)) s: $(head -c 300 "$TB_OUT/top.err")"
tb_load --rw randread --bs 4k --qd 1 --secs 14
wait $top_pid
rc=$?
tb_log "ntprof-top exited $rc: $(head -c 400 "$TB_OUT/top.err")"
cat "$TB_OUT/top.txt"
if [ $rc -ne 0 ] || ! grep -q "read 4KiB $dev" "$TB_OUT/top.txt"; then
	tb_result top-batch FAIL "ntprof-top -b exited $rc: $(head -c 300 "$TB_OUT/top.err")"
	exit 0
fi
# Per screen: the read group's title (mean, rate) and its five stage rows.
awk -v dev="$dev" -v iops="$TB_LOAD_IOPS" '
function num(s) { return s ~ /k$/ ? substr(s, 1, length(s) - 1) * 1000 : (s ~ /M$/ ? substr(s, 1, length(s) - 1) * 1e6 : s + 0) }
$0 ~ "read 4KiB " dev "  " { screens++; in_g = screens >= 2 && screens <= 6; stages = 0; sum = 0
	for (i = 1; i <= NF; i++) { if ($i == "mean") mean = $(i + 1); if ($i ~ /\/s$/) rate = num(substr($i, 1, length($i) - 2)) }
	next }
in_g && /^  (host block|host driver|network|target driver|storage)/ {
	if ($(NF - 2) != "-") { sum += $(NF - 2); stages++ }
	if (/^  storage/) { in_g = 0
		if (stages != 5) { printf "screen %d: %d stages shown, not 5\n", screens, stages; bad_stages++ }
		if (sum - mean > 0.03 || mean - sum > 0.03) { printf "screen %d: stages sum to %.2f, e2e mean %.2f\n", screens, sum, mean; bad_stages++ }
		rates += rate; n_rates++
		printf "screen %d: stages %d sum %.2f e2e %.2f rate %.0f/s load %.0f IOPS\n", screens, stages, sum, mean, rate, iops } }
END { avg = n_rates ? rates / n_rates : 0
	if (avg < 0.85 * iops || avg > 1.15 * iops) bad_rate++
	printf "mean rate of screens 2-6: %.0f/s, load %.0f IOPS\n", avg, iops
	printf "screens=%d bad_stages=%d bad_rate=%d\n", n_rates, bad_stages, bad_rate }' "$TB_OUT/top.txt" > "$TB_OUT/check.txt"
cat "$TB_OUT/check.txt"
tb_figure top-batch $(tail -1 "$TB_OUT/check.txt") load_iops=$TB_LOAD_IOPS
tb_check top-batch-stages "$(tail -1 "$TB_OUT/check.txt" | sed 's/.*screens=\([0-9]*\) bad_stages=\([0-9]*\).*/\1 == 5 \&\& \2 == 0/')" \
	"$(grep '^screen' "$TB_OUT/check.txt" | head -5 | sed 's/ rate.*//' | tr '\n' ';')"
tb_check top-batch-rate "$(tail -1 "$TB_OUT/check.txt" | sed 's/.*screens=\([0-9]*\).*bad_rate=\([0-9]*\).*/\1 == 5 \&\& \2 == 0/')" \
	"$(grep '^mean rate' "$TB_OUT/check.txt")"
