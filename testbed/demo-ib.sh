#!/usr/bin/env bash
# The InfiniBand demo (make demo-ib; root): the main job against a simulated InfiniBand subnet
# (ibsim + the real opensm and infiniband-diags under libumad2sim, from Debian's ibsim-utils, opensm
# and infiniband-diags): testbed up, validate --static, plan (must show changes: opensm runs at its
# defaults), apply, validate (the fabric read back over MADs must match), plan again (must be clean),
# a fault (a cable taken down in ibsim: validate must fail naming the switch port), testbed down
# always.
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

# apply signals opensm; the heavy sweep that programs the ports follows within a second or two.
step "validate (the fabric read back over MADs)"
ok=
for i in 1 2 3 4 5; do
	if "$bin" validate --skip-traffic "$spec"; then ok=1; break; fi
	sleep 1
done
[[ -n $ok ]] || fail "validate: the fabric does not match the spec after apply"

step "plan again (must be clean)"
"$bin" plan --detailed-exitcode "$spec"

step "fault: the cable at leaf1 port 2 goes down (ibsim console Unlink)"
echo 'Unlink "leaf1"[2]' >"${dir}/ibsim/console"
sleep 1
set +e
out=$("$bin" validate --skip-traffic "$spec")
rc=$?
set -e
echo "$out"
[[ $rc == 1 ]] || fail "validate with a cable down: want exit 1, got $rc"
grep -q 'leaf1 port 2: no link to cn01' <<<"$out" || fail "validate did not name leaf1 port 2"
echo 'ReLink "leaf1"[2]' >"${dir}/ibsim/console"

step "demo-ib passed"
