#!/bin/bash
# telemetry: what the host exporter reads from the kernel, with the kernel's own code paths:
#  - a DCB change made with iproute2's dcb on a fabdcb NIC (the kernel's DCB netlink) reaches the
#    agent's DCB watch and shows on the agent's /metrics as fabctl_nic_dcb_drift 1, and 0 again when
#    the setting is put back (telemetry TestVMDCBDrift);
#  - the RDMA netlink QP dump (RDMA_NLDEV_CMD_RES_QP_GET, drivers/infiniband/core/nldev.c) of a
#    Soft-RoCE device counts what `rdma resource show qp` lists (telemetry TestVMQPDump).
# fabtb-timeout: 600
# fabtb-gotest: ./telemetry
. "$FABTB_SHARE/sections/lib.sh"

fab_run modprobe fabdcb count=1 || fab_fail "modprobe fabdcb"
ip link set fabdcb0 up || fab_fail "ip link set fabdcb0 up"
export FABCTL_FABDCB=fabdcb0
fab_rxe_pair tla tlb 198.18.20.1 198.18.20.2 || fab_fail "rxe pair"
export FABCTL_TELEMETRY_RXE=rxe_tla
fab_run rdma resource show qp
fab_run "$FABTB_BIN/telemetry.test" -test.v -test.count=1 -test.run '^TestVM' || fab_fail "telemetry VM tests"
