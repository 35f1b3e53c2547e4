# record-biostart: the host's end to end starts at the bio's submission
# (bi_issue, docs/stage-model.md "What end to end spans"), so a command's wait
# for a tag is in it. The host connects with queue_size=16 (few tags) and the
# load generator runs 4 KiB random reads at QD64, well above them; then at QD1.
# Checks:
#   record-biostart-probe   `ntprof probe` says the bio's issue time is there
#   record-biostart-e2e     at QD64 ntprof's mean end to end is at most the load
#                           generator's (plus 1%): the bio's stamp is never before
#                           the load generator's submission. It is not close to
#                           it on the test bed: time before the bio stays outside
#                           (docs/stage-model.md, "What end to end spans")
#   record-biostart-wait    at QD64 the host block layer holds at least half of
#                           end to end (the tag wait)
#   record-biostart-qd1     at QD1 (no wait) the host block layer is under a
#                           quarter of end to end
#   record-biostart-sum     the stage means add up to the end to end mean (both)
# tb-timeout: 300
. /tb/ntprof-checks.sh
TB_CONNECT_OPTS=queue_size=16
tb_setup_tcp || { tb_result record-biostart FAIL "NVMe/TCP setup failed"; exit 0; }

bio=$(ntprof probe 2>&1 | grep -i 'bio issue time' | head -1)
tb_log "probe: $bio"
tb_check record-biostart-probe "$(echo "$bio" | grep -c ': yes') == 1" "probe: ${bio:-no bio issue time line}"

run_one() { # NAME ntp-load options...
	local name=$1 rc label recs e2e hb hd net td st p50 rh rt rm sum gap
	shift
	ntp_rec_start $name -r host -s 10 --offline -o $TB_OUT/$name.ntp -j $TB_OUT/$name.json ||
		{ tb_result $name FAIL "ntprof record did not start: $(tail -1 $TB_OUT/$name.err)"; return 1; }
	tb_load "$@" --secs 6
	ntp_rec_stop INT
	rc=$?
	tb_log "ntprof record exited $rc: $(tr '\n' ' ' < $TB_OUT/$name.err)"
	ntp_groups_read $name
	tb_figure $name records=$rh e2e_us=$e2e load_mean_us=$TB_LOAD_MEAN_US host_block_us=$hb sum_us=$sum
	R_E2E=$e2e R_HB=$hb R_SUM=$sum R_RH=$rh
}

run_one record-biostart-qd64 --rw randread --bs 4k --qd 64
tb_check record-biostart-e2e "$R_RH > 0 && $R_E2E <= 1.01 * $TB_LOAD_MEAN_US" \
	"QD64 over 16 tags: end to end $R_E2E us, load generator $TB_LOAD_MEAN_US us (bound 1.01 x)"
tb_check record-biostart-wait "$R_RH > 0 && $R_HB >= 0.5 * $R_E2E" \
	"QD64 over 16 tags: host block layer $R_HB us of end to end $R_E2E us (bound half)"
s64="$R_SUM/$R_E2E"
ok64=$(awk "BEGIN{print ($R_SUM - $R_E2E < 0.01 && $R_E2E - $R_SUM < 0.01) ? 1 : 0}")
run_one record-biostart-qd1 --rw randread --bs 4k --qd 1
tb_check record-biostart-qd1 "$R_RH > 0 && $R_HB < 0.25 * $R_E2E" \
	"QD1: host block layer $R_HB us of end to end $R_E2E us (bound a quarter)"
tb_check record-biostart-sum "$ok64 == 1 && $R_RH > 0 && ($R_SUM - $R_E2E) < 0.01 && ($R_E2E - $R_SUM) < 0.01" \
	"stage sums / end to end: QD64 $s64, QD1 $R_SUM/$R_E2E us"
