# runner-stall: the test bed's own check of the host's watchdog: this scenario
# ignores the guest's timeout (SIGTERM) and never ends, as a guest whose CPU
# spins without a soft lockup message would. The host must stop the guest
# NTP_VM_WATCH_SLACK seconds after this file's tb-timeout and go on
# (tests/vm/runner-check.sh runs it; not in the default set).
# tb-default: no
# tb-timeout: 5
trap '' TERM
tb_result runner-stall-begun PASS "the scenario ignores SIGTERM from now on"
while :; do sleep 1; done
