#!/usr/bin/env bash
# The InfiniBand demo (make demo-ib; root): the main job against a simulated InfiniBand subnet
# (ibsim + the real opensm and infiniband-diags under libumad2sim, from Debian's ibsim-utils, opensm
# and infiniband-diags): testbed up, validate --static, plan (must show changes: opensm runs at its
# defaults), apply, validate (the fabric read back over MADs must match), plan again (must be clean),
# faults injected with fabctl testbed fault (a cable down, two cables swapped: validate must fail
# naming the switch ports, plan must list them), testbed down always.
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
validate_fails() {
	local want=$1 out rc
	for i in 1 2 3 4 5; do
		set +e
		out=$("$bin" validate --skip-traffic "$spec")
		rc=$?
		set -e
		if [[ $rc == 1 ]] && grep -q "$want" <<<"$out"; then echo "$out"; return 0; fi
		sleep 1
	done
	echo "$out"
	fail "validate: want exit 1 naming '$want', got $rc"
}

step "fault: the cable at leaf1 port 2 goes down"
"$bin" testbed fault "$spec" link-down leaf1:2
validate_fails 'leaf1 port 2: no link to cn01'
"$bin" plan "$spec" | grep -q 'leaf1 port 2: no link to cn01' || fail "plan does not list the cable down"
"$bin" testbed fault "$spec" link-up leaf1:2

step "fault: cn01's and cn03's cables swapped"
"$bin" testbed fault "$spec" miswire cn01:ib0 cn03:ib0
validate_fails 'leaf1 port 2: cabled to cn03'
"$bin" testbed fault "$spec" miswire cn01:ib0 cn03:ib0

step "fault: cn04 dropped from partition storage in opensm's file; apply puts it back"
"$bin" testbed fault "$spec" partition-drop storage cn04:ib0
validate_fails 'cn04:ib0 (cn04-mlx5_0 port 1): P_Key 0x0002 of partition storage'
"$bin" apply -auto-approve "$spec"
"$bin" validate --skip-traffic "$spec" || fail "validate after apply restored the partition"

step "demo-ib passed"
