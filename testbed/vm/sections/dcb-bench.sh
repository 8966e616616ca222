#!/bin/bash
# dcb-bench: the host benchmark of issue 6. The full host intent (MTU, DCB ETS/PFC/APP with 64 DSCP
# entries, global pause, IRQ affinity) applied to 8 fabdcb NICs by fabctl's netlink path and by the
# equivalent ip/dcb/ethtool script, side by side in one run (BenchmarkFabdcbHostIntent8NICs in
# drivers/host fabdcb_bench_test.go; every iteration flips between two intents that differ in every
# setting). Prints both figures and the ratio (target: fabctl >= 20x faster). The figures are TCG
# (software-emulated CPU) figures: both paths pay the emulation, process creation most of all.
# fabtb-timeout: 1800
# fabtb-gotest: ./drivers/host
# fabtb-file: drivers/host/testdata/vm
. "$FABTB_SHARE/sections/lib.sh"

fab_run modprobe fabdcb count=1 || fab_fail "modprobe fabdcb"
export FABCTL_FABDCB=fabdcb0
n=${FABTB_BENCH_N:-5}
out=$FABTB_RESULTS/bench.txt
(cd "$FABTB_FILES/drivers/host" && "$FABTB_BIN/host.test" -test.run '^$' -test.bench 'BenchmarkFabdcbHostIntent8NICs' \
	-test.benchtime "${n}x" -test.count 3) >"$out" 2>&1
rc=$?
cat "$out"
[[ $rc -eq 0 ]] || fab_fail "benchmark (rc=$rc)"
fab_netlink=$(awk '/fabctl-netlink/ && /ns\/op/ { print $3 }' "$out" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
script=$(awk '/ip-dcb-ethtool-script/ && /ns\/op/ { print $3 }' "$out" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
[[ -n $fab_netlink && -n $script ]] || fab_fail "no figures in the benchmark output"
awk -v f="$fab_netlink" -v s="$script" 'BEGIN {
	printf "FIGURES 8 NICs, full host intent, median of 3 runs: fabctl netlink %.1f ms/apply, ip/dcb/ethtool script %.1f ms/apply, ratio %.1fx (target >= 20x)\n", f / 1e6, s / 1e6, s / f
}' | tee "$FABTB_RESULTS/figures.txt"
exit 0
