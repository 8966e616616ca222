#!/usr/bin/env bash
# The demo: fabctl's main job for real against the local testbed, narrated step by step.
#
#   testbed/demo.sh SPEC [OTHER_EXAMPLE...]        (as root)
#
# testbed up, validate --static, plan (must show changes: exit 2), apply -auto-approve, plan
# again (--detailed-exitcode: must be 0, no changes), validate, a summary, and testbed down
# always (trap); then, when OTHER_EXAMPLE directories are given, `validate --static` of each and
# `fmt -check` of examples/. Exits non-zero when a step fails, naming it.
#
# `make demo` runs it on examples/testbed with VALIDATE_FLAGS=--skip-traffic (namespace hosts:
# the Debian kernel's soft-RoCE moves no RDMA traffic between namespaces); `make demo-vm` runs it
# inside the VM testbed (testbed/vm, section demo) on examples/vm-testbed with every validate
# stage, the traffic test included.
#
# Environment: BIN (fabctl binary, default bin/fabctl), YANG (a YANG directory for the emulators
# and gNMI targets; used when it exists), VALIDATE_FLAGS (extra flags for the last validate),
# ETH_FAULT (a `fabctl testbed fault` KIND and ARGS, e.g. "miswire h1:eth1 h3:eth1": injected
# after the clean validate, which must then exit 6 with plan, naming the link's ends, and injected
# again to heal (a miswire swaps back; link-down is healed by link-up), after which validate must
# pass; it needs Debian's lldpd, which the demo installs with apt-get, saying so, when missing),
# FABCTL_TESTBED_PASSWORD (generated when unset, never printed). Plan/apply state goes to a
# temporary --state-dir so the demo leaves nothing behind.
set -uo pipefail

BIN=${BIN:-bin/fabctl}
YANG=${YANG:-}
read -r -a VFLAGS <<<"${VALIDATE_FLAGS:-}"
if [[ $# -lt 1 ]]; then
	echo "usage: testbed/demo.sh SPEC [OTHER_EXAMPLE...]" >&2
	exit 1
fi
SPEC=$1
shift
if [[ $(id -u) -ne 0 ]]; then
	echo "the demo needs root: the testbed creates network namespaces and veth pairs (run it as root)"
	exit 1
fi

# lldpd: the testbed's LLDP agents (docs/testbed.md#ethernet-cabling-and-lldp). Never installed
# silently: said on screen, and explained when it cannot be.
if [[ -n ${ETH_FAULT:-} ]] && ! command -v lldpd >/dev/null 2>&1; then
	echo "demo: the Ethernet fault step needs Debian's lldpd (the testbed runs one per switch and host"
	echo "  namespace); installing it now: apt-get install -y lldpd"
	if ! { apt-get install -y lldpd >/dev/null 2>&1 || { apt-get update >/dev/null 2>&1 && apt-get install -y lldpd >/dev/null 2>&1; }; }; then
		echo "demo: apt-get could not install lldpd; install it (apt-get install lldpd) or run without the"
		echo "  fault step (ETH_FAULT= make demo)"
		exit 1
	fi
fi

start=$(date +%s)
if [[ -z ${FABCTL_TESTBED_PASSWORD:-} ]]; then
	FABCTL_TESTBED_PASSWORD="$(head -c 18 /dev/urandom | base64 | tr -d '/+=')"
fi
export FABCTL_TESTBED_PASSWORD
state="$(mktemp -d)"
up=0
cleanup() {
	if [[ $up -eq 1 ]]; then
		echo
		echo "== $BIN testbed down $SPEC"
		"$BIN" testbed down --no-color "$SPEC" || echo "demo: testbed down FAILED"
	fi
	rm -rf "$state"
}
trap cleanup EXIT

results=()
# step WANT NAME CMD...: runs CMD, records its time, stops the demo when its exit code is not WANT.
step() {
	local want=$1 name=$2
	shift 2
	echo
	echo "== $name"
	local t0 rc ms secs
	t0=$(date +%s%N)
	"$@"
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	secs=$(printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100)))
	if [[ $rc -ne $want ]]; then
		results+=("FAIL  ${secs}s  $name (exit $rc, want $want)")
		echo
		echo "demo: step failed: $name (exit $rc, want $want)"
		printf '  %s\n' "${results[@]}"
		exit 1
	fi
	results+=("ok    ${secs}s  $name")
}

yang=()
if [[ -n $YANG && -d $YANG ]]; then
	yang=(--yang-dir "$YANG")
elif [[ -n $YANG ]]; then
	echo "demo: no YANG models in $YANG: the emulators check configurations with their built-in rules only,"
	echo "  not against the vendors' models (README, \"Reference material beside the clone\", says where they come from)"
