#!/bin/bash
# Harness check: the runner goes on after a timed-out section; the environment is as documented.
. "$FABTB_SHARE/sections/lib.sh"
fab_check "FABTB_SECTION=$FABTB_SECTION" test "$FABTB_SECTION" = f-after
fab_check "cwd is FABTB_RESULTS" test "$PWD" = "$FABTB_RESULTS"
fab_check "FABCTL runs" "$FABCTL" version
fab_check "FABTB_TMP is a directory" test -d "$FABTB_TMP"
fab_check "FABTB_GUEST=1" test "$FABTB_GUEST" = 1
echo "artifact" >"$FABTB_RESULTS/artifact.txt"
