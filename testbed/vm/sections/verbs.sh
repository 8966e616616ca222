#!/bin/bash
# verbs: fabctl's own verbs traffic test on a real kernel RDMA stack.
#  1. RC WRITE/SEND/READ bandwidth and latency between two rxe devices (out-of-band QP exchange) and
#     between two siw devices (rdma_cm, as iWARP requires), each crossing its veth;
#  2. the class's DSCP on the wire: fabctl's --tclass 106 counted by tc flower on the sending veth as
#     ToS 0x6a on every RoCEv2 packet; the wire-counter Go test (validate/traffic) on this kernel;
#  3. injected faults caught and explained: MTU mismatch, wrong GID type / family, peer not reachable
#     (no control channel; RoCE blackholed);
#  4. fabctl apply + fabctl validate on a spec of the two rxe "hosts": static, read-back and traffic
#     stages pass (exit 0); a switch-style DSCP remark on the wire is caught (exit 1);
#  4b. validate connects through rdma_cm with the host's own marking: hosts whose rdma_cm default
#     ToS is 0 fail it (route and wire), restored they pass;
#  5. the same for iWARP on the two siw "hosts": apply, then validate through rdma_cm passes;
#  6. RoCEv1's PCP from the VLAN egress map: map 3:3 with ToS 0 fails validate (rdma_cm picks PCP 0),
#     map 0:3 passes.
# The side-by-side comparison with perftest is section verbs-perf.
# fabtb-timeout: 1800
# fabtb-needs: fabctl-verbs
# fabtb-gotest: ./validate/traffic
# fabtb-file: testbed/vm/testdata/verbs-rocev1.fab.hcl
. "$FABTB_SHARE/sections/lib.sh"

V=$FABCTL_VERBS
R=$FABTB_RESULTS
T=(--timeout 120s) # setup steps under TCG can be slow

