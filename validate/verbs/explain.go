package verbs

import (
	"fmt"
	"syscall"
)

// Work completion statuses (enum ibv_wc_status) that have a likely cause
// worth telling the user; the C side already names the status.
const (
	wcLocLenErr    = 1
	wcLocProtErr   = 4
	wcFlushErr     = 5
	wcRemInvReqErr = 9
	wcRemAccessErr = 10
	wcRemOpErr     = 11
	wcRetryExcErr  = 12
	wcRNRRetryExc  = 13
)

// WCHint explains a failed work completion's likely cause.
func WCHint(status int, pathMTU int) string {
	switch status {
	case wcRetryExcErr:
		return "the peer never acknowledged: packets are lost on the way. The peer is not reachable over the RDMA path " +
			"(routing, a firewall dropping UDP 4791, a switch dropping the class), the GID types or MTUs differ, or the peer process died"
	case wcRNRRetryExc:
		return "receiver not ready: the peer had no receive buffer posted (a SEND the peer did not expect)"
	case wcRemInvReqErr:
		return fmt.Sprintf("the peer rejected the request: most often a path MTU (%d) above the peer's active MTU, or a message larger than its receive buffer", pathMTU)
	case wcRemAccessErr:
		return "the peer refused the memory access: wrong rkey or address (a stale exchange)"
	case wcRemOpErr:
		return "the peer could not complete the operation (its QP failed)"
	case wcLocLenErr, wcLocProtErr:
		return "a local buffer or length error (a fabctl bug: please report it)"
	case wcFlushErr:
		return "flushed: the QP had already failed (see the first error)"
	}
	return ""
}

// RTRHint explains why moving a QP to RTR failed.
func RTRHint(errno syscall.Errno, local *Endpoint, peer *Endpoint, mtu int, tclass int) string {
	switch errno {
	case syscall.ETIMEDOUT, syscall.EHOSTUNREACH, syscall.ENETUNREACH, syscall.EADDRNOTAVAIL, syscall.ENODATA:
		return fmt.Sprintf("RTR timeout: the kernel could not resolve the peer's MAC address for GID %s: no route or no ARP/ND entry "+
			"for that address on %s's netdev (check IP reachability from the RDMA interface: ping -I <netdev> <peer address>)", peer.GID, local.Device)
	case syscall.EINVAL:
		return fmt.Sprintf("%s refused the connection attributes (path MTU %d, GID index %d, traffic class %d, peer QPN %#x)",
			local.Device, mtu, local.GIDIndex, tclass, peer.QPs[0].QPN)
	}
	return ""
}
