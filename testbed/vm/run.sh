#!/usr/bin/env bash
# Runs VM testbed sections: testbed/vm/run.sh [SECTION...]   (none: all; as root when the image needs
# building). The same as `FABTB_SECTIONS="..." make e2e-vm`; FABTB_VERBOSE=1 streams the serial console.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/usr/local/go/bin:${PATH}"
FABCTL_E2E_VM=1 FABTB_SECTIONS="$*" exec go test -count=1 -v -timeout "${FABTB_GO_TIMEOUT:-60m}" -run '^TestVM$' ./testbed/vm/
