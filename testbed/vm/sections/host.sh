#!/bin/bash
# host: the host driver's sysfs/configfs/procfs features on a real kernel.
#  - rdma_cm default ToS through configfs, set by the fabctl binary from a spec (rdma_tos = 106 on the
#    rxe device of veth fb), proven on the wire: rping from fb is counted by tc flower as ToS 0x6a
#    (DSCP 26 + ECT(0)) and no RoCEv2 packet leaves without it; the re-plan is clean;
#  - NUMA discovery with qemu's two nodes, IRQ affinity pinned and read back on a real interrupt (a
#    virtio PCI device's: the guest's NICs have none), PCIe and device-limit reads on real devices
#    (drivers/host vm_test.go).
# fabtb-timeout: 600
# fabtb-gotest: ./drivers/host
# fabtb-file: drivers/host/testdata/vm
. "$FABTB_SHARE/sections/lib.sh"

fab_rxe_pair fa fb 198.18.0.1 198.18.0.2 || fab_fail "rxe pair"
modprobe rdma_cm || fab_fail "modprobe rdma_cm"
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config || fab_fail "mount configfs"
ibv_devinfo -v -d rxe_fa >"$FABTB_RESULTS/ibv_devinfo_rxe.txt" 2>&1 || fab_fail "ibv_devinfo -v -d rxe_fa"

export FABCTL_VM=1 FABCTL_VM_RDMA=rxe_fa
(cd "$FABTB_FILES/drivers/host" && fab_run "$FABTB_BIN/host.test" -test.v -test.count=1 -test.run 'TestVM') ||
	fab_fail "host driver VM tests"

# rdma_cm ToS by fabctl, seen on the wire.
spec=$FABTB_TMP/spec
mkdir -p "$spec"
cat >"$spec/fabric.fab.hcl" <<'HCL'
fabric "vmtos" {
  transport = "rocev2"
  mtu       = 1500
  rdma_mtu  = 1024
}
host "vm" {
  connect  = "local"
  rdma_tos = 106
  nic "fb" {
    accept_not_in_effect = {
      "*" = "VM testbed: soft-RoCE and soft-iWARP on a veth have no DCB, DCQCN or buffer settings; what this spec proves is the RDMA path, its marking and the traffic test"
    }
    device    = "rxe_fb"
    model     = "rxe"
    addresses = ["198.18.0.2/24"]
  }
}
HCL
cd "$FABTB_TMP" || fab_fail "cd"
fab_tos_counters fb 0x6a || fab_fail "tc flower counters on fb"
fab_pair -t 60 rping -s -a 198.18.0.1 -C 20 -- rping -c -a 198.18.0.1 -I 198.18.0.2 -C 20 -V || fab_fail "rping before"
before=$(fab_tos_count fb 0x6a) && beforeany=$(fab_tos_count fb any) || fab_fail "counters"
fab_log "before fabctl: $before of $beforeany RoCEv2 packets from fb carried ToS 0x6a"
fab_run "$FABCTL" plan --no-color --show-payload "$spec" || fab_fail "fabctl plan"
fab_run "$FABCTL" apply --auto-approve --no-color "$spec" || fab_fail "fabctl apply"
tos=$(cat /sys/kernel/config/rdma_cm/rxe_fb/ports/1/default_roce_tos) || fab_fail "configfs read"
fab_check "configfs default_roce_tos of rxe_fb is 106 ($tos)" test "$tos" = 106
fab_run "$FABCTL" plan --no-color --detailed-exitcode "$spec"
rc=$?
fab_check "re-plan after apply has no changes (rc=$rc)" test "$rc" -eq 0
fab_pair -t 60 rping -s -a 198.18.0.1 -C 20 -- rping -c -a 198.18.0.1 -I 198.18.0.2 -C 20 -V || fab_fail "rping after"
after=$(fab_tos_count fb 0x6a) && afterany=$(fab_tos_count fb any) || fab_fail "counters"
n=$((after - before)) nany=$((afterany - beforeany))
fab_log "after fabctl: $n of $nany RoCEv2 packets from fb carried ToS 0x6a"
fab_check "rping packets carried the ToS fabctl set ($n)" test "$n" -gt 0
fab_check "every RoCEv2 packet from fb carried it ($n of $nany)" test "$n" -eq "$nany"
exit 0
