# top-batch: ntprof-top live in batch mode (-b -n 9 -i 2 -r both -s 1) while a
# 14 s 4 KiB random read load at QD1 runs over NVMe/TCP; the load starts once
# the hooks are in, so screens 2-6 (2 s to 12 s) lie inside it. Checks:
#  top-batch-stages: on each of them the five stage means of the read group
#    add up to its end-to-end mean (to the rounding of the printed figures);
#  top-batch-rate: the commands of all screens (rate x the screen's own
#    interval, summed) are within 10 % of the load generator's I/O count.
#    ntprof-top starts before the load and outlives it, so every I/O falls
#    in some screen; comparing whole runs, not a window of screens against
#    the load's average, keeps TCG's swings of the per-second rate out of
#    the check (a window of screens 2-6 against the load's mean IOPS once
#    missed by 13 %). A live interval ends when the collection thread's
#    wait does: one that ends late is long, and the next, up to the grid's
#    next point, short; so each screen's rate is taken over the length its
#    header shows, not the -i setting. A screen after the load says "no
#    command counted" and has no rate: 0 (a CI run took the screen
#    before's again for the last two, and summed 137200 commands for the
#    load's 107906 I/Os). The printed figures' rounding
#    ("1.1k/s", the interval to the ms) is the remaining error.
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
awk -v dev="$dev" -v iops="$TB_LOAD_IOPS" -v ios="$TB_LOAD_IOS" '
function num(s) { return s ~ /k$/ ? substr(s, 1, length(s) - 1) * 1000 : (s ~ /M$/ ? substr(s, 1, length(s) - 1) * 1e6 : s + 0) }
/^ [^ ].*  interval [0-9.]+ s/ { for (i = 1; i < NF; i++) if ($i == "interval") secs = $(i + 1) + 0; next }
$0 ~ "read 4KiB " dev "  " { screens++; in_g = screens >= 2 && screens <= 6; stages = 0; sum = 0; rate = 0
	for (i = 1; i <= NF; i++) { if ($i == "mean") mean = $(i + 1); if ($i ~ /\/s$/) rate = num(substr($i, 1, length($i) - 2)) }
	seen += rate * secs
	next }
in_g && /^  (host block|host driver|network|target driver|storage)/ {
	if ($(NF - 2) != "-") { sum += $(NF - 2); stages++ }
	if (/^  storage/) { in_g = 0
		if (stages != 5) { printf "screen %d: %d stages shown, not 5\n", screens, stages; bad_stages++ }
		if (sum - mean > 0.03 || mean - sum > 0.03) { printf "screen %d: stages sum to %.2f, e2e mean %.2f\n", screens, sum, mean; bad_stages++ }
		rates += rate; n_rates++
		printf "screen %d: stages %d sum %.2f e2e %.2f rate %.0f/s load %.0f IOPS\n", screens, stages, sum, mean, rate, iops } }
END { avg = n_rates ? rates / n_rates : 0
	if (seen < 0.9 * ios || seen > 1.1 * ios) bad_rate++
	printf "commands over all %d screens: %.0f, load generator I/Os: %d; mean rate of screens 2-6: %.0f/s, load %.0f IOPS\n", screens, seen, ios, avg, iops
	printf "screens=%d bad_stages=%d bad_rate=%d\n", n_rates, bad_stages, bad_rate }' "$TB_OUT/top.txt" > "$TB_OUT/check.txt"
cat "$TB_OUT/check.txt"
tb_figure top-batch $(tail -1 "$TB_OUT/check.txt") load_iops=$TB_LOAD_IOPS
tb_check top-batch-stages "$(tail -1 "$TB_OUT/check.txt" | sed 's/.*screens=\([0-9]*\) bad_stages=\([0-9]*\).*/\1 == 5 \&\& \2 == 0/')" \
	"$(grep '^screen' "$TB_OUT/check.txt" | head -5 | sed 's/ rate.*//' | tr '\n' ';')"
tb_check top-batch-rate "$(tail -1 "$TB_OUT/check.txt" | sed 's/.*screens=\([0-9]*\).*bad_rate=\([0-9]*\).*/\1 == 5 \&\& \2 == 0/')" \
	"$(grep '^commands over' "$TB_OUT/check.txt")"
