#!/bin/bash
# Harness check, part 2: the guest is clean again after a-leave.
. "$FABTB_SHARE/sections/lib.sh"
fab_check "no rdma links" test -z "$(rdma link show)"
fab_check "only lo ($(ls /sys/class/net | tr '\n' ' '))" test "$(ls /sys/class/net)" = lo
fab_check "default ip rules" test "$(ip rule show | cut -d: -f1 | tr '\n' ' ')" = "0 32766 32767 "
fab_check "netdevsim unloaded" test ! -d /sys/module/netdevsim
fab_check "no network namespaces" test -z "$(ip netns list)"
fab_check "no rdma_cm configfs entries" test -z "$(ls /sys/kernel/config/rdma_cm 2>/dev/null)"
fab_check "the background process of a-leave is gone" bash -c '! pgrep -x sleep'
