# make bench: ntprof report over 1 M and 10 M synthetic records (bench/report_bench.sh).
.PHONY: bench
bench: $(O)/ntprof
	$(Q)NTPROF=$(O)/ntprof bench/report_bench.sh
