#!/bin/bash
# siw: soft-iWARP (built out of tree; Debian's kernel lacks it) between two devices over a veth pair:
# rping with data verification and ib_write_bw over rdma_cm (-R, which iWARP requires); both must cross
# the wire (lib.sh's source-address rules route siw's kernel TCP sockets out of the veth).
# fabtb-timeout: 600
. "$FABTB_SHARE/sections/lib.sh"

fab_siw_pair wa wb 198.18.1.1 198.18.1.2 || fab_fail "siw pair"
fab_run rdma link show
fab_run ibv_devinfo -d siw_wa
rx0=$(cat /sys/class/net/wa/statistics/rx_packets)

fab_pair rping -s -a 198.18.1.1 -C 100 -S 4096 -- \
	rping -c -a 198.18.1.1 -I 198.18.1.2 -C 100 -S 4096 -V || fab_fail "rping over siw"
rx1=$(cat /sys/class/net/wa/statistics/rx_packets)
fab_check "rping crossed the veth (wa received $((rx1 - rx0)) packets)" test $((rx1 - rx0)) -gt 100

fab_pair ib_write_bw -d siw_wa -R -D "$FABTB_DUR" --report_gbits -- \
	ib_write_bw -d siw_wb -R -D "$FABTB_DUR" --report_gbits 198.18.1.1 ||
	fab_fail "ib_write_bw -R over siw"
rx2=$(cat /sys/class/net/wa/statistics/rx_packets)
fab_check "ib_write_bw -R crossed the veth (wa received $((rx2 - rx1)) packets)" test $((rx2 - rx1)) -gt 1000
bw=$(fab_perf_value "$FABTB_TMP/client.out") || fab_fail "ib_write_bw -R reported no bandwidth"
fab_log "ib_write_bw -R siw: $bw Gb/s"
echo "FABTB-FIGURE siw write_bw_gbps=$bw"
exit 0
