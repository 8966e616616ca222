#!/bin/bash
# fabtb-timeout: 5
. "$FABTB_SHARE/sections/lib.sh"
echo "sleeping past the timeout"
sleep 600
