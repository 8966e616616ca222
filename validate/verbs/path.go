package verbs

import (
	"bytes"
	"fmt"
)

// MTUEnum is the IBV_MTU_* value of an RDMA MTU in bytes (1 = 256 ..
// 5 = 4096), or 0 when n is not one.
func MTUEnum(n int) int {
	for e := 1; e <= 5; e++ {
		if 128<<e == n {
			return e
		}
	}
	return 0
}

// MTUBytes is the size in bytes of an IBV_MTU_* value (0 when invalid).
func MTUBytes(e int) int {
	if e < 1 || e > 5 {
		return 0
	}
	return 128 << e
}

// RoCEMTUFor is the active RoCE MTU a netdev MTU gives: the largest RDMA
// MTU that fits in netdevMTU minus the RoCEv2 headers (96 bytes, as the
// kernel's rdma_mtu_from_attr / iboe_get_mtu compute it).
func RoCEMTUFor(netdevMTU int) int {
	for b := 4096; b >= 256; b /= 2 {
		if netdevMTU-96 >= b {
			return b
		}
	}
	return 0
}

// PathMTU settles the path MTU of a connection from both sides' active
// MTUs and the MTU the test requires (0: none). With a requirement,
// either side below it is an error that says which side and why; without
// one, the smaller active MTU is used.
func PathMTU(localDev string, local int, peerDev string, remote int, want int) (int, error) {
	if local == 0 || remote == 0 {
		return 0, fmt.Errorf("active MTU unknown (%s %d, peer %s %d)", localDev, local, peerDev, remote)
	}
	if want != 0 {
		for _, s := range []struct {
			dev string
			mtu int
		}{{localDev, local}, {peerDev, remote}} {
			if s.mtu < want {
				return 0, fmt.Errorf("MTU mismatch: the test requires a path MTU of %d but %s's active MTU is %d "+
					"(RoCE: the netdev MTU must be at least %d for %d; check the interface MTU on both hosts)",
					want, s.dev, s.mtu, want+96, want)
			}
		}
		return want, nil
	}
	return min(local, remote), nil
}

// LinkLayer names as ibv_port_attr.link_layer and sysfs give them.
const (
	LinkEthernet   = "Ethernet"
	LinkInfiniBand = "InfiniBand"
)

// AddressVector is the part of ibv_ah_attr a QP's RTR transition needs,
// decided in Go so the InfiniBand (LID) and RoCE (GRH) paths are testable
// without hardware.
type AddressVector struct {
	DLID      uint16
	SL        uint8
	IsGlobal  bool
	DGID      [16]byte
	SGIDIndex uint8
	HopLimit  uint8
	TClass    uint8
	FlowLabel uint32
	Port      uint8
}

// Endpoint is what one side tells the other about itself (the out-of-band
// exchange perftest does with its 108-byte text record).
type Endpoint struct {
	Device    string `json:"device"`
	Port      int    `json:"port"`
	LinkLayer string `json:"link_layer"`
	// Transport is "ib" or "iwarp" (ibv_device.transport_type).
	Transport string `json:"transport"`
	LID       uint16 `json:"lid"`
	GID       GID    `json:"gid"`
	GIDIndex  int    `json:"gid_index"`
	GIDType   string `json:"gid_type"`
	// MTU is the port's active MTU in bytes.
	MTU int `json:"mtu"`
	// QPs are the queue pairs' numbers and initial PSNs, in order.
	QPs []QPInfo `json:"qps"`
	// RKey and Addr name the registered buffer for RDMA WRITE/READ.
	RKey    uint32 `json:"rkey"`
	Addr    uint64 `json:"addr"`
	BufSize uint64 `json:"buf_size"`
	// MaxRdAtomic is how many RDMA READs the side serves at once
	// (ibv_device_attr.max_qp_rd_atom).
	MaxRdAtomic int `json:"max_rd_atomic"`
}

// QPInfo is one queue pair's number and initial packet sequence number.
type QPInfo struct {
	QPN uint32 `json:"qpn"`
	PSN uint32 `json:"psn"`
}

// GID is a 16-byte RDMA global identifier.
type GID [16]byte

// String renders the GID as sysfs does (eight groups of four hex digits).
func (g GID) String() string {
	var b bytes.Buffer
	for i := 0; i < 16; i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%02x%02x", g[i], g[i+1])
	}
	return b.String()
}

// MarshalText renders the GID for JSON.
func (g GID) MarshalText() ([]byte, error) { return []byte(g.String()), nil }

// UnmarshalText parses the sysfs form.
func (g *GID) UnmarshalText(b []byte) error {
	v, err := ParseGID(string(b))
	if err != nil {
		return err
	}
	*g = v
	return nil
}

