#!/bin/bash
# verbs-dbg: temporary diagnostics for the deep-queue write failure (to be removed)
# fabtb-timeout: 1500
# fabtb-needs: fabctl-verbs
. "$FABTB_SHARE/sections/lib.sh"
V=$FABCTL_VERBS
fab_rxe_pair fa fb 198.18.0.1 198.18.0.2 || fab_fail "rxe pair"
fab_gid_index rxe_fa 198.18.0.1 >/dev/null && fab_gid_index rxe_fb 198.18.0.2 >/dev/null || fab_fail "rxe GIDs"
SRV=("$V" verbs server --listen 198.18.0.1 --timeout 120s)
CLI=("$V" verbs client 198.18.0.1 --addr 198.18.0.2 --timeout 120s)
st() { rdma statistic show link rxe_fb/1 | tr ' ' '\n' | paste - - | grep -E 'retry|dup|seq' | tr '\n' ' '; echo; }
once() { timeout 200 "${SRV[@]}" >/tmp/s.out 2>&1 & sleep 2; timeout 200 "${CLI[@]}" "$@" >/tmp/c.out 2>&1; local rc=$?; sleep 1; kill %1 2>/dev/null; wait; echo "RESULT $* rc=$rc $(grep -h -m1 -E '✔ write|Error' /tmp/c.out | cut -c1-160)"; st; sleep 1; }
ponce() { timeout 200 ib_write_bw -d rxe_fa -x 1 "$@" >/tmp/s.out 2>&1 & sleep 2; timeout 200 ib_write_bw -d rxe_fb -x 1 "$@" 198.18.0.1 >/tmp/c.out 2>&1; local rc=$?; wait; echo "RESULT perftest $* rc=$rc $(grep -A1 'BW average' /tmp/c.out | tail -1)"; st; sleep 2; }
st
for i in 1 2; do
once --op write -q 4 -n 250
ponce -q 4 -n 250
once --op write -q 4 -n 250 -u 20
once --op write -q 1 -n 250 -t 512
ponce -q 1 -n 250 -t 512
done
dmesg | grep -i rxe | tail -20
exit 0