# pair_once SECS SERVER... -- CLIENT...: fab_pair without the retry, for runs that are meant to fail.
pair_once() {
	local t=$1 srv=() cli=() sp src crc
	shift
	while [[ $# -gt 0 && $1 != -- ]]; do
		srv+=("$1")
		shift
	done
	shift
	cli=("$@")
	echo "\$ (server) ${srv[*]}"
	echo "\$ (client) ${cli[*]}"
	timeout -k 5 "$t" "${srv[@]}" >"$FABTB_TMP/server.out" 2>&1 &
	sp=$!
	sleep 2
	timeout -k 5 "$t" "${cli[@]}" >"$FABTB_TMP/client.out" 2>&1
	crc=$?
	sleep 2
	kill "$sp" 2>/dev/null # a server whose client never came
	wait "$sp"
	src=$?
	echo "[server rc=$src]"
	cat "$FABTB_TMP/server.out"
	echo "[client rc=$crc]"
	cat "$FABTB_TMP/client.out"
	sleep 1
	[[ $src -eq 0 && $crc -eq 0 ]]
}

# fab_expect_fail DESCR PATTERN SERVER... -- CLIENT...: a two-sided run that must fail, with the client's
# (or server's) error matching PATTERN.
fab_expect_fail() {
	local d=$1 pat=$2
	shift 2
	if pair_once 180 "$@"; then
		fab_fail "$d: the run succeeded"
	fi
	if grep -Eq "$pat" "$FABTB_TMP/client.out" "$FABTB_TMP/server.out"; then
		echo "ok: $d: $(grep -Eho "$pat.{0,160}" "$FABTB_TMP/client.out" "$FABTB_TMP/server.out" | head -1)"
	else
		fab_fail "$d: no error matching /$pat/"
	fi
}

fab_rxe_pair fa fb 198.18.0.1 198.18.0.2 || fab_fail "rxe pair"
fab_gid_index rxe_fa 198.18.0.1 >/dev/null && fab_gid_index rxe_fb 198.18.0.2 >/dev/null || fab_fail "rxe GIDs"
fab_siw_pair wa wb 198.18.1.1 198.18.1.2 || fab_fail "siw pair"

# ---- 2a. the wire counters validate uses, on this kernel (gact, u32) ----
(cd "$FABTB_TMP" && CI=true fab_run "$FABTB_BIN/traffic.test" -test.v -test.count=1 -test.run 'TestWireObserver') |
	tee "$FABTB_TMP/wire.out"
grep -q -- '--- PASS: TestWireObserver' "$FABTB_TMP/wire.out" || fab_fail "the wire-counter test did not pass here"

# ---- 1. the engine between two rxe devices ----
SRV=("$V" verbs server --listen 198.18.0.1 "${T[@]}")
CLI=("$V" verbs client 198.18.0.1 --addr 198.18.0.2 "${T[@]}")
rx0=$(cat /sys/class/net/fa/statistics/rx_packets)
# Four QPs keep 512 64 KiB writes in flight: with perftest's 67 ms ACK timeout, rxe under TCG
# retransmits on scheduling delays and Linux 6.1's rxe then NAKs the retried multi-packet writes
# ("remote invalid request"; ib_write_bw -q 4 fails the same way), hence -u 20 (4.3 s) there.
for t in "--op write -n 1000" "--op send -n 1000" "--op read -n 1000" "--op write -q 4 -n 250 -u 20" \
	"--mode lat --op send -n 500" "--mode lat --op write -n 500" "--mode lat --op read -n 500"; do
	# shellcheck disable=SC2086
	fab_pair -t 300 "${SRV[@]}" -- "${CLI[@]}" $t || fab_fail "fabctl verbs rxe: $t"
	fab_log "rxe $t: $(grep -m1 '✔' "$FABTB_TMP/client.out")"
done
rx1=$(cat /sys/class/net/fa/statistics/rx_packets)
fab_check "the rxe traffic crossed the veth (fa received $((rx1 - rx0)) packets)" test $((rx1 - rx0)) -gt 5000

# ---- 1b. siw through rdma_cm ----
SSRV=("$V" verbs server --listen 198.18.1.1 -R "${T[@]}")
SCLI=("$V" verbs client 198.18.1.1 --addr 198.18.1.2 -R "${T[@]}")
rx0=$(cat /sys/class/net/wa/statistics/rx_packets)
for t in "--op write -n 500" "--op send -n 500" "--op read -n 500" "--mode lat --op send -n 300"; do
	# shellcheck disable=SC2086
	fab_pair -t 300 "${SSRV[@]}" -- "${SCLI[@]}" $t || fab_fail "fabctl verbs siw: $t"
	fab_log "siw $t: $(grep -m1 '✔' "$FABTB_TMP/client.out")"
done
grep -q 'siw_wb port 1  ->  siw_wa, connected through rdma_cm' "$FABTB_TMP/client.out" ||
	fab_fail "the siw client did not run on siw_wb towards siw_wa"
rx1=$(cat /sys/class/net/wa/statistics/rx_packets)
fab_check "the siw traffic crossed the veth (wa received $((rx1 - rx0)) packets)" test $((rx1 - rx0)) -gt 1000

# ---- 2b. the class's DSCP on the wire ----
fab_tos_counters fb 0x6a 0x68 || fab_fail "tc flower counters on fb"
fab_pair -t 300 "${SRV[@]}" -- "${CLI[@]}" --op write -n 500 --tclass 106 || fab_fail "fabctl verbs --tclass 106"
n6a=$(fab_tos_count fb 0x6a) && n68=$(fab_tos_count fb 0x68) && nany=$(fab_tos_count fb any) || fab_fail "counters"
fab_log "RoCEv2 packets leaving fb: ToS 0x6a $n6a, ToS 0x68 $n68, any $nany"
fab_check "fabctl's traffic carried ToS 0x6a (DSCP 26 + ECT(0)): $n6a packets" test "$n6a" -gt 500
fab_check "every RoCEv2 packet carried it ($n6a of $nany)" test "$n6a" -eq "$nany"
fab_check "none carried the wrong ToS 0x68 ($n68)" test "$n68" -eq 0
tc qdisc del dev fb clsact

# ---- 3. injected faults, caught and explained ----
ip link set fa mtu 9000 || fab_fail "mtu"
sleep 1
fab_expect_fail "MTU mismatch (fa 9000, fb 1500; 4096 required)" \
	"MTU mismatch: the test requires a path MTU of 4096 but rxe_fb's active MTU is 1024" \
	"${SRV[@]}" -- "${CLI[@]}" -n 100 --mtu 4096
fab_pair -t 300 "${SRV[@]}" -- "${CLI[@]}" -n 100 || fab_fail "without a required MTU the smaller one is used"
grep -q 'path MTU 1024' "$FABTB_TMP/client.out" || fab_fail "path MTU is not min(4096, 1024)"
echo "ok: without --mtu the path MTU is min(4096, 1024) = 1024"
ip link set fa mtu 1500
fab_expect_fail "wrong GID type (RoCE v1 asked; rxe has only v2)" "has no GID of type IB/RoCE v1" \
	"${SRV[@]}" -- "${CLI[@]}" -n 100 --gid-type roce-v1
fab_expect_fail "GID address family mismatch (server on its link-local GID)" "GID address family mismatch" \
	"${SRV[@]}" -x 0 -- "${CLI[@]}" -n 100
fab_expect_fail "peer not reachable (no control channel)" "peer not reachable: cannot open the control channel to 198.18.0.9" \
	"${SRV[@]}" -- "$V" verbs client 198.18.0.9 --addr 198.18.0.2 --timeout 5s -n 100
# RoCE lost on the way: dropped as it arrives at the server's netdev (ARP and the TCP control channel
# still pass). Dropping at the sender's own egress instead makes Linux 6.1's rxe retry the local
# transmit forever in the poster's context (a soft lockup), which is not a fabric fault.
tc qdisc add dev fa clsact && tc filter add dev fa ingress pref 5 protocol ip flower ip_proto udp dst_port 4791 action drop ||
	fab_fail "blackhole filter"
fab_expect_fail "peer not reachable over RDMA (RoCE dropped on the way)" "the peer never acknowledged" \
	"${SRV[@]}" -- "${CLI[@]}" -n 100
tc qdisc del dev fa clsact

# ---- 4. fabctl validate on the two rxe "hosts" ----
spec=$FABTB_TMP/spec
mkdir -p "$spec"
cat >"$spec/fabric.fab.hcl" <<'HCL'
# Two soft-RoCE "hosts" in the VM's root namespace (rxe works only there), joined by a veth pair.
fabric "vmverbs" {
  transport = "rocev2"
  mtu       = 9000
}

host "ha" {
  connect = "local"
  nic "fa" {
    accept_not_in_effect = {
      "*" = "VM testbed: soft-RoCE and soft-iWARP on a veth have no DCB, DCQCN or buffer settings; what this spec proves is the RDMA path, its marking and the traffic test"
    }
    device    = "rxe_fa"
    model     = "rxe"
    addresses = ["198.18.0.1/24"]
    speed     = "10G"
  }
}

host "hb" {
  connect = "local"
  nic "fb" {
    accept_not_in_effect = {
      "*" = "VM testbed: soft-RoCE and soft-iWARP on a veth have no DCB, DCQCN or buffer settings; what this spec proves is the RDMA path, its marking and the traffic test"
    }
    device    = "rxe_fb"
    model     = "rxe"
    addresses = ["198.18.0.2/24"]
    speed     = "10G"
  }
}

# Soft-RoCE under emulation moves a few hundred Mbit/s with tens of microseconds of latency:
# absolute thresholds that catch "no traffic" or a stuck path.
validate "ring-write" {
  pattern       = "ring"
  op            = "write"
  message_size  = "64KiB"
  iterations    = 500
  min_bandwidth = "10M"
}

validate "pairs-read" {
  pattern       = "pairs"
  op            = "read"
  message_size  = "64KiB"
  iterations    = 500
  min_bandwidth = "10M"
}

validate "send-latency" {
  pattern      = "all-pairs"
  op           = "send"
  message_size = "2B"
  iterations   = 500
  max_p99      = "100ms"
}
HCL
cd "$FABTB_TMP" || fab_fail "cd"
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
modprobe rdma_cm
fab_run "$V" validate --static --no-color "$spec" || fab_fail "validate --static"
fab_run "$V" apply --auto-approve --no-color "$spec" || fab_fail "fabctl apply"
fab_run "$V" validate --no-color --junit "$R/validate.junit.xml" "$spec"
rc=$?
"$V" validate --json "$spec" >"$R/validate.json" 2>"$R/validate.stderr"
fab_check "fabctl validate ran every stage and passed (rc=$rc)" test "$rc" -eq 0
fab_check "the JSON report has the three stages" grep -q '"traffic"' "$R/validate.json"
fab_check "the JUnit report has read-back and traffic suites" grep -q 'fabctl validate: traffic' "$R/validate.junit.xml"

# A remark on the way (what a misconfigured switch does): fb's egress rewrites DSCP 26 to 0.
modprobe act_pedit 2>/dev/null
modprobe act_csum 2>/dev/null
tc qdisc add dev fb clsact &&
	tc filter add dev fb egress pref 7 protocol ip flower ip_proto udp dst_port 4791 \
		action pedit ex munge ip dsfield set 0 retain 0xfc pipe action csum ip ||
	fab_fail "remark filter"
"$V" validate --no-color "$spec" >"$FABTB_TMP/remark.out" 2>&1
rc=$?
cat "$FABTB_TMP/remark.out"
fab_check "fabctl validate fails when the wire carries another DSCP (rc=$rc)" test "$rc" -eq 1
fab_check "and says why" grep -q 'arrived with another DSCP than 26' "$FABTB_TMP/remark.out"
tc qdisc del dev fb clsact

# ---- 4b. the host's own marking: validate connects through rdma_cm without a ToS of its own ----
# fabctl apply wrote the class's ToS (106) to both devices' rdma_cm default_roce_tos; the traffic test
# must carry what an application carries. A host with a wrong default ToS (0, as a host nobody
# configured) fails validate, from rdma_cm's route and on the wire. --skip-readback: the read-back
# stage would also (rightly) report the changed ToS; this proves the traffic stage sees it by itself.
cfs=/sys/kernel/config/rdma_cm
fab_check "apply set rxe_fa's rdma_cm default ToS to 106" test "$(cat $cfs/rxe_fa/ports/1/default_roce_tos)" = 106
echo 0 >"$cfs/rxe_fa/ports/1/default_roce_tos" && echo 0 >"$cfs/rxe_fb/ports/1/default_roce_tos" || fab_fail "default ToS 0"
"$V" validate --no-color --skip-readback "$spec" >"$FABTB_TMP/tos.out" 2>&1
rc=$?
cat "$FABTB_TMP/tos.out"
fab_check "fabctl validate fails on hosts whose default ToS is 0 (rc=$rc)" test "$rc" -eq 1
fab_check "rdma_cm's route says why" grep -q 'rdma_cm sent the connection with ToS 0 (DSCP 0), not the class' "$FABTB_TMP/tos.out"
fab_check "and so does the wire" grep -q 'arrived with another DSCP than 26' "$FABTB_TMP/tos.out"
echo 106 >"$cfs/rxe_fa/ports/1/default_roce_tos" && echo 106 >"$cfs/rxe_fb/ports/1/default_roce_tos" || fab_fail "default ToS 106"
fab_run "$V" validate --no-color --skip-readback "$spec" || fab_fail "validate with the default ToS restored"

# ---- 5. iWARP end to end: fabctl apply + validate on the two siw "hosts", through rdma_cm ----
ispec=$FABTB_TMP/ispec
mkdir -p "$ispec"
cat >"$ispec/fabric.fab.hcl" <<'HCL'
# Two soft-iWARP "hosts" in the VM's root namespace, joined by a veth pair. iWARP is RDMA over
# TCP: no lossless class, and the verbs test connects through rdma_cm as iWARP requires.
fabric "vmiwarp" {
  transport          = "iwarp"
  mtu                = 9000
  congestion_control = "ecn-only"
}

class "storage" {
  role      = "rdma"
  priority  = 3
  dscp      = [26]
  bandwidth = 60
}

class "default" {
  role      = "other"
  priority  = 0
  default   = true
  bandwidth = 40
}

host "ia" {
  connect = "local"
  nic "wa" {
    accept_not_in_effect = {
      "*" = "VM testbed: soft-RoCE and soft-iWARP on a veth have no DCB, DCQCN or buffer settings; what this spec proves is the RDMA path, its marking and the traffic test"
    }
    device    = "siw_wa"
    model     = "siw"
    addresses = ["198.18.1.1/24"]
    speed     = "10G"
  }
}

host "ib" {
  connect = "local"
  nic "wb" {
    accept_not_in_effect = {
      "*" = "VM testbed: soft-RoCE and soft-iWARP on a veth have no DCB, DCQCN or buffer settings; what this spec proves is the RDMA path, its marking and the traffic test"
    }
    device    = "siw_wb"
    model     = "siw"
    addresses = ["198.18.1.2/24"]
    speed     = "10G"
  }
}

validate "iwarp-ring-write" {
  pattern       = "ring"
  op            = "write"
  message_size  = "64KiB"
  iterations    = 300
  min_bandwidth = "10M"
}

validate "iwarp-send-latency" {
  pattern      = "all-pairs"
  op           = "send"
  message_size = "2B"
  iterations   = 300
  max_p99      = "100ms"
}
HCL
wrx0=$(cat /sys/class/net/wa/statistics/rx_packets)
fab_run "$V" validate --static --no-color "$ispec" || fab_fail "iWARP: validate --static"
fab_run "$V" apply --auto-approve --no-color "$ispec" || fab_fail "iWARP: fabctl apply"
fab_check "iWARP: apply set wa's MTU to 9000" test "$(cat /sys/class/net/wa/mtu)" -eq 9000
fab_run "$V" validate --no-color "$ispec" | tee "$FABTB_TMP/iwarp.out"
rc=${PIPESTATUS[0]}
"$V" validate --json "$ispec" >"$R/validate-iwarp.json" 2>"$R/validate-iwarp.stderr"
fab_check "iWARP: fabctl validate ran every stage and passed (rc=$rc)" test "$rc" -eq 0
fab_check "iWARP: the traffic ran between the siw devices through rdma_cm" grep -q '"conn": "rdma_cm"' "$R/validate-iwarp.json"
fab_check "iWARP: the class check says why the wire shows no DSCP" grep -q 'iWARP runs over TCP' "$FABTB_TMP/iwarp.out"
wrx1=$(cat /sys/class/net/wa/statistics/rx_packets)
fab_check "iWARP: the traffic crossed the veth (wa received $((wrx1 - wrx0)) packets)" test $((wrx1 - wrx0)) -gt 1000

# ---- 6. RoCEv1's PCP: rdma_cm takes it from the VLAN egress map entry of rt_tos2priority(ToS) ----
# (drivers/infiniband/core/cma.c cma_resolve_iboe_route -> iboe_tos_to_sl; net/ipv4/route.c
# ip_tos2prio only yields 0, 2, 4, 6). VLAN 100 on the rxe pair with the egress map 3:3 that
# examples/rocev1-storage used and no ToS (RoCEv1 has no IP header): the storage traffic leaves with
# PCP 0, and validate must say so. With 0:3 it passes. The map is set here directly (the host driver
# derives it); rxe takes no RoCE v1 mode (its GIDs are v2 only), so the spec is not applied and the
# read-back stage is skipped: the traffic stage's rdma_cm route is under test.
modprobe 8021q || fab_fail "modprobe 8021q"
for e in a b; do
	ip link add link "f$e" name "f$e.100" type vlan id 100 egress-qos-map 3:3 || fab_fail "vlan on f$e"
done
ip addr add 198.18.2.1/24 dev fa.100 && ip addr add 198.18.2.2/24 dev fb.100 || fab_fail "vlan addresses"
ip link set fa.100 up && ip link set fb.100 up || fab_fail "vlan up"
for i in fa.100 fb.100; do
	echo 1 >"/proc/sys/net/ipv4/conf/$i/accept_local" && echo 0 >"/proc/sys/net/ipv4/conf/$i/rp_filter" ||
		fab_fail "accept_local/rp_filter on $i"
done
ip route add 198.18.2.2 dev fa.100 src 198.18.2.1 table 121 &&
	ip route add 198.18.2.1 dev fb.100 src 198.18.2.2 table 122 &&
	ip rule add pref 20 oif fa.100 lookup 121 &&
	ip rule add pref 21 oif fb.100 lookup 122 &&
	ip rule add pref 60 to 198.18.2.2 iif lo lookup 121 &&
	ip rule add pref 61 to 198.18.2.1 iif lo lookup 122 || fab_fail "policy routing on the VLAN interfaces"
ip link set fa mtu 1500 && ip link set fb mtu 1500 || fab_fail "mtu 1500"
# No ToS of the host's: RoCEv1 carries none (0, rdma_cm's default). Removing the configfs group does
# not reset it (the value lives in the kernel's cma_device), so write it.
for d in rxe_fa rxe_fb; do
	mkdir -p "$cfs/$d" && echo 0 >"$cfs/$d/ports/1/default_roce_tos" || fab_fail "default ToS 0 on $d"
done
v1spec=$FABTB_TMP/v1spec
mkdir -p "$v1spec"
cp "$FABTB_FILES/testbed/vm/testdata/verbs-rocev1.fab.hcl" "$v1spec/fabric.fab.hcl" || fab_fail "RoCEv1 spec"
"$V" validate --no-color --skip-readback "$v1spec" >"$FABTB_TMP/v1.out" 2>&1
rc=$?
cat "$FABTB_TMP/v1.out"
fab_check "RoCEv1: validate fails with the egress map 3:3 and ToS 0 (rc=$rc)" test "$rc" -eq 1
fab_check "RoCEv1: because rdma_cm chose PCP 0 for the class of priority 3" \
	grep -q 'rdma_cm chose PCP 0 for ToS 0, not the class.s priority 3' "$FABTB_TMP/v1.out"
ip link set fa.100 type vlan egress-qos-map 0:3 && ip link set fb.100 type vlan egress-qos-map 0:3 || fab_fail "map 0:3"
"$V" validate --no-color --skip-readback "$v1spec" >"$FABTB_TMP/v1ok.out" 2>&1
rc=$?
cat "$FABTB_TMP/v1ok.out"
fab_check "RoCEv1: with the map 0:3 validate passes (rc=$rc)" test "$rc" -eq 0
exit 0