// ParseGID parses "fe80:0000:...:0001" (eight groups of four hex digits,
// the sysfs form).
func ParseGID(s string) (GID, error) {
	var g GID
	var groups [8]uint16
	n, err := fmt.Sscanf(s, "%4x:%4x:%4x:%4x:%4x:%4x:%4x:%4x",
		&groups[0], &groups[1], &groups[2], &groups[3], &groups[4], &groups[5], &groups[6], &groups[7])
	if err != nil || n != 8 || len(s) != 39 {
		return g, fmt.Errorf("invalid GID %q: want eight groups of four hex digits", s)
	}
	for i, v := range groups {
		g[2*i], g[2*i+1] = byte(v>>8), byte(v)
	}
	return g, nil
}

// IsZero reports whether the GID is all zeroes (an unused table slot).
func (g GID) IsZero() bool { return g == GID{} }

// IsV4Mapped reports whether the GID is an IPv4-mapped address
// (::ffff:a.b.c.d), the GID of an IPv4 address on RoCE.
func (g GID) IsV4Mapped() bool {
	for _, b := range g[:10] {
		if b != 0 {
			return false
		}
	}
	return g[10] == 0xff && g[11] == 0xff
}

// IsLinkLocal reports whether the GID is an IPv6 link-local address
// (fe80::/10), or the default IB subnet prefix fe80::/64.
func (g GID) IsLinkLocal() bool { return g[0] == 0xfe && g[1]&0xc0 == 0x80 }

// subnetPrefix is the upper 64 bits (the IB subnet prefix).
func (g GID) subnetPrefix() [8]byte { return [8]byte(g[:8]) }

// Vector computes the address vector for reaching the peer, as perftest's
// ctx_modify_qp_to_rtr does: on RoCE (Ethernet link layer) the GRH is
// always present (the kernel resolves the peer's MAC from the DGID); on
// InfiniBand the peer is reached by LID with the class's SL, and a GRH is
// added only when the peer is in another subnet (different GID prefix).
func Vector(local, remote *Endpoint, tclass, sl int) (AddressVector, error) {
	av := AddressVector{Port: uint8(local.Port), SL: uint8(sl), HopLimit: 0xff}
	if local.LinkLayer != remote.LinkLayer {
		return av, fmt.Errorf("link layer mismatch: %s port %d is %s but the peer's %s is %s",
			local.Device, local.Port, local.LinkLayer, remote.Device, remote.LinkLayer)
	}
	if tclass > 0 {
		av.TClass = uint8(tclass)
	}
	switch local.LinkLayer {
	case LinkInfiniBand:
		if remote.LID == 0 || remote.LID >= 0xc000 {
			return av, fmt.Errorf("%s port %d has no unicast LID (%#x): is a subnet manager running?", remote.Device, remote.Port, remote.LID)
		}
		av.DLID = remote.LID
		if !remote.GID.IsZero() && local.GID.subnetPrefix() != remote.GID.subnetPrefix() {
			av.IsGlobal = true
		}
	case LinkEthernet:
		if remote.GID.IsZero() {
			return av, fmt.Errorf("the peer %s sent no GID; RoCE needs one", remote.Device)
		}
		av.IsGlobal = true
	default:
		return av, fmt.Errorf("unknown link layer %q on %s", local.LinkLayer, local.Device)
	}
	if av.IsGlobal {
		av.DGID = remote.GID
		if local.GIDIndex < 0 || local.GIDIndex > 255 {
			return av, fmt.Errorf("GID index %d out of range", local.GIDIndex)
		}
		av.SGIDIndex = uint8(local.GIDIndex)
	}
	return av, nil
}

// CheckPeer is the fail-fast check of the exchanged endpoints, before any
// QP changes state: GID types and address families must match (the
// number one failure perftest users report: v1 on one side, v2 on the
// other, fails silently), and an iWARP device needs rdma_cm.
func CheckPeer(local, remote *Endpoint, conn ConnMode) error {
	if local.LinkLayer != remote.LinkLayer {
		return fmt.Errorf("link layer mismatch: %s is %s, the peer's %s is %s", local.Device, local.LinkLayer, remote.Device, remote.LinkLayer)
	}
	if conn == ConnVerbs && (local.Transport == "iwarp" || remote.Transport == "iwarp") {
		return fmt.Errorf("%s/%s: iWARP devices connect only through rdma_cm (use the rdma_cm connection mode)", local.Device, remote.Device)
	}
	if local.LinkLayer != LinkEthernet || conn == ConnCM {
		return nil
	}
	if local.GIDType != remote.GIDType {
		return fmt.Errorf("GID type mismatch: %s uses GID index %d (%s) but the peer %s uses GID index %d (%s); "+
			"both ends must use the same RoCE version (pick the GID index of the same type on both hosts)",
			local.Device, local.GIDIndex, local.GIDType, remote.Device, remote.GIDIndex, remote.GIDType)
	}
	if local.GID.IsV4Mapped() != remote.GID.IsV4Mapped() {
		fam := func(g GID) string {
			if g.IsV4Mapped() {
				return "IPv4"
			}
			return "IPv6"
		}
		return fmt.Errorf("GID address family mismatch: %s uses %s GID %s but the peer %s uses %s GID %s",
			local.Device, fam(local.GID), local.GID, remote.Device, fam(remote.GID), remote.GID)
	}
	return nil
}
