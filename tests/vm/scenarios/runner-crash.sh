# runner-crash: the test bed's own check of tests/vm/run.sh: the guest's kernel
# panics in the middle of this scenario (sysrq c), as a guest that locks up
# does under softlockup_panic=1. The runner must start a new guest for this
# scenario and those after it, fail this one after its second guest stops too,
# and still run the rest (tests/vm/runner-check.sh runs it; not in the default set).
# tb-default: no
# tb-timeout: 60
tb_result runner-crash-begun PASS "the scenario ran up to the crash"
sync
echo 1 > /proc/sys/kernel/sysrq
echo c > /proc/sysrq-trigger
sleep 30
tb_result runner-crash FAIL "the kernel did not panic"
