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
# metric VALUE-UNIT: the value before the unit on each benchmark line, median over the runs.
metric() {
	awk -v u="$1" '/^BenchmarkFabdcbHostIntent8NICs/ { for (i = 2; i <= NF; i++) if ($i == u) print $(i - 1) }' "$out" |
		sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }'
}
fab=$(metric fabctl-ms/apply) script=$(metric script-ms/apply) ratio=$(metric x-faster)
[[ -n $fab && -n $script && -n $ratio ]] || fab_fail "no figures in the benchmark output"
runs=$(awk '/^BenchmarkFabdcbHostIntent8NICs/ { for (i = 2; i <= NF; i++) if ($i == "x-faster") printf "%s%sx", sep, $(i - 1); sep = ", " }' "$out")
echo "FIGURES 8 NICs, full host intent (MTU, ETS, PFC, 64 DSCP APP entries, pause, IRQ affinity), $n interleaved applies per run, median of 3 runs: fabctl netlink $fab ms/apply, ip/dcb/ethtool script $script ms/apply, fabctl ${ratio}x faster (runs: $runs; target >= 20x)" |
	tee "$FABTB_RESULTS/figures.txt"
exit 0
