#!/bin/bash
# Harness check, part 1: leave a mess behind (rdma links, veth, policy rules, a netdevsim device and
# its module, an rdma_cm configfs entry, a background process) for the runner's reset to clean up.
. "$FABTB_SHARE/sections/lib.sh"
fab_rxe_pair ha hb 198.18.9.1 198.18.9.2 || fab_fail "rxe pair"
modprobe netdevsim && echo "7 1" >/sys/bus/netdevsim/new_device || fab_fail "netdevsim device"
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
mkdir /sys/kernel/config/rdma_cm/rxe_hb || fab_fail "rdma_cm configfs entry"
ip netns add harness || fab_fail "netns"
sleep 1000 &
fab_run rdma link show
fab_run ip rule show
echo "left a mess behind"
