# make bench: ntprof report, dump and joins against cat, many files and groups
# against few, as ratios of one run (bench/report_bench.sh).
.PHONY: bench
bench: $(O)/ntprof $(O)/rel/ntprof
	$(Q)NTPROF=$(O)/ntprof bench/report_bench.sh
