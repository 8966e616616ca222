#!/usr/bin/env bash
# The InfiniBand demo (make demo-ib; root): the main job against a simulated InfiniBand subnet
# (ibsim + the real opensm and infiniband-diags under libumad2sim, from Debian's ibsim-utils, opensm
# and infiniband-diags): testbed up, validate --static, plan (must show changes: opensm runs at its
# defaults), apply, validate (the fabric read back over MADs must match), plan again (must be clean),
# faults injected with fabctl testbed fault (a cable down, two cables swapped: validate and plan
# exit 6 naming the switch ports; a P_Key cleared from a switch port behind opensm's back and a
# member dropped from opensm's file: plan shows the restore, apply makes it), testbed down always.
#
#   BIN=bin/fabctl testbed/demo-ib.sh examples/ib-testbed
set -euo pipefail

spec=${1:-examples/ib-testbed}
bin=${BIN:-bin/fabctl}
dir="${spec}/.fabctl/testbed"
step() { printf '\n=== %s\n' "$*"; }
fail() { echo "demo-ib: $*" >&2; exit 1; }

cleanup() { step "testbed down"; "$bin" testbed down "$spec" || true; rm -rf "${spec}/.fabctl"; }
trap cleanup EXIT

step "testbed up $spec"
"$bin" testbed up "$spec"

step "validate --static"
"$bin" validate --static "$spec"

step "plan (opensm runs at its defaults: fabctl's partitions and QoS must show as changes)"
set +e
"$bin" plan --detailed-exitcode "$spec"
rc=$?
set -e
[[ $rc == 2 ]] || fail "plan: want exit 2 (changes), got $rc"

step "apply"
"$bin" apply -auto-approve "$spec"

# apply signals opensm and returns once a re-read of the fabric shows it programmed.
step "validate (the fabric read back over MADs)"
"$bin" validate --skip-traffic "$spec" || fail "validate: the fabric does not match the spec after apply"

step "plan again (must be clean)"
"$bin" plan --detailed-exitcode "$spec"

# validate reads the fabric at once; a fault may take opensm's next sweep to show everywhere.
# validate_exits CODE TEXT: validate exits CODE naming TEXT (opensm applies a change at its next
# heavy sweep, a second or so later).
validate_exits() {
	local want=$1 text=$2 out rc
	for i in 1 2 3 4 5; do
		set +e
		out=$("$bin" validate --skip-traffic "$spec")
		rc=$?
		set -e
		if [[ $rc == "$want" ]] && grep -qF "$text" <<<"$out"; then echo "$out"; return 0; fi
		sleep 1
	done
	echo "$out"
	fail "validate: want exit $want naming '$text', got $rc"
}

# plan_exits CODE TEXT: plan --detailed-exitcode exits CODE naming TEXT (6: the fabric does not
# match the spec and no change fixes it; 2: changes apply makes).
plan_exits() {
	local want=$1 text=$2 out rc
	set +e
	out=$("$bin" plan --detailed-exitcode "$spec")
	rc=$?
	set -e
	echo "$out"
	[[ $rc == "$want" ]] && grep -qF "$text" <<<"$out" || fail "plan: want exit $want naming '$text', got $rc"
}

step "fault: the cable at leaf1 port 2 goes down (no change fixes it: exit 6)"
"$bin" testbed fault "$spec" link-down leaf1:2
validate_exits 6 'leaf1 port 2: no link to cn01:ib0'
plan_exits 6 'leaf1 port 2: no link to cn01:ib0'
"$bin" testbed fault "$spec" link-up leaf1:2
validate_exits 0 'live fabric valid'

step "fault: cn01's and cn03's cables swapped"
"$bin" testbed fault "$spec" miswire cn01:ib0 cn03:ib0
validate_exits 6 'leaf1 port 2: cabled to cn03:ib0'
"$bin" testbed fault "$spec" miswire cn01:ib0 cn03:ib0
validate_exits 0 'live fabric valid'

step "fault: the P_Key of storage cleared from leaf2 port 2 behind opensm's back; apply restores it"
"$bin" testbed fault "$spec" pkey-remove leaf2:2 storage
validate_exits 1 'leaf2 port 2: lacks P_Key 0x0002 of partition storage'
plan_exits 2 'ib/leaf2/2/pkey/storage'
"$bin" apply -auto-approve "$spec"
"$bin" validate --skip-traffic "$spec" || fail "validate after apply restored the P_Key"

step "fault: cn04 dropped from partition storage in opensm's file; apply puts it back"
"$bin" testbed fault "$spec" partition-drop storage cn04:ib0
validate_exits 1 'cn04:ib0: lacks P_Key 0x0002 of partition storage'
"$bin" apply -auto-approve "$spec"
"$bin" validate --skip-traffic "$spec" || fail "validate after apply restored the partition"

step "demo-ib passed"
