#!/bin/bash
. "$FABTB_SHARE/sections/lib.sh"
fab_skip "harness: a deliberate skip"
