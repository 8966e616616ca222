#!/bin/bash
# rocev1: the RDMA VLAN interface of a RoCEv1 NIC, set up by fabctl, proven on the wire.
#  - the host driver's VLAN tests (drivers/host vlan_test.go) on the guest kernel, which has 8021q (the
#    build machine's kernel may not): VLAN + egress-qos-map created from nothing, read back by
#    iproute2, re-plan clean, a map changed behind fabctl's back is a change and drift, id change,
#    name conflicts, rollback;
#  - the wire: an rxe pair fa/fb with VLAN 100 on each end (fa.100 198.18.2.1, fb.100 198.18.2.2) and
#    the policy-routing trick on the VLAN interfaces; ib_write_bw runs on the GIDs of the VLAN netdevs.
#    rxe sends every packet with skb priority 0 (one kernel socket per QP; the SL is ignored), where a
#    RoCE NIC takes the priority from the QP's SL: a tc skbedit on the VLAN interfaces' egress gives
#    RoCE packets the class's priority (3) instead. The step under test is the next one, which fabctl
#    owns: the egress-qos-map turning priority 3 into PCP 3. Counted by tc flower on the parent veth:
#    before fabctl every RoCE packet leaves with PCP 0; after `fabctl apply` every one with PCP 3 and
#    the PCP-0 counter stays put; a map changed behind fabctl's back (3:5) is reported by `fabctl
#    drift` and seen on the wire as PCP 5; the next apply repairs it.
#  rxe implements RoCE v2 only (its GID table has no "IB/RoCE v1" entries): the GIDs used are RoCE v2
#  GIDs on the VLAN netdevs; the PCP path (priority -> egress-qos-map -> 802.1Q tag) is the same.
# fabtb-timeout: 900
# fabtb-gotest: ./drivers/host
. "$FABTB_SHARE/sections/lib.sh"

modprobe 8021q || fab_fail "modprobe 8021q"
fab_run "$FABTB_BIN/host.test" -test.v -test.count=1 -test.run 'TestVLAN|TestQoSMapForms' ||
	fab_fail "host driver VLAN tests"

fab_rxe_pair fa fb 198.18.0.1 198.18.0.2 || fab_fail "rxe pair"

# VLAN 100 as an administrator made it, without an egress map: fabctl adds only the map.
for e in a b; do
	ip link add link "f$e" name "f$e.100" type vlan id 100 || fab_fail "vlan on f$e"
done
ip addr add 198.18.2.1/24 dev fa.100 && ip addr add 198.18.2.2/24 dev fb.100 || fab_fail "vlan addresses"
ip link set fa.100 up && ip link set fb.100 up || fab_fail "vlan up"
for i in fa.100 fb.100; do # sysctl(8) would read the dot in the name as a separator
	echo 1 >"/proc/sys/net/ipv4/conf/$i/accept_local" && echo 0 >"/proc/sys/net/ipv4/conf/$i/rp_filter" ||
		fab_fail "accept_local/rp_filter on $i"
done
# The policy-routing trick of fab_veth_pair, on the VLAN interfaces (tables and prefs it does not use).
ip route add 198.18.2.2 dev fa.100 src 198.18.2.1 table 121 &&
	ip route add 198.18.2.1 dev fb.100 src 198.18.2.2 table 122 &&
	ip rule add pref 20 oif fa.100 lookup 121 &&
	ip rule add pref 21 oif fb.100 lookup 122 &&
	ip rule add pref 60 to 198.18.2.2 iif lo lookup 121 &&
	ip rule add pref 61 to 198.18.2.1 iif lo lookup 122 || fab_fail "policy routing on the VLAN interfaces"

