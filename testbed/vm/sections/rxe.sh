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

# fabctl import of this soft-RoCE host as an operator set it up by hand (docs/import.md): rdma_cm's
# defaults through configfs (the kernel's Documentation/ABI/testing/configfs-rdma_cm: mkdir
# rdma_cm/<ibdev>, ports/1/default_roce_mode, ports/1/default_roce_tos; drivers/infiniband/core/
# cma_configfs.c), ToS 104 (DSCP 26) on RoCE v2. import writes rdma_tos, the MTU and the address;
# the plan is empty; rdma_tos changed to 106 plans exactly the NIC's ToS.
mounted=0
mountpoint -q /sys/kernel/config || { mount -t configfs configfs /sys/kernel/config && mounted=1; }
mkdir -p /sys/kernel/config/rdma_cm/rxe_fa || fab_fail "mkdir rdma_cm/rxe_fa"
echo "RoCE v2" >/sys/kernel/config/rdma_cm/rxe_fa/ports/1/default_roce_mode || fab_fail "default_roce_mode by hand"
echo 104 >/sys/kernel/config/rdma_cm/rxe_fa/ports/1/default_roce_tos || fab_fail "default_roce_tos by hand"
rmdir /sys/kernel/config/rdma_cm/rxe_fa
[ "$mounted" = 1 ] && umount /sys/kernel/config
imp=$FABTB_TMP/import
mkdir -p "$imp/inventory" "$imp/out"
cat >"$imp/inventory/inventory.fab.hcl" <<-INV
fabric "vmrxe" {
  transport = "rocev2"
}
host "vm" {
  connect = "local"
  nic "fa" {
    device = "rxe_fa"
  }
}
INV
cd "$FABTB_TMP" || fab_fail "cd"
"$FABCTL" import --no-color -o "$imp/out/fabric.fab.hcl" "$imp/inventory" 2>"$imp/import.err"
rc=$?
cat "$imp/import.err" "$imp/out/fabric.fab.hcl"
fab_check "fabctl import of the rxe host exits 0 (rc=$rc)" test "$rc" -eq 0
fab_check "import wrote rdma_tos = 104" grep -Eq 'rdma_tos *= *104' "$imp/out/fabric.fab.hcl"
fab_run "$FABCTL" plan --no-color --detailed-exitcode "$imp/out"
rc=$?
fab_check "plan of the imported rxe host has no changes (--detailed-exitcode rc=$rc)" test "$rc" -eq 0
sed -i -E 's/rdma_tos( *)= *104/rdma_tos\1= 106/' "$imp/out/fabric.fab.hcl"
"$FABCTL" plan --no-color "$imp/out" >"$imp/plan2.out" 2>&1
cat "$imp/plan2.out"
fab_check "rdma_tos changed plans the NIC's ToS" grep -q "nic/fa/tos" "$imp/plan2.out"
fab_check "and nothing else" grep -q "Plan: 0 to add, 1 to change, 0 to remove" "$imp/plan2.out"

echo "FABTB-FIGURE rxe write_bw_gbps=$bw send_lat_typical_us=$lat tos68_packets=$n68"
exit 0
