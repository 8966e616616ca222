#!/bin/bash
# The VM testbed's section runner, started by the guest's /fabtb/init from the 9p share. It runs the
# sections named on the kernel command line (fabtb_sections=a,b,c) in order, each in its own session
# under its timeout, writes results/<name>.log and results/<name>.rc, and resets the guest in between.
# Contract: ../README.md.
share=/mnt/host
export PATH=$share/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8

cmdline=$(cat /proc/cmdline)
arg() {
	local w
	for w in $cmdline; do
		case $w in "$1="*) echo "${w#*=}"; return ;; esac
	done
	echo "$2"
}
up() { cut -d' ' -f1 /proc/uptime; }

sections=$(arg fabtb_sections "")
export FABTB_SHARE=$share FABTB_BIN=$share/bin FABTB_FILES=$share/files FABCTL=$share/bin/fabctl
export FABTB_DUR=$(arg fabtb_dur 5) FABTB_GUEST=1
# Knobs the host's environment set (vm.go passes them on the command line only when set).
for k in perf_pairs retries demo_runs; do
	v=$(arg "fabtb_$k" "")
	[[ -z $v ]] || export "FABTB_${k^^}=$v"
done
[[ -x $share/bin/fabctl-verbs ]] && export FABCTL_VERBS=$share/bin/fabctl-verbs
if [[ $(arg fabtb_ci 0) == 1 ]]; then export CI=true; else unset CI; fi

# reset_guest undoes what a section may have left: rdma_cm configfs entries, rdma links, netdevsim
# devices, network namespaces, the image's out-of-tree modules, every interface but lo, and the
# policy-routing rules (lib.sh moves the local table to pref 100). In-tree modules and sysctls stay.
# Each step checks with shell builtins first: under TCG every process costs a few hundred ms.
mapfile -t kmods < <(sed -n 's/^kmod=//p' /fabtb/manifest)
reset_guest() {
	local d l i rules
	for d in /sys/kernel/config/rdma_cm/*/; do [[ -d $d ]] && rmdir "$d"; done 2>/dev/null
	if compgen -G '/sys/class/infiniband/*' >/dev/null; then
		for l in $(rdma link show 2>/dev/null | awk '$1 == "link" { split($2, a, "/"); print a[1] }' | sort -u); do
			rdma link delete "$l" 2>/dev/null
		done
	fi
	for d in /sys/bus/netdevsim/devices/netdevsim*; do
		[[ -e $d ]] && echo "${d##*netdevsim}" >/sys/bus/netdevsim/del_device
	done 2>/dev/null
	compgen -G '/run/netns/*' >/dev/null && ip -all netns delete 2>/dev/null
	# The image's out-of-tree modules go too (with the netdevs they made), so that the next section's
	# "modprobe fabdcb count=8" makes fresh devices with its own parameters.
	for ((i = ${#kmods[@]} - 1; i >= 0; i--)); do
		[[ -d /sys/module/${kmods[i]} ]] || continue
		modprobe -r "${kmods[i]}" 2>/dev/null || echo "FABTB-RESET cannot unload module ${kmods[i]}"
	done
	for l in /sys/class/net/*; do
		[[ ${l##*/} == lo ]] || ip link delete "${l##*/}" 2>/dev/null
	done
	rules=$(ip rule show)
	if [[ $rules != $'0:\tfrom all lookup local\n32766:\tfrom all lookup main\n32767:\tfrom all lookup default' ]]; then
		ip rule flush 2>/dev/null
		rules=$'\n'$(ip rule show)
		[[ $rules == *$'\n0:\t'* ]] || ip rule add pref 0 lookup local
		[[ $rules == *$'\n32766:\t'* ]] || ip rule add pref 32766 lookup main
		[[ $rules == *$'\n32767:\t'* ]] || ip rule add pref 32767 lookup default
	fi
}

since() { awk -v a="$1" -v b="$(up)" 'BEGIN { printf "%.1f", b - a }'; }

# header KEY FILE: the first value of "# fabtb-KEY:" in the section's leading comment block (the
# same rule as ParseSection in sections.go; TestRunnerHeaders keeps the two in step).
header() {
	awk -v key="# fabtb-$1:" '!/^[ \t]*(#|$)/ { exit }
		{ sub(/^[ \t]+/, "") } index($0, key) == 1 { $0 = substr($0, length(key) + 1); if (NF) { print $1; exit } }' "$2"
}

echo "FABTB-BOOT uptime=$(up) kernel=$(uname -r) sections=$sections"
mkdir -p "$share/results"
for name in ${sections//,/ }; do
	f=$share/sections/$name.sh
	res=$share/results/$name
	rm -rf "$res" "$res.log" "$res.rc"
	mkdir -p "$res"
	if [[ ! -f $f ]]; then
		echo "no section file $f" >"$res.log"
		echo 1 >"$res.rc"
		continue
	fi
	t=$(header timeout "$f")
	t=${t:-300}
	tmp=$(mktemp -d "/tmp/fabtb-$name.XXXXXX")
	out=$tmp.out
	echo "===== FABTB-BEGIN $name timeout=${t}s uptime=$(up) ====="
	t0=$(up)
	# setsid: the section gets its own process group, so a server it left in the background is
	# killed afterwards instead of holding the output open. tail streams the output to the console.
	(cd "$res" && FABTB_SECTION=$name FABTB_RESULTS=$res FABTB_TMP=$tmp exec setsid timeout -k 10 "$t" bash "$f") \
		>"$out" 2>&1 </dev/null &
	spid=$!
	tail -n +1 -s 0.5 -f --pid="$spid" "$out" &
	tpid=$!
	wait "$spid"
	rc=$?
	kill -KILL -- "-$spid" 2>/dev/null
	wait "$tpid"
	[[ $rc -eq 124 || $rc -eq 137 ]] && echo "FABTB-TIMEOUT section $name killed after ${t}s" | tee -a "$out"
	cp "$out" "$res.log"
	echo "$rc" >"$res.rc"
	sync
	echo "===== FABTB-END $name rc=$rc secs=$(since "$t0") ====="
	rm -rf "$tmp" "$out"
	t0=$(up)
	reset_guest
	echo "FABTB-RESET $(since "$t0")s"
done
echo "FABTB-DONE uptime=$(up)"