ga=$(fab_gid_index rxe_fa 198.18.2.1) || fab_fail "GID of 198.18.2.1 on rxe_fa"
gb=$(fab_gid_index rxe_fb 198.18.2.2) || fab_fail "GID of 198.18.2.2 on rxe_fb"
nda=$(cat "/sys/class/infiniband/rxe_fa/ports/1/gid_attrs/ndevs/$ga") ndb=$(cat "/sys/class/infiniband/rxe_fb/ports/1/gid_attrs/ndevs/$gb")
fab_log "GID index rxe_fa=$ga ($nda, $(cat "/sys/class/infiniband/rxe_fa/ports/1/gid_attrs/types/$ga")) rxe_fb=$gb ($ndb)"
fab_check "the GIDs belong to the VLAN netdevs ($nda, $ndb)" test "$nda" = fa.100 -a "$ndb" = fb.100
types=$(cat /sys/class/infiniband/rxe_fb/ports/1/gid_attrs/types/* 2>/dev/null | sort | uniq -c | tr -s ' \n' ' ')
fab_log "rxe_fb GID types: $types"

# The class's priority for RoCE packets (the NIC's SL in hardware), then fabctl's map makes the PCP.
for i in fa.100 fb.100; do
	tc qdisc add dev "$i" clsact &&
		tc filter add dev "$i" egress pref 1 protocol ip flower ip_proto udp dst_port 4791 action skbedit priority 3 ||
		fab_fail "skbedit on $i"
done
# RoCE packets leaving the parent veth fb, by the PCP of their VLAN 100 tag (pref PCP+1), and all of them (pref 1000).
tc qdisc add dev fb clsact || fab_fail "clsact on fb"
for p in 0 3 5; do
	tc filter add dev fb egress pref $((p + 1)) protocol 802.1Q flower vlan_id 100 vlan_prio "$p" \
		vlan_ethtype ipv4 ip_proto udp dst_port 4791 action continue || fab_fail "PCP $p counter"
done
tc filter add dev fb egress pref 1000 protocol 802.1Q flower vlan_id 100 vlan_ethtype ipv4 ip_proto udp dst_port 4791 \
	action pass || fab_fail "any-PCP counter"
pcp() {
	local pref=1000 n
	[[ $1 == any ]] || pref=$(($1 + 1))
	n=$(tc -s filter show dev fb egress pref "$pref" | awk '$1 == "Sent" { print $4; exit }')
	[[ -n $n ]] || fab_fail "no PCP counter $1 on fb"
	echo "$n"
}
declare -A seen
snap() { for k in 0 3 5 any; do seen[$k]=$(pcp "$k"); done; }
delta() { echo $(($(pcp "$1") - ${seen[$1]})); }
traffic() {
	fab_pair ib_write_bw -d rxe_fa -x "$ga" --sl=3 -D 2 --report_gbits -- \
		ib_write_bw -d rxe_fb -x "$gb" --sl=3 -D 2 --report_gbits 198.18.2.1 || fab_fail "ib_write_bw on VLAN 100 ($1)"
}

# 1. Before fabctl: no egress map, priority 3 leaves as PCP 0.
snap
rx0=$(cat /sys/class/net/fa.100/statistics/rx_packets)
traffic "before fabctl"
rx1=$(cat /sys/class/net/fa.100/statistics/rx_packets)
fab_check "the traffic crossed VLAN 100 (fa.100 received $((rx1 - rx0)) packets)" test $((rx1 - rx0)) -gt 1000
b0=$(delta 0) b3=$(delta 3) bany=$(delta any)
fab_log "before fabctl: RoCE packets leaving fb on VLAN 100: PCP 0 $b0, PCP 3 $b3, any $bany"
fab_check "RoCE packets counted on VLAN 100 ($bany)" test "$bany" -gt 1000
fab_check "without an egress map they carry PCP 0 ($b0 of $bany), none PCP 3 ($b3)" test "$b0" -eq "$bany" -a "$b3" -eq 0

# 2. fabctl sets the egress-qos-map from the classes (priority 3 -> PCP 3) and from what rdma_cm
#    picks for the host's ToS (rdma_tos 8: rt_tos2priority gives skb priority 2 -> PCP 3), and
#    nothing else.
spec=$FABTB_TMP/spec
mkdir -p "$spec"
cat >"$spec/fabric.fab.hcl" <<'HCL'
fabric "vmrocev1" {
  transport          = "rocev1"
  trust              = "pcp"
  congestion_control = "pfc-only"
  mtu                = 1500
  rdma_mtu           = 1024
  rdma_tos           = 8
}
class "roce" {
  role      = "rdma"
  priority  = 3
  lossless  = true
  bandwidth = 50
}
class "default" {
  role      = "other"
  priority  = 0
  default   = true
  bandwidth = 50
}
host "vm" {
  connect = "local"
  nic "fa" {
    accept_not_in_effect = {
      "*" = "VM testbed: soft-RoCE and soft-iWARP on a veth have no DCB, DCQCN or buffer settings; what this spec proves is the RDMA path, its marking and the traffic test"
    }
    vlan      = 100
    addresses = ["198.18.2.1/24"]
  }
  nic "fb" {
    accept_not_in_effect = {
      "*" = "VM testbed: soft-RoCE and soft-iWARP on a veth have no DCB, DCQCN or buffer settings; what this spec proves is the RDMA path, its marking and the traffic test"
    }
    vlan      = 100
    addresses = ["198.18.2.2/24"]
  }
}
HCL
cd "$FABTB_TMP" || fab_fail "cd"
fab_run "$FABCTL" plan --no-color --show-payload --detailed-exitcode "$spec" >"$FABTB_TMP/plan.txt"
rc=$?
cat "$FABTB_TMP/plan.txt"
fab_check "the plan has changes (rc=$rc)" test "$rc" -eq 2
fab_check "the plan sets the egress-qos-map 2:3 3:3 on fb.100" grep -q "ip link set dev fb.100 type vlan egress-qos-map 2:3 3:3" "$FABTB_TMP/plan.txt"
fab_check "and creates, re-addresses or re-sizes nothing" bash -c "! grep -Eq 'ip (link add|addr (add|del)|link set dev [^ ]+ mtu)' '$FABTB_TMP/plan.txt'"
fab_run "$FABCTL" apply --auto-approve --no-color "$spec" || fab_fail "fabctl apply"
for i in fa.100 fb.100; do
	m=$(ip -d link show dev "$i" | grep -o 'egress-qos-map { [^}]*}')
	fab_check "ip -d link show $i: $m" test "$m" = "egress-qos-map { 2:3 3:3 }"
done
fab_run "$FABCTL" plan --no-color --detailed-exitcode "$spec"
rc=$?
fab_check "re-plan after apply has no changes (rc=$rc)" test "$rc" -eq 0

snap
traffic "after fabctl"
a0=$(delta 0) a3=$(delta 3) aany=$(delta any)
fab_log "after fabctl apply: RoCE packets leaving fb on VLAN 100: PCP 3 $a3, PCP 0 $a0, any $aany"
fab_check "PCP 3 on the wire ($a3)" test "$a3" -gt 1000
fab_check "every RoCE packet carried PCP 3 ($a3 of $aany)" test "$a3" -eq "$aany"
fab_check "the wrong-priority counter (PCP 0) stayed put ($a0)" test "$a0" -eq 0

# 3. Behind fabctl's back: priority 3 -> PCP 5. drift sees it, the wire shows it, apply repairs it.
fab_run ip link set dev fb.100 type vlan egress-qos-map 3:5 || fab_fail "ip link set egress-qos-map 3:5"
fab_run "$FABCTL" drift --no-color "$spec" >"$FABTB_TMP/drift.txt"
rc=$?
cat "$FABTB_TMP/drift.txt"
fab_check "fabctl drift reports it (rc=$rc)" test "$rc" -eq 2
fab_check "as the egress map of fb" grep -q "nic/fb/vlan/egress_qos_map" "$FABTB_TMP/drift.txt"
snap
traffic "drifted"
d3=$(delta 3) d5=$(delta 5) dany=$(delta any)
fab_log "drifted map 3:5: PCP 5 $d5, PCP 3 $d3, any $dany"
fab_check "the drifted map shows on the wire as PCP 5 ($d5 of $dany)" test "$d5" -gt 0 -a "$d5" -eq "$dany" -a "$d3" -eq 0
fab_run "$FABCTL" apply --auto-approve --no-color "$spec" || fab_fail "fabctl apply (repair)"
m=$(ip -d link show dev fb.100 | grep -o 'egress-qos-map { [^}]*}')
fab_check "repaired: $m" test "$m" = "egress-qos-map { 2:3 3:3 }"
fab_run "$FABCTL" drift --no-color "$spec" >/dev/null
rc=$?
fab_check "no drift after the repair (rc=$rc)" test "$rc" -eq 0

echo "FABTB-FIGURE rocev1 pcp0_before=$b0 pcp3_after=$a3 pcp0_after=$a0 pcp5_drifted=$d5 roce_packets=$aany"
exit 0
