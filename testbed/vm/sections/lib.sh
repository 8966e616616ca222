# shellcheck shell=bash
# Helpers for VM testbed sections: source it with  . "$FABTB_SHARE/sections/lib.sh"
# Every function is documented in ../README.md (the contract); keep the two in step.
set -uo pipefail

FABTB_TMP=${FABTB_TMP:-$(mktemp -d)}

fab_log() { echo "FABTB[$(cut -d' ' -f1 /proc/uptime)] $*"; }

fab_uptime() { cut -d' ' -f1 /proc/uptime; }

fab_run() {
	local t0 rc
	t0=$(fab_uptime)
	echo "\$ $*"
	"$@"
	rc=$?
	echo "[rc=$rc in $(awk -v a="$t0" -v b="$(fab_uptime)" 'BEGIN { printf "%.1f", b - a }')s]"
	return "$rc"
}

fab_skip() {
	echo "SKIP: $*"
	exit 77
}

fab_fail() {
	echo "FAIL: $*"
	exit 1
}

# fab_check DESCRIPTION CMD...: the section fails unless CMD succeeds.
fab_check() {
	local d=$1
	shift
	if "$@"; then echo "ok: $d"; else fab_fail "$d"; fi
}

# fab_policy_routing moves the local table from pref 0 to pref 100 (once per boot; the runner restores
# it between sections) so that pair rules at prefs < 100 decide the output interface first.
fab_policy_routing() {
	if ! ip rule show | grep -q '^100:.*lookup local'; then
		ip rule add pref 100 lookup local || return 1
		ip rule del pref 0 || return 1
	fi
}

# fab_veth_pair A B IPA IPB [MTU]: two "hosts" in the root netns whose traffic crosses the veth. Each
# end gets a routing table with a host route to the peer's (local) address out of its own interface,
# chosen by two rules ahead of the local table: "oif A" (rxe and ib_core set the flow's output
# interface) and "to IPB iif lo" (any locally generated packet to the other end's address, whatever
# its source: the kernel TCP sockets of siw, rdma_cm's route resolution without a bound source,
# ping). So a client talking to IPA always leaves through B and reaches A over the wire, and A's
# replies leave through A. accept_local/rp_filter let the other end take the packet in, and input
# still finds the address in the local table.
fab_veth_pair() {
	local a=$1 b=$2 ipa=$3 ipb=$4 mtu=${5:-} i n ta tb
	ip link add "$a" numtxqueues 8 numrxqueues 8 type veth peer name "$b" numtxqueues 8 numrxqueues 8 || return 1
	if [[ -n $mtu ]]; then
		ip link set "$a" mtu "$mtu" && ip link set "$b" mtu "$mtu" || return 1
	fi
	ip addr add "$ipa/24" dev "$a" && ip addr add "$ipb/24" dev "$b" || return 1
	ip link set "$a" up && ip link set "$b" up || return 1
	for i in all default "$a" "$b"; do
		sysctl -qw "net.ipv4.conf.$i.accept_local=1" "net.ipv4.conf.$i.rp_filter=0" || return 1
	done
	fab_policy_routing || return 1
	# Pairs already made (two oif rules each) decide this pair's tables and rule prefs (< 100).
	n=$(($(ip rule show | grep -c ' oif ') / 2))
	ta=$((101 + 2 * n)) tb=$((102 + 2 * n))
	ip route add "$ipb" dev "$a" src "$ipa" table "$ta" &&
		ip route add "$ipa" dev "$b" src "$ipb" table "$tb" &&
		ip rule add pref $((10 + 2 * n)) oif "$a" lookup "$ta" &&
		ip rule add pref $((11 + 2 * n)) oif "$b" lookup "$tb" &&
		ip rule add pref $((50 + 2 * n)) to "$ipb" iif lo lookup "$ta" &&
		ip rule add pref $((51 + 2 * n)) to "$ipa" iif lo lookup "$tb"
}

# fab_rdma_pair TYPE A B IPA IPB [MTU]: fab_veth_pair plus rdma links TYPE_A and TYPE_B.
fab_rdma_pair() {
	local type=$1 a=$2 b=$3
	shift
	case $type in
	rxe) modprobe rdma_rxe || return 1 ;;
	siw) modprobe siw || return 1 ;;
	*) echo "fab_rdma_pair: unknown link type $type" >&2; return 1 ;;
	esac
	modprobe ib_uverbs && modprobe rdma_ucm || return 1
	fab_veth_pair "$@" || return 1
	rdma link add "${type}_$a" type "$type" netdev "$a" &&
		rdma link add "${type}_$b" type "$type" netdev "$b" || return 1
	fab_log "$type pair ${type}_$a ($3) <-> ${type}_$b ($4) ready"
}
fab_rxe_pair() { fab_rdma_pair rxe "$@"; }
fab_siw_pair() { fab_rdma_pair siw "$@"; }

