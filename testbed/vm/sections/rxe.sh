#!/bin/bash
# rxe: Soft-RoCE between two devices over a veth pair (policy routing makes the traffic cross the wire):
# ib_write_bw and ib_send_lat with perftest, then the DSCP proof: ib_write_bw --tclass=104 is counted by
# tc flower on the client veth as ToS 0x68 (DSCP 26), every RoCEv2 packet carries it, and a counter for
# a wrong ToS (0x6a, DSCP 26 + ECT(0)) stays 0; a control run with --tclass=106 moves only that one.
# fabtb-timeout: 600
. "$FABTB_SHARE/sections/lib.sh"

fab_rxe_pair fa fb 198.18.0.1 198.18.0.2 || fab_fail "rxe pair"
ga=$(fab_gid_index rxe_fa 198.18.0.1) || fab_fail "GID of rxe_fa"
gb=$(fab_gid_index rxe_fb 198.18.0.2) || fab_fail "GID of rxe_fb"
fab_log "GID index rxe_fa=$ga rxe_fb=$gb"
fab_run rdma link show
rx0=$(cat /sys/class/net/fa/statistics/rx_packets)

fab_pair ib_write_bw -d rxe_fa -x "$ga" -D "$FABTB_DUR" --report_gbits -- \
	ib_write_bw -d rxe_fb -x "$gb" -D "$FABTB_DUR" --report_gbits 198.18.0.1 || fab_fail "ib_write_bw over rxe"
bw=$(fab_perf_value "$FABTB_TMP/client.out") || fab_fail "ib_write_bw reported no bandwidth"
fab_log "ib_write_bw rxe: $bw Gb/s"
rx1=$(cat /sys/class/net/fa/statistics/rx_packets)
fab_check "the traffic crossed the veth (fa received $((rx1 - rx0)) packets)" test $((rx1 - rx0)) -gt 1000

fab_pair ib_send_lat -d rxe_fa -x "$ga" -n 1000 -- \
	ib_send_lat -d rxe_fb -x "$gb" -n 1000 198.18.0.1 || fab_fail "ib_send_lat over rxe"
lat=$(fab_perf_value "$FABTB_TMP/client.out") || fab_fail "ib_send_lat reported no latency"
fab_log "ib_send_lat rxe: t_typical $lat usec"

# DSCP on the wire.
fab_tos_counters fb 0x68 0x6a || fab_fail "tc flower counters on fb"
fab_pair ib_write_bw -d rxe_fa -x "$ga" -D 2 --tclass=104 --report_gbits -- \
	ib_write_bw -d rxe_fb -x "$gb" -D 2 --tclass=104 --report_gbits 198.18.0.1 || fab_fail "ib_write_bw --tclass=104"
fab_run tc -s filter show dev fb egress
n68=$(fab_tos_count fb 0x68) && n6a=$(fab_tos_count fb 0x6a) && nany=$(fab_tos_count fb any) || fab_fail "reading the counters"
fab_log "RoCEv2 packets leaving fb: ToS 0x68 $n68, ToS 0x6a $n6a, any ToS $nany"
fab_check "ToS 0x68 packets counted ($n68)" test "$n68" -gt 1000
fab_check "every RoCEv2 packet carried ToS 0x68 ($n68 of $nany)" test "$n68" -eq "$nany"
fab_check "the wrong-ToS counter (0x6a) stayed 0 ($n6a)" test "$n6a" -eq 0

# Control: the same counters do see another class (ToS 0x6a = DSCP 26 + ECT(0)), so the checks above
# can fail when the marking is wrong.
fab_pair ib_write_bw -d rxe_fa -x "$ga" -D 2 --tclass=106 --report_gbits -- \
	ib_write_bw -d rxe_fb -x "$gb" -D 2 --tclass=106 --report_gbits 198.18.0.1 || fab_fail "ib_write_bw --tclass=106"
m68=$(fab_tos_count fb 0x68) && m6a=$(fab_tos_count fb 0x6a) || fab_fail "reading the counters"
fab_log "after --tclass=106: ToS 0x68 $m68, ToS 0x6a $m6a"
fab_check "a --tclass=106 run is counted as ToS 0x6a ($m6a)" test "$m6a" -gt 1000
fab_check "and not as ToS 0x68 ($m68 = $n68 before)" test "$m68" -eq "$n68"

fab_run rdma statistic show link rxe_fb/1
echo "FABTB-FIGURE rxe write_bw_gbps=$bw send_lat_typical_us=$lat tos68_packets=$n68"
exit 0