fi
# heal_of KIND ARGS...: the fault that undoes it.
heal_of() {
	case $1 in
	link-down) echo "link-up ${*:2}" ;;
	speed) echo "speed $2 10G" ;;
	*) echo "$*" ;; # miswire: the same swap puts the cables back
	esac
}
# lldp_heard: every host namespace's lldpd hears a neighbour (a NIC apply just brought up is heard
# within about 2 s at the testbed's 500 ms LLDP interval), 15 s at most.
lldp_heard() {
	local d=$SPEC sock n=0 deadline=$((SECONDS + 15))
	[[ -f $SPEC ]] && d=$(dirname "$SPEC")
	for sock in $(grep -o '"/run/lldpd\.netns-[^"]*\.socket"' "$d/.fabctl/testbed/testbed.json" | tr -d '"'); do
		n=$((n + 1))
		until lldpcli -u "$sock" -f keyvalue show neighbors | grep -q '\.chassis\.name='; do
			if ((SECONDS > deadline)); then
				echo "no LLDP neighbour heard on $sock within 15s"
				return 1
			fi
			sleep 0.2
		done
	done
	if ((n == 0)); then
		echo "the testbed runs no lldpd (not installed): LLDP is not read"
	else
		# and two transmit intervals more, for the switch side to hear the host
		sleep 1
		echo "every host ($n) hears its switch port over LLDP"
	fi
}
step 0 "$BIN testbed up ${yang[*]:+${yang[*]} }$SPEC" "$BIN" testbed up --no-color "${yang[@]}" "$SPEC"
up=1
step 0 "$BIN validate --static $SPEC" "$BIN" validate --static --no-color "$SPEC"
step 2 "$BIN plan $SPEC  (changes expected: exit 2)" "$BIN" plan --detailed-exitcode --no-color --state-dir "$state" "$SPEC"
step 0 "$BIN apply -auto-approve $SPEC" "$BIN" apply -auto-approve --no-color --state-dir "$state" "$SPEC"
step 0 "LLDP: the NICs apply brought up heard by their switch ports (lldpd, 500ms interval)" lldp_heard
step 0 "$BIN plan --detailed-exitcode $SPEC  (no changes: exit 0)" "$BIN" plan --detailed-exitcode --no-color --state-dir "$state" "$SPEC"
step 0 "$BIN validate ${VFLAGS[*]:+${VFLAGS[*]} }$SPEC" "$BIN" validate --no-color "${VFLAGS[@]}" "$SPEC"
if [[ -n ${ETH_FAULT:-} ]]; then
	read -r -a fault <<<"$ETH_FAULT"
	read -r -a heal <<<"$(heal_of "${fault[@]}")"
	step 0 "$BIN testbed fault $SPEC ${fault[*]}  (an Ethernet fault, on the real veths)" "$BIN" testbed fault --no-color "$SPEC" "${fault[@]}"
	step 6 "$BIN validate ${VFLAGS[*]:+${VFLAGS[*]} }$SPEC  (the fault caught by port: exit 6)" "$BIN" validate --no-color "${VFLAGS[@]}" "$SPEC"
	step 6 "$BIN plan --detailed-exitcode $SPEC  (no change fixes a cable: exit 6)" "$BIN" plan --detailed-exitcode --no-color --state-dir "$state" "$SPEC"
	step 0 "$BIN testbed fault $SPEC ${heal[*]}  (healed)" "$BIN" testbed fault --no-color "$SPEC" "${heal[@]}"
	step 0 "$BIN validate ${VFLAGS[*]:+${VFLAGS[*]} }$SPEC  (clean again)" "$BIN" validate --no-color "${VFLAGS[@]}" "$SPEC"
fi
if [[ $# -gt 0 ]]; then
	others=0
	for d in "$@"; do
		if ! out="$("$BIN" validate --static --no-color "$d" 2>&1)"; then
			echo "$out"
			others=1
		fi
	done
	# shellcheck disable=SC2016 # expanded by the inner bash
	step 0 "$BIN validate --static (the other examples) and fmt -check" \
		bash -c 'test "$1" -eq 0 && "$2" fmt -check -recursive examples && echo "$3 example specs valid and formatted"' \
		_ "$others" "$BIN" "$(($# + 1))"
fi
echo
echo "== summary"
"$BIN" testbed status --no-color "$SPEC" | sed 's/^/  /'
echo
printf '  %s\n' "${results[@]}"
echo
faulted=""
if [[ -n ${ETH_FAULT:-} ]]; then
	faulted=", an Ethernet fault ($ETH_FAULT) caught by port and healed,"
fi
echo "demo: ok: $SPEC was planned, applied, re-planned clean and validated$faulted in $(($(date +%s) - start))s (settings a veth cannot have are listed as not expressible above)"
