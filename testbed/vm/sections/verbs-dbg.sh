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
st() { rdma statistic show link rxe_fb/1 | tr ' ' '\n' | paste - - | grep -E 'retry|dup|seq|rnr|err' | tr '\n' ' '; echo; }
st
fab_pair -t 300 ib_write_bw -d rxe_fa -x 1 -t 512 -n 100 -- ib_write_bw -d rxe_fb -x 1 -t 512 -n 100 198.18.0.1; echo "perftest t512 rc=$?"; st
fab_pair -t 300 ib_write_bw -d rxe_fa -x 1 -t 512 -n 100 --use_old_post_send -- ib_write_bw -d rxe_fb -x 1 -t 512 -n 100 --use_old_post_send 198.18.0.1; echo "perftest t512 old post rc=$?"; st
fab_pair -t 300 "${SRV[@]}" -- "${CLI[@]}" --op write -t 512 -n 100 -u 20; echo "fabctl t512 u20 rc=$?"; st
fab_pair -t 300 "${SRV[@]}" -- "${CLI[@]}" --op write -t 256 -n 100; echo "fabctl t256 rc=$?"; st
fab_pair -t 300 "${SRV[@]}" -- "${CLI[@]}" --op write -t 512 -n 100 -s 4096; echo "fabctl t512 4k rc=$?"; st
fab_pair -t 300 "${SRV[@]}" -- "${CLI[@]}" --op write -t 512 -n 100 -Q 1; echo "fabctl t512 Q1 rc=$?"; st
dmesg | grep -i rxe | tail -20
exit 0
