#!/bin/bash
# demo: `make demo-vm`. The demo job of `make demo` (testbed/demo.sh: testbed up, validate --static,
# plan, apply, clean re-plan, validate, testbed down) on examples/vm-testbed, here with real RDMA
# traffic: the switches are the testbed's emulators (SSH CLI and gNMI), the two hosts are rxe
# devices on a veth pair in the guest's root namespace, and the last `fabctl validate` runs every
# stage (static, read-back, the verbs traffic test with its wire check) and must pass.
# fabtb-timeout: 1200
# fabtb-needs: fabctl-verbs
# fabtb-file: testbed/demo.sh
# fabtb-file: examples/vm-testbed
. "$FABTB_SHARE/sections/lib.sh"

# The hosts' NICs: fa and fb, soft-RoCE on top, traffic between their addresses across the veth.
# fabctl apply sets their MTU to the spec's 9000 (rxe then runs 4096).
fab_rxe_pair fa fb 198.18.0.1 198.18.0.2 || fab_fail "rxe pair"
fab_gid_index rxe_fa 198.18.0.1 >/dev/null && fab_gid_index rxe_fb 198.18.0.2 >/dev/null || fab_fail "rxe GIDs"
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
modprobe rdma_cm

# The testbed writes its keys, certificates and known_hosts beside the spec: a writable copy.
spec=$FABTB_TMP/vm-testbed
cp -r "$FABTB_FILES/examples/vm-testbed" "$spec" || fab_fail "copy the spec"
cd "$FABTB_TMP" || fab_fail "cd"
mtu0=$(cat /sys/class/net/fa/mtu)
BIN=$FABCTL_VERBS bash "$FABTB_FILES/testbed/demo.sh" "$spec" || fab_fail "the demo failed (see above)"
fab_check "fabctl apply set fa's MTU from $mtu0 to the spec's 9000" test "$(cat /sys/class/net/fa/mtu)" -eq 9000
fab_check "rxe_fa now runs a 4096 RoCE MTU" grep -q 'active_mtu.*4096' <(ibv_devinfo -d rxe_fa)
fab_check "the testbed is down (no emulator left)" test -z "$(pgrep -f 'testbed serve')"
exit 0