# fab_gid_index DEV IPV4: the port-1 GID index of ::ffff:IPV4 on DEV (RoCE v2 preferred), waiting up to
# 10 s for the GID table to fill.
fab_gid_index() {
	local dev=$1 ip=$2 want o1 o2 o3 o4 f idx first="" try
	IFS=. read -r o1 o2 o3 o4 <<<"$ip"
	want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$o1" "$o2" "$o3" "$o4")
	for try in $(seq 20); do
		for f in /sys/class/infiniband/"$dev"/ports/1/gids/*; do
			[[ $(cat "$f" 2>/dev/null) == "$want" ]] || continue
			idx=${f##*/}
			if [[ $(cat "/sys/class/infiniband/$dev/ports/1/gid_attrs/types/$idx" 2>/dev/null) == "RoCE v2" ]]; then
				echo "$idx"
				return 0
			fi
			first=${first:-$idx}
		done
		if [[ -n $first ]]; then
			echo "$first"
			return 0
		fi
		sleep 0.5
	done
	echo "fab_gid_index: no GID $want ($ip) on $dev" >&2
	return 1
}

# fab_pair [-t SECS] [-q] SERVER... -- CLIENT...: a two-sided test (perftest, rping, pingpong), retried
# FABTB_RETRIES times (default 4): perftest's CPU-clock calibration fails now and then under TCG
# ("Correlation coefficient r^2: 0.78 < 0.9"), more often when the host is busy. The client starts 2 s
# after the server, and the next pair 2 s after a run. -q (quick) is for clients that retry their
# connection (fabctl verbs, either backend): the client starts at once and only a failed run is
# followed by the pause.
fab_pair() {
	local t=90 srv=() cli=() attempt attempts=$((1 + ${FABTB_RETRIES:-4})) sp src crc quick=0
	while [[ ${1:-} == -t || ${1:-} == -q ]]; do
		if [[ $1 == -q ]]; then
			quick=1
			shift
		else
			t=$2
			shift 2
		fi
	done
	while [[ $# -gt 0 && $1 != -- ]]; do
		srv+=("$1")
		shift
	done
	[[ ${1:-} == -- ]] || { echo "fab_pair: no -- between server and client" >&2; return 2; }
	shift
	cli=("$@")
	for ((attempt = 1; attempt <= attempts; attempt++)); do
		echo "\$ (server) ${srv[*]}"
		echo "\$ (client) ${cli[*]}"
		timeout -k 5 "$t" "${srv[@]}" >"$FABTB_TMP/server.out" 2>&1 &
		sp=$!
		((quick)) || sleep 2
		timeout -k 5 "$t" "${cli[@]}" >"$FABTB_TMP/client.out" 2>&1
		crc=$?
		if [[ $crc -ne 0 ]]; then
			sleep 1
			kill "$sp" 2>/dev/null
		fi
		wait "$sp"
		src=$?
		echo "[server rc=$src]"
		cat "$FABTB_TMP/server.out"
		echo "[client rc=$crc]"
		cat "$FABTB_TMP/client.out"
		# perftest 4.5 may refuse or crash on a connection right after a failed one
		[[ $quick -eq 1 && $src -eq 0 && $crc -eq 0 ]] || sleep 2
		# perftest exits 0 with inf/nan figures when its CPU-clock calibration went wrong under TCG.
		if [[ $src -eq 0 && $crc -eq 0 ]] && grep -Eq '(^|[[:space:]])-?(inf|nan)([[:space:]]|$)' "$FABTB_TMP/client.out"; then
			fab_log "the client reported inf/nan figures (clock calibration)"
			crc=99
		fi
		[[ $src -eq 0 && $crc -eq 0 ]] && return 0
		[[ $attempt -lt $attempts ]] && fab_log "two-sided test failed (server rc=$src, client rc=$crc); attempt $((attempt + 1)) of $attempts"
	done
	return 1
}

# fab_tos_counters DEV TOS...: count RoCEv2 packets (UDP 4791) leaving DEV per IP ToS byte (decimal or
# 0x..), plus all of them (fab_tos_count DEV any). Filter pref = ToS + 1; "any" is pref 1000. The ToS
# filters "continue" so that every packet also reaches the "any" counter.
fab_tos_counters() {
	local dev=$1 tos
	shift
	tc qdisc add dev "$dev" clsact 2>/dev/null
	for tos in "$@"; do
		tc filter add dev "$dev" egress pref $((tos + 1)) protocol ip flower ip_proto udp dst_port 4791 \
			ip_tos "$(printf '0x%02x' $((tos)))/0xff" action continue || return 1
	done
	tc filter add dev "$dev" egress pref 1000 protocol ip flower ip_proto udp dst_port 4791 action pass
}

fab_tos_count() {
	local dev=$1 pref n
	if [[ $2 == any ]]; then pref=1000; else pref=$(($2 + 1)); fi
	n=$(tc -s filter show dev "$dev" egress pref "$pref" | awk '$1 == "Sent" { print $4; exit }')
	[[ -n $n ]] || { echo "fab_tos_count: no counter for $2 on $dev" >&2; return 1; }
	echo "$n"
}

# fab_perf_value FILE: the "BW average" (Gb/s) of a perftest bandwidth run or "t_typical" (usec) of a
# latency run; fails unless it is a positive finite number.
fab_perf_value() {
	local v
	v=$(awk '
		found { print $col; exit }
		/BW average/ { col = 4; found = 1 }
		/t_typical/ { col = 5; found = 1 }
	' "$1")
	if [[ ! $v =~ ^[0-9]+(\.[0-9]+)?$ ]] || ! awk -v v="$v" 'BEGIN { exit !(v > 0) }'; then
		echo "fab_perf_value: no positive figure in $1 (got '$v')" >&2
		return 1
	fi
	echo "$v"
}
