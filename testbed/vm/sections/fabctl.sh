#!/bin/bash
# fabctl: the static fabctl binary from the share runs in the guest and checks a spec.
# fabtb-timeout: 600
# fabtb-file: examples/testbed
. "$FABTB_SHARE/sections/lib.sh"

fab_check "fabctl is in the share" test -x "$FABCTL"
fab_run "$FABCTL" version || fab_fail "fabctl version"
fab_run "$FABCTL" validate --static --no-color "$FABTB_FILES/examples/testbed" || fab_fail "fabctl validate --static"
fab_log "validate --static --json"
"$FABCTL" validate --static --json "$FABTB_FILES/examples/testbed" >"$FABTB_RESULTS/validate.json" ||
	fab_fail "fabctl validate --static --json (exit $?)"
fab_log "done"
fab_check "validate --json says the spec is valid" grep -q '"valid": true' "$FABTB_RESULTS/validate.json"
exit 0
