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
# cma_configfs.c). As set up above (IP MTU 1500, then ToS 104) the written spec is what runs, and lint
# shows its findings: MTU-3 (1500 cannot carry a 4096-byte RDMA MTU) and ECN-4 (ToS 104 has no ECT
# under DCQCN). Set up as NVIDIA's default_roce_tos howto does (ToS 106 = DSCP 26 | ECT(0)) with a
# jumbo MTU, the import plans empty, and the MTU changed plans exactly the NIC's MTU.
rdmacm_by_hand() {
	local mounted=0
	mountpoint -q /sys/kernel/config || { mount -t configfs configfs /sys/kernel/config && mounted=1; }
	mkdir -p /sys/kernel/config/rdma_cm/rxe_fa || return 1
	echo "RoCE v2" >/sys/kernel/config/rdma_cm/rxe_fa/ports/1/default_roce_mode || return 1
	echo "$1" >/sys/kernel/config/rdma_cm/rxe_fa/ports/1/default_roce_tos || return 1
	rmdir /sys/kernel/config/rdma_cm/rxe_fa
	[ "$mounted" = 1 ] && umount /sys/kernel/config
	return 0
}
import_rxe() {
	local out=$1
	mkdir -p "$imp/inventory" "$out"
	cat >"$imp/inventory/inventory.fab.hcl" <<-INV
	fabric "vmrxe" {
	  transport = "rocev2"
	}
	host "vm" {
	  connect = "local"
	  nic "fa" {
	    device = "rxe_fa"
	    # A veth has no DCB and rxe no DCQCN: the classes' NIC side cannot be in effect here.
	    accept_not_in_effect = { "*" = "rxe over a veth: no DCB in the kernel driver, no DCQCN" }
	  }
	}
	INV
	(cd "$FABTB_TMP" && "$FABCTL" import --no-color -o "$out/fabric.fab.hcl" "$imp/inventory" 2>"$out/import.err")
	local rc=$?
	cat "$out/import.err" "$out/fabric.fab.hcl"
	return $rc
}
imp=$FABTB_TMP/import
rdmacm_by_hand 104 || fab_fail "rdma_cm configfs by hand (ToS 104)"
import_rxe "$imp/as-run"
rc=$?
fab_check "fabctl import of the rxe host exits 0 (rc=$rc)" test "$rc" -eq 0
fab_check "import wrote rdma_tos = 104 and mtu = 1500, as the host runs" \
	sh -c "grep -Eq 'rdma_tos *= *104' '$imp/as-run/fabric.fab.hcl' && grep -Eq 'mtu *= *1500' '$imp/as-run/fabric.fab.hcl'"
"$FABCTL" validate --static --no-color "$imp/as-run" >"$imp/lint.out" 2>&1
cat "$imp/lint.out"
fab_check "lint shows what runs as the findings it is (MTU-3, ECN-4)" sh -c "grep -q MTU-3 '$imp/lint.out' && grep -q ECN-4 '$imp/lint.out'"

ip link set fa mtu 9000 && ip link set fb mtu 9000 || fab_fail "ip link set mtu 9000 by hand"
rdmacm_by_hand 106 || fab_fail "rdma_cm configfs by hand (ToS 106)"
import_rxe "$imp/fixed"
rc=$?
fab_check "fabctl import exits 0 (rc=$rc)" test "$rc" -eq 0
fab_check "import wrote rdma_tos = 106 and mtu = 9000" \
	sh -c "grep -Eq 'rdma_tos *= *106' '$imp/fixed/fabric.fab.hcl' && grep -Eq 'mtu *= *9000' '$imp/fixed/fabric.fab.hcl'"
fab_run "$FABCTL" plan --no-color --detailed-exitcode "$imp/fixed"
rc=$?
fab_check "plan of the imported rxe host has no changes (--detailed-exitcode rc=$rc)" test "$rc" -eq 0
sed -i -E 's/mtu( *)= *9000/mtu\1= 4200/' "$imp/fixed/fabric.fab.hcl"
"$FABCTL" plan --no-color "$imp/fixed" >"$imp/plan2.out" 2>&1
cat "$imp/plan2.out"
fab_check "the MTU changed plans the NIC's MTU" grep -q "nic/fa/mtu" "$imp/plan2.out"
fab_check "and nothing else" grep -q "Plan: 0 to add, 1 to change, 0 to remove" "$imp/plan2.out"
ip link set fa mtu 1500 && ip link set fb mtu 1500

echo "FABTB-FIGURE rxe write_bw_gbps=$bw send_lat_typical_us=$lat tos68_packets=$n68"
exit 0
