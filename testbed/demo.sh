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
step 0 "$BIN testbed up ${yang[*]:+${yang[*]} }$SPEC" "$BIN" testbed up --no-color "${yang[@]}" "$SPEC"
up=1
step 0 "$BIN validate --static $SPEC" "$BIN" validate --static --no-color "$SPEC"
step 2 "$BIN plan $SPEC  (changes expected: exit 2)" "$BIN" plan --detailed-exitcode --no-color --state-dir "$state" "$SPEC"
step 0 "$BIN apply -auto-approve $SPEC" "$BIN" apply -auto-approve --no-color --state-dir "$state" "$SPEC"
step 0 "$BIN plan --detailed-exitcode $SPEC  (no changes: exit 0)" "$BIN" plan --detailed-exitcode --no-color --state-dir "$state" "$SPEC"
step 0 "$BIN validate ${VFLAGS[*]:+${VFLAGS[*]} }$SPEC" "$BIN" validate --no-color "${VFLAGS[@]}" "$SPEC"
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
echo "demo: ok: $SPEC was planned, applied, re-planned clean and validated in $(($(date +%s) - start))s (settings a veth cannot have are listed as not expressible above)"
