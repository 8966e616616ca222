#!/bin/bash
. "$FABTB_SHARE/sections/lib.sh"
echo "some output"
fab_fail "harness: a deliberate failure"
