# tcp-delay: known delays show up in the load generator's latency.
#  tcp-nullblk-delay: null_blk completing each I/O after 1 ms (irqmode=2
#    completion_nsec=1000000): the mean QD1 read latency must be >= 1 ms.
#  tcp-netem: netem delay 2 ms on lo: the command capsule and the response
#    each cross lo once, so the mean QD1 read latency must be >= 4 ms.
# tb-timeout: 150
slow=$(tb_nullblk tbslow 1000000) || { tb_result tcp-nullblk-delay FAIL "null_blk with completion_nsec failed"; exit 0; }
if tb_setup_tcp "$slow"; then
	tb_load --rw randread --bs 4k --qd 1
	tb_figure tcp-nullblk-delay-1ms $TB_LOAD_LINE
	tb_check tcp-nullblk-delay "$TB_LOAD_ERRORS == 0 && $TB_LOAD_IOS >= 50 && $TB_LOAD_MEAN_US >= 1000 && $TB_LOAD_P50_US >= 1000" \
		"null_blk 1 ms: mean $TB_LOAD_MEAN_US us p50 $TB_LOAD_P50_US us ($TB_LOAD_IOS I/Os)"
else
	tb_result tcp-nullblk-delay FAIL "NVMe/TCP setup on slow null_blk failed"
fi
tb_teardown
tb_setup_tcp || { tb_result tcp-netem FAIL "NVMe/TCP setup failed"; exit 0; }
tb_netem 2ms || { tb_result tcp-netem FAIL "tc qdisc netem on lo failed"; exit 0; }
tb_load --rw randread --bs 4k --qd 1
tb_figure tcp-netem-2ms $TB_LOAD_LINE
tb_check tcp-netem "$TB_LOAD_ERRORS == 0 && $TB_LOAD_IOS >= 50 && $TB_LOAD_MEAN_US >= 4000 && $TB_LOAD_P50_US >= 4000" \
	"netem 2 ms on lo: mean $TB_LOAD_MEAN_US us p50 $TB_LOAD_P50_US us ($TB_LOAD_IOS I/Os)"
