#!/bin/bash
# demo-repeat: the `demo` section 20 times in a row in one boot, each run on a freshly reset guest
# (the runner's reset between sections, done here between runs: rdma_cm configfs, rdma links, every
# interface but lo, the default ip rules), to show the CI suite does not fail on the demo now and then
# (a soft RDMA device's own retransmissions judged as fabric loss; another pair's or QP1's packets
# counted by the wire check). Prints `FABTB-FIGURE demo-repeat runs=N passed=P` and fails unless every
# run passed.
# fabtb-timeout: 7200
# fabtb-needs: fabctl-verbs
# fabtb-file: testbed/demo.sh
# fabtb-file: examples/vm-testbed
. "$FABTB_SHARE/sections/lib.sh"

runs=${FABTB_DEMO_RUNS:-20}
reset() {
	local d l
	for d in /sys/kernel/config/rdma_cm/*/; do [[ -d $d ]] && rmdir "$d"; done 2>/dev/null
	for l in $(rdma link show 2>/dev/null | awk '$1 == "link" { split($2, a, "/"); print a[1] }' | sort -u); do
		rdma link delete "$l" 2>/dev/null
	done
	for l in /sys/class/net/*; do
		[[ ${l##*/} == lo ]] || ip link delete "${l##*/}" 2>/dev/null
	done
	ip rule flush 2>/dev/null
	ip rule add pref 0 lookup local 2>/dev/null
	ip rule add pref 32766 lookup main 2>/dev/null
	ip rule add pref 32767 lookup default 2>/dev/null
}
pass=0
for ((i = 1; i <= runs; i++)); do
	reset
	res=$FABTB_RESULTS/run-$i
	tmp=$(mktemp -d "$FABTB_TMP/run-$i.XXXXXX")
	mkdir -p "$res"
	t0=$(fab_uptime)
	# Its own session, as the runner runs a section: whatever a failed run left is killed with it.
	(cd "$res" && FABTB_RESULTS=$res FABTB_TMP=$tmp exec setsid timeout -k 10 1200 bash "$FABTB_SHARE/sections/demo.sh") \
		>"$res.log" 2>&1 </dev/null &
	pid=$!
	wait "$pid"
	rc=$?
	kill -KILL -- "-$pid" 2>/dev/null
	if [[ $rc -eq 0 ]]; then
		pass=$((pass + 1))
		fab_log "demo run $i/$runs: pass ($(awk -v a="$t0" -v b="$(fab_uptime)" 'BEGIN { printf "%.0f", b - a }') s)"
	else
		fab_log "demo run $i/$runs: FAIL rc=$rc"
		tail -n 60 "$res.log"
	fi
done
echo "FABTB-FIGURE demo-repeat runs=$runs passed=$pass"
fab_check "the demo passed $pass of $runs runs in a row" test "$pass" -eq "$runs"
exit 0
