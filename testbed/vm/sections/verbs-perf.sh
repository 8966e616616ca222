#!/bin/bash
# verbs-perf: fabctl's verbs engine side by side with perftest on the same two rxe devices, the same
# sizes and counts: RDMA WRITE bandwidth (64 KiB x 2000) and SEND ping-pong latency (2 B x 10000),
# seven interleaved rounds, medians of the runs compared. Prints
#   perftest-ratio write_bw=<fabctl/perftest> send_lat=<fabctl median / perftest t_typical>
# and fails when write_bw < 0.95 or send_lat > 1.1. Both sides run through fabctl verbs (the fabctl
# engine, or --backend perftest running ib_write_bw / ib_send_lat with --out_json), so one parser
# reads both; the raw perftest output is in each run's log.
# fabtb-timeout: 1500
# fabtb-needs: fabctl-verbs
. "$FABTB_SHARE/sections/lib.sh"

V=$FABCTL_VERBS
R=$FABTB_RESULTS

# json_num FILE KEY: the first number stored under "KEY" in a JSON file.
json_num() { grep -o "\"$2\": *[-0-9.eE+]*" "$1" | head -1 | sed 's/.*: *//'; }

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) exit 1; print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

fab_rxe_pair fa fb 198.18.0.1 198.18.0.2 || fab_fail "rxe pair"
fab_gid_index rxe_fa 198.18.0.1 >/dev/null && fab_gid_index rxe_fb 198.18.0.2 >/dev/null || fab_fail "rxe GIDs"
SRV=("$V" verbs server --listen 198.18.0.1 --timeout 120s)
CLI=("$V" verbs client 198.18.0.1 --addr 198.18.0.2 --timeout 120s)

PSRV=("$V" verbs server --listen 198.18.0.1 --backend perftest --json)
PCLI=("$V" verbs client 198.18.0.1 --addr 198.18.0.2 --backend perftest --json)
# perftest sends nothing inline on devices it does not know (rxe): neither does fabctl here. Latency
# runs of 10000 ping-pongs (~0.5 s) keep a run's median stable through the short stalls an
# emulated, shared CPU has; seven interleaved rounds and the median of the runs absorb longer ones.
BW=(--op write -s 65536 -n 2000 --inline=-1)
LAT=(--mode lat --op send -s 2 -n 10000 --inline=-1)
: >"$FABTB_TMP/fbw" && : >"$FABTB_TMP/pbw" && : >"$FABTB_TMP/flat" && : >"$FABTB_TMP/plat"
for i in 1 2 3 4 5 6 7; do
	fab_pair -t 300 "${SRV[@]}" "${BW[@]}" -- "${CLI[@]}" --json "${BW[@]}" && json_num "$FABTB_TMP/client.out" gbps >>"$FABTB_TMP/fbw"
	cp "$FABTB_TMP/client.out" "$R/fabctl-write_bw-$i.json"
	fab_pair -t 300 "${PSRV[@]}" "${BW[@]}" -- "${PCLI[@]}" "${BW[@]}" && json_num "$FABTB_TMP/client.out" gbps >>"$FABTB_TMP/pbw"
	cp "$FABTB_TMP/client.out" "$R/perftest-write_bw-$i.out"
	fab_pair -t 300 "${SRV[@]}" "${LAT[@]}" -- "${CLI[@]}" --json "${LAT[@]}" && json_num "$FABTB_TMP/client.out" median_ns >>"$FABTB_TMP/flat"
	cp "$FABTB_TMP/client.out" "$R/fabctl-send_lat-$i.json"
	fab_pair -t 300 "${PSRV[@]}" "${LAT[@]}" -- "${PCLI[@]}" "${LAT[@]}" && json_num "$FABTB_TMP/client.out" median_ns >>"$FABTB_TMP/plat"
	cp "$FABTB_TMP/client.out" "$R/perftest-send_lat-$i.out"
done
for f in fbw pbw flat plat; do fab_log "$f runs: $(tr '\n' ' ' <"$FABTB_TMP/$f")"; done
for f in fbw pbw flat plat; do
	n=$(wc -l <"$FABTB_TMP/$f")
	fab_check "at least 5 of 7 $f runs produced a figure ($n)" test "$n" -ge 5
done
fbw=$(median <"$FABTB_TMP/fbw") && pbw=$(median <"$FABTB_TMP/pbw") && flat=$(median <"$FABTB_TMP/flat") &&
	plat=$(median <"$FABTB_TMP/plat") || fab_fail "a side of the comparison produced no figure"
ratio_bw=$(awk -v a="$fbw" -v b="$pbw" 'BEGIN { printf "%.3f", a / b }')
ratio_lat=$(awk -v a="$flat" -v b="$plat" 'BEGIN { printf "%.3f", a / b }')
fab_log "write bw medians: fabctl $fbw Gb/s, perftest $pbw Gb/s; send lat medians: fabctl $flat ns, perftest t_typical $plat ns"
echo "perftest-ratio write_bw=$ratio_bw send_lat=$ratio_lat"
# make e2e-vm repeats FABTB-FIGURE lines in its summary: the comparison shows there as one line.
echo "FABTB-FIGURE perftest-ratio write_bw=$ratio_bw send_lat=$ratio_lat"
echo "FABTB-FIGURE verbs write_bw_gbps=$fbw perftest_write_bw_gbps=$pbw send_lat_median_ns=$flat perftest_send_lat_typical_ns=$plat"
echo "perftest-ratio write_bw=$ratio_bw send_lat=$ratio_lat" >"$R/perftest-ratio.txt"
fab_check "fabctl write bandwidth >= 0.95 x ib_write_bw ($ratio_bw)" awk -v r="$ratio_bw" 'BEGIN { exit !(r >= 0.95) }'
fab_check "fabctl median send latency <= 1.1 x ib_send_lat t_typical ($ratio_lat)" awk -v r="$ratio_lat" 'BEGIN { exit !(r <= 1.1) }'
exit 0
