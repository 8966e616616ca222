#!/bin/bash
# info: the guest is what the other sections assume: the Debian kernel, two NUMA nodes (qemu -numa),
# every out-of-tree module of the image (siw, netdevsim, kmod/*) loads and unloads, rdma_rxe loads.
# fabtb-timeout: 300
. "$FABTB_SHARE/sections/lib.sh"

fab_log "kernel $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ { print int($2 / 1024) " MiB" }' /proc/meminfo)"
cat /fabtb/manifest

cs=/sys/devices/system/clocksource/clocksource0
fab_log "clocksource $(cat $cs/current_clocksource) (available: $(cat $cs/available_clocksource))"

nodes=$(ls -d /sys/devices/system/node/node[0-9]* | wc -l)
for n in /sys/devices/system/node/node[0-9]*; do
	echo "${n##*/}: cpus $(cat "$n/cpulist"), $(awk '/MemTotal/ { print int($4 / 1024) " MiB" }' "$n/meminfo")"
done
fab_check "2 NUMA nodes (found $nodes)" test "$nodes" -eq 2

kver=$(sed -n 's/^kver=//p' /fabtb/manifest)
fab_check "manifest kernel $kver is the running kernel" test "$kver" = "$(uname -r)"
mods=$(sed -n 's/^kmod=//p' /fabtb/manifest)
fab_check "manifest lists siw and netdevsim" bash -c "grep -qx siw <<<'$mods' && grep -qx netdevsim <<<'$mods'"
for m in $mods; do
	fab_run modinfo -F vermagic "$m" || fab_fail "modinfo $m"
	fab_check "module $m loads" modprobe "$m"
	# A module in use (e.g. by a device it created) may refuse to go; that is not this check's business.
	modprobe -r "$m" 2>/dev/null && echo "ok: module $m unloads" || echo "note: module $m stays loaded"
done

fab_check "rdma_rxe loads" modprobe rdma_rxe
fab_run rdma dev show
fab_run ibv_devices
fab_run dpkg-query -W linux-image-amd64 rdma-core perftest iproute2
exit 0
