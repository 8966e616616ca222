package lint

// RoCE and InfiniBand MTU arithmetic: the IB MTUs, RoCE header sizes, the
// MTU reserve NIC drivers subtract, and the address family of a NIC.

import "github.com/fabctl/fabctl/spec"

// IB MTUs (enum ibv_mtu, rdma-core libibverbs/verbs.h): the only RDMA path
// MTUs RoCE and InfiniBand know.
var ibMTUs = []int{256, 512, 1024, 2048, 4096}

func ibMTUValid(m int) bool {
	for _, v := range ibMTUs {
		if v == m {
			return true
		}
	}
	return false
}

// RoCE header sizes (IBTA Annex A16/A17).
const (
	ipv4Header   = 20
	ipv6Header   = 40
	udpHeader    = 8
	grhHeader    = 40 // RoCEv1 global route header (an IPv6-shaped header)
	bthHeader    = 12
	extHeaderMax = 16 // largest extended transport header a data packet carries (RETH 16)
	icrcTrailer  = 4
	// kernelRoCEReserve is what iboe_get_mtu() (include/rdma/ib_addr.h;
	// mlx5, bnxt_re, ...) subtracts from the netdev MTU before picking the
	// active RDMA MTU: GRH 40 + UDP 8 + BTH 12 + XRC 4 + AtomicETH 28 + ICRC 4.
	kernelRoCEReserve = 96
	// rxeRoCEReserve is Soft-RoCE's RXE_MAX_HDR_LENGTH (drivers/infiniband/sw/rxe/rxe_hdr.h,
	// eth_mtu_int_to_enum in rxe_param.h).
	rxeRoCEReserve = 80
)

// roceWireOverhead is the bytes an RDMA packet of a full path MTU adds in
// the IP MTU: IPv4/IPv6 + UDP + BTH + extended header + ICRC for RoCEv2,
// GRH + BTH + extended header + ICRC for RoCEv1.
func roceWireOverhead(t spec.Transport, ipv6 bool) int {
	if t == spec.RoCEv1 {
		return grhHeader + bthHeader + extHeaderMax + icrcTrailer
	}
	ip := ipv4Header
	if ipv6 {
		ip = ipv6Header
	}
	return ip + udpHeader + bthHeader + extHeaderMax + icrcTrailer
}

// roceReserve is what the NIC's driver subtracts from the netdev MTU before
// choosing active_mtu, and the function that does it.
func roceReserve(model string) (int, string) {
	if model == "rxe" {
		return rxeRoCEReserve, "Soft-RoCE (eth_mtu_int_to_enum reserves RXE_MAX_HDR_LENGTH = 80 bytes)"
	}
	return kernelRoCEReserve, "the kernel (iboe_get_mtu reserves 96 bytes for GRH, UDP, BTH, XRC, AtomicETH and ICRC)"
}

// activeRoCEMTU is the RDMA MTU the driver picks for a netdev MTU: the
// largest IB MTU that is at most netdevMTU - reserve, or 0 when none fits.
func activeRoCEMTU(netdevMTU, reserve int) int {
	best := 0
	for _, m := range ibMTUs {
		if m <= netdevMTU-reserve {
			best = m
		}
	}
	return best
}

// nicIPv6 reports whether RoCEv2 on the NIC runs over IPv6: it has IPv6
// addresses and no IPv4 ones.
func nicIPv6(n *spec.NIC) bool {
	v6 := false
	for _, p := range n.Addresses {
		if p.Addr().Is4() || p.Addr().Is4In6() {
			return false
		}
		v6 = true
	}
	return v6
}
