package lint

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"

	"github.com/fabctl/fabctl/spec"
)

const bufReference = "IEEE 802.1Qbb delay model as in Cisco, \"Priority Flow Control: Build Reliable Layer 2 Infrastructure\" " +
	"(http://www.cisco.com/en/US/prod/collateral/switches/ps9441/ps9670/white_paper_c11-542809_ns783_Networking_Solutions_White_Paper.html); " +
	"worked numbers: https://www.besthub.dev/articles/how-to-compute-headroom-for-lossless-ethernet-links-part-2-6f1dc894e989; " +
	"SONiC dynamic headroom calculation (sonic-net/SONiC doc/qos/dynamically-headroom-calculation.md); " +
	"Cisco Nexus 9000 QoS guide, \"Configuring Priority Flow Control\" (pause buffer mandatory above 100 m)"

func bufferRules() []Rule {
	return []Rule{
		{
			ID:    "BUF-1",
			Title: "PFC headroom per lossless priority group covers the in-flight data of the port's speed, cable and MTU",
			Rationale: `After a switch sends PAUSE for a lossless priority, data keeps arriving until the
PAUSE has crossed the cable, the peer has finished the frame it was sending and reacted, and the last
bits have crossed the cable back. The ingress buffer reserved for that (headroom, per lossless priority
group) must absorb all of it or the "lossless" class drops. fabctl computes the requirement with the IEEE
802.1Qbb delay model: largest frame being received (IP MTU + 18 bytes of Ethernet header and FCS + 4 per
VLAN tag) + the PFC frame (672 bit times = 84 bytes) + interface delay (122,880 bit times at 100G, taken as
1228.8 ns at every speed) + twice the cable delay (5 ns/m) + the peer's response time (201,728 bit times
at 100G, taken as 2017.28 ns) + the largest frame the peer is sending; every time is converted to bytes
at the link speed. When a switch declares buffer { headroom = ... }, a value below the requirement of any
lossless port is an error. Links without cable_length are assumed to be 5 m (the NOS default cable
length) and warned about when headroom is declared, since the check then rests on a guess. Cables longer
than 100 m are warned about: headroom grows with length, NX-OS requires an explicit pause buffer above
100 m and SONiC's traditional buffer profiles stop at 300 m.`,
			Reference: bufReference,
			Check:     checkHeadroom,
		},
		{
			ID:    "BUF-2",
			Title: "Headroom of all lossless priority groups fits in the switch buffer",
			Rationale: `Headroom is reserved per port and per lossless priority group, whether or not the
port is congested, and comes out of the same packet buffer as the shared pool. On shallow-buffer ASICs
(9 to 64 MB) a few hundred kilobytes per 400G port and a second lossless priority quickly use up the
buffer: Microsoft found headroom for long cables left room for only two lossless classes. For switches
that declare buffer { total = ... }, fabctl sums, over every lossless port and every lossless priority,
the larger of the declared headroom and the BUF-1 requirement (rounded up to cell_size when given), and
warns when the sum exceeds total minus reserved (the shared-pool floor).`,
			Reference: "Guo et al., \"RDMA over Commodity Ethernet at Scale\", SIGCOMM 2016 (shallow buffers, headroom limits lossless classes); " +
				"Cumulus Linux RoCE: RoCE buffer configuration is ASIC-specific (https://docs.nvidia.com/networking-ethernet-software/cumulus-linux-510/Layer-1-and-Switch-Ports/Quality-of-Service/RDMA-over-Converged-Ethernet-RoCE); " +
				"SONiC shared headroom pool (sonic-net/SONiC doc/qos/dynamically-headroom-calculation.md); per-PG requirement as in BUF-1",
			Check: checkBufferBudget,
		},
	}
}

// Constants of the 802.1Qbb delay model.
const (
	l2Overhead   = 18  // Ethernet header (14) + FCS (4) on top of the IP MTU
	vlanTagBytes = 4   // one 802.1Q tag
	pfcFrameBits = 672 // 64-byte PFC frame + preamble/SFD + inter-frame gap

	interfaceDelayPS = 1_228_800 // 122,880 bit times at 100G
	peerResponsePS   = 2_017_280 // 201,728 bit times at 100G
	cablePSPerMetre  = 5_000     // 5 ns/m propagation

	// DefaultCableLength is what NOS buffer models assume for a port whose
	// cable length is not configured (SONiC CABLE_LENGTH default 5m).
	DefaultCableLength spec.Length = 5
	// LongCable is the length above which NX-OS requires an explicit pause
	// buffer configuration.
	LongCable spec.Length = 100
)

// HeadroomBreakdown is the PFC headroom one lossless priority group of a
// port needs, term by term, in bytes.
type HeadroomBreakdown struct {
	Speed    spec.BitRate
	Cable    spec.Length
	MTU      int // IP MTU
	VLANTags int

	MaxFrameRx     spec.Bytes // frame being received when the XOFF threshold is crossed
	PauseFrame     spec.Bytes // the PFC frame itself (672 bit times)
	InterfaceDelay spec.Bytes // MAC/PHY/pipeline delay (122,880 BT at 100G, as time)
	CableDelay     spec.Bytes // PAUSE to the peer and data back: 2 x 5 ns/m x length
	PeerResponse   spec.Bytes // peer reaction (201,728 BT at 100G, as time)
	MaxFrameTx     spec.Bytes // frame the peer is sending when PAUSE arrives
	Total          spec.Bytes
}

// Headroom computes the PFC headroom a lossless priority group needs on a
// port with the IEEE 802.1Qbb delay model (Cisco PFC white paper): a
// maximum frame received, the PFC frame, the interface delay, twice the
// cable delay, the peer's response time and a maximum frame sent. Delays are
// times converted to bytes at speed and rounded up.
func Headroom(speed spec.BitRate, cable spec.Length, mtu int, vlanTags int) HeadroomBreakdown {
	frame := spec.Bytes(mtu + l2Overhead + vlanTagBytes*vlanTags)
	cablePS := 2 * int64(math.Round(float64(cable)*cablePSPerMetre))
	h := HeadroomBreakdown{
		Speed: speed, Cable: cable, MTU: mtu, VLANTags: vlanTags,
		MaxFrameRx:     frame,
		PauseFrame:     pfcFrameBits / 8,
		InterfaceDelay: bytesInFlight(interfaceDelayPS, speed),
		CableDelay:     bytesInFlight(cablePS, speed),
		PeerResponse:   bytesInFlight(peerResponsePS, speed),
		MaxFrameTx:     frame,
	}
	h.Total = h.MaxFrameRx + h.PauseFrame + h.InterfaceDelay + h.CableDelay + h.PeerResponse + h.MaxFrameTx
	return h
}

// bytesInFlight is how many bytes a link of the given speed carries in ps
// picoseconds, rounded up (128-bit arithmetic: no float rounding, no
// overflow for any length and speed the spec accepts).
func bytesInFlight(ps int64, speed spec.BitRate) spec.Bytes {
	if ps <= 0 || speed <= 0 {
		return 0
	}
	const psBitsPerByte = 8 * 1_000_000_000_000 // ps per second x bits per byte
	hi, lo := bits.Mul64(uint64(ps), uint64(speed))
	if hi >= psBitsPerByte {
		return spec.Bytes(math.MaxInt64)
	}
	q, r := bits.Div64(hi, lo, psBitsPerByte)
	if r != 0 {
		q++
	}
	return spec.Bytes(q)
}

// Terms renders the sum, e.g. "max frame rx 9018 B + PFC frame 84 B + ...".
func (h HeadroomBreakdown) Terms() string {
	b := func(v spec.Bytes) string { return strconv.FormatInt(int64(v), 10) + " B" }
	vlan := ""
	if h.VLANTags > 0 {
		vlan = fmt.Sprintf(" + %d x 4 VLAN", h.VLANTags)
	}
	return fmt.Sprintf("max frame rx %s (IP MTU %d + 18 L2%s) + PFC frame %s (672 bit times) + interface delay %s (1228.8 ns at %s) + "+
		"cable %s (2 x %s x 5 ns/m) + peer response %s (2017.28 ns) + max frame tx %s = %s",
		b(h.MaxFrameRx), h.MTU, vlan, b(h.PauseFrame), b(h.InterfaceDelay), h.Speed,
		b(h.CableDelay), h.Cable, b(h.PeerResponse), b(h.MaxFrameTx), b(h.Total))
}

// portHeadroom is the BUF-1 requirement of a lossless port and whether the
// cable length was assumed.
func portHeadroom(s *spec.Spec, lp lossPort) (HeadroomBreakdown, bool) {
	cable, assumed := lp.link.CableLength, false
	if cable <= 0 && !lp.link.Src.Has("cable_length") {
		cable, assumed = DefaultCableLength, true
	}
	return Headroom(lp.link.Speed, cable, s.PortMTU(lp.sw, lp.port), lp.link.VLANTags), assumed
}

type headroomShort struct {
	lp      lossPort
	need    HeadroomBreakdown
	assumed bool
}

func checkHeadroom(c *Context) {
	s := c.Spec
	if !s.Fabric.Transport.IsEthernet() {
		c.NotApplicable("InfiniBand has credit-based flow control, no PFC headroom")
		return
	}
	if !anySwitchBuffer(s, func(b *spec.Buffer) bool { return b.Headroom > 0 }) {
		// Long-cable warnings below still apply; with none, nothing was checked.
		c.NotApplicable("no switch declares buffer.headroom, so there is no headroom to check")
	}
	warned := map[*spec.Link]bool{}
	bySwitch := c.lossless()
	for si, sw := range s.Switches {
		var declared spec.Bytes
		if sw.Buffer != nil {
			declared = sw.Buffer.Headroom
		}
		ports := bySwitch[si]
		var short []headroomShort
		for _, lp := range ports {
			need, assumed := portHeadroom(s, lp)
			l := lp.link
			// Made for a finding only: one per lossless port was 360k
			// slices at 16,384 hosts.
			scopes := func() []spec.LintIgnores { return []spec.LintIgnores{l.Ignore, lp.port.Ignore, sw.Ignore} }
			switch {
			case l.CableLength > LongCable && !warned[l]:
				warned[l] = true
				c.Reportf(Warning, l.Src.Attr("cable_length"), l.Address(), scopes(), "Long cable on a lossless link",
					"%s is %s long and carries lossless %s. Headroom grows with length: the cable alone adds %s per lossless priority "+
						"group at %s (2 x %s x 5 ns/m), %s in total with IP MTU %d on %s:%s. Make sure the switch reserves that much: NX-OS "+
						"requires an explicit pause buffer configuration above 100 m, SONiC's traditional buffer profiles only know 5m/40m/300m "+
						"(use the dynamic buffer model with cable_length set), and set buffer { headroom = \"...\" } so fabctl can check it.",
					l.Address(), l.CableLength, prioNoun(lp.pfc), need.CableDelay, l.Speed, l.CableLength, need.Total, need.MTU, sw.Name, lp.port.Name)
			case assumed && declared > 0 && !warned[l]:
				warned[l] = true
				c.Reportf(Warning, l.Src.Attr("cable_length"), l.Address(), scopes(), "Cable length unknown on a lossless link",
					"%s carries lossless %s to switch %s, which declares buffer.headroom = %s, but the link has no cable_length. "+
						"fabctl assumed %s (the usual NOS default) and needs %s per lossless priority group; a longer cable needs %s more "+
						"per 10 m at %s. Set cable_length = \"3m\" (the real length) on the link.",
					l.Address(), prioNoun(lp.pfc), sw.Name, declared, DefaultCableLength, need.Total,
					bytesInFlight(2*10*cablePSPerMetre, l.Speed), l.Speed)
			}
			if declared > 0 && declared < need.Total {
				if c.silencedFor(l.Ignore, lp.port.Ignore) {
					continue
				}
				short = append(short, headroomShort{lp: lp, need: need, assumed: assumed})
			}
		}
		if len(short) == 0 {
			continue
		}
		worst := 0
		for i, sh := range short {
			if sh.need.Total > short[worst].need.Total {
				worst = i
			}
		}
		w := short[worst]
		cableNote := ""
		if w.assumed {
			cableNote = " (cable_length not set: assumed 5m)"
		}
		var others []string
		for i, sh := range short {
			if i != worst {
				others = append(others, fmt.Sprintf("%s (%s, %s: %s)", sh.lp.port.Name, sh.need.Speed, sh.need.Cable, sh.need.Total))
			}
		}
		otherNote := ""
		if len(others) > 0 {
			otherNote = fmt.Sprintf(" Also short: %s.", capList(others, 8))
		}
		tagNote := ""
		if w.need.VLANTags > 0 {
			tagNote = fmt.Sprintf(", %d VLAN tag(s)", w.need.VLANTags)
		}
		addr := switchAddress(sw)
		if len(short) == 1 {
			addr = switchPortAddress(sw, w.lp.port)
		}
		c.Reportf(Error, sw.Buffer.Src.Attr("headroom"), addr, []spec.LintIgnores{sw.Ignore}, "PFC headroom too small",
			"Switch %s reserves buffer.headroom = %s per lossless priority group, but %d of its %s need more. "+
				"Worst: port %s (to %s, %s, %s cable%s, IP MTU %d%s, %s) needs %s: %s. "+
				"Data still in flight after PAUSE would be dropped on the lossless class.%s "+
				"Raise headroom to at least %s, or remove it to let the NOS compute headroom per port (SONiC dynamic buffer model, Cumulus/NVUE), "+
				"or shorten the cable or lower the MTU.",
			sw.Name, declared, len(short), plural(len(ports), "lossless port"),
			w.lp.port.Name, w.lp.peer(), w.need.Speed, w.need.Cable, cableNote, w.need.MTU, tagNote, prioNoun(w.lp.pfc), w.need.Total, w.need.Terms(),
			otherNote, w.need.Total)
	}
}

func checkBufferBudget(c *Context) {
	s := c.Spec
	if !s.Fabric.Transport.IsEthernet() {
		c.NotApplicable("InfiniBand has credit-based flow control, no PFC headroom")
		return
	}
	if !anySwitchBuffer(s, func(b *spec.Buffer) bool { return b.Total > 0 }) {
		c.NotApplicable("no switch declares buffer.total, so there is no buffer budget to check")
		return
	}
	var bySwitch [][]lossPort
	for si, sw := range s.Switches {
		buf := sw.Buffer
		if buf == nil || buf.Total <= 0 {
			continue
		}
		if bySwitch == nil {
			bySwitch = c.lossless()
		}
		ports := bySwitch[si]
		if len(ports) == 0 {
			continue
		}
		scopes := []spec.LintIgnores{sw.Ignore}
		if buf.Reserved >= buf.Total {
			c.Reportf(Warning, buf.Src.Attr("reserved"), switchAddress(sw), scopes, "No buffer left for headroom",
				"Switch %s: buffer.reserved = %s is not below buffer.total = %s, which leaves nothing for the headroom of its %s. "+
					"reserved is the shared-pool floor that headroom may not take; it must be smaller than total.",
				sw.Name, buf.Reserved, buf.Total, plural(len(ports), "lossless port"))
			continue
		}
		budget := buf.Total - buf.Reserved
		var sum, minPG, maxPG spec.Bytes
		pgs := 0
		for _, lp := range ports {
			need, _ := portHeadroom(s, lp)
			pg := max(buf.Headroom, need.Total)
			if buf.CellSize > 0 {
				pg = (pg + buf.CellSize - 1) / buf.CellSize * buf.CellSize
			}
			if minPG == 0 || pg < minPG {
				minPG = pg
			}
			maxPG = max(maxPG, pg)
			pgs += len(lp.pfc)
			sum += spec.Bytes(len(lp.pfc)) * pg
		}
		if sum <= budget {
			continue
		}
		perPG := minPG.String()
		if maxPG != minPG {
			perPG = minPG.String() + " to " + maxPG.String()
		}
		cells := ""
		if buf.CellSize > 0 {
			cells = fmt.Sprintf(", rounded up to %s cells", buf.CellSize)
		}
		c.Reportf(Warning, buf.Src.Attr("total"), switchAddress(sw), scopes, "Lossless headroom exceeds the switch buffer",
			"Switch %s reserves headroom for %s on %s: %d priority groups x %s each (the larger of buffer.headroom and the BUF-1 requirement%s) = %s, "+
				"but buffer.total %s - reserved %s leaves %s (%.0f%% over). The NOS will refuse the buffer profile or starve the shared pool. "+
				"Use fewer lossless priorities per port (one is usual for RoCE), shorter cables, a shared headroom pool (SONiC over_subscribe_ratio), "+
				"or check buffer.total against the ASIC.",
			sw.Name, plural(pgs, "lossless priority group"), plural(len(ports), "lossless port"), pgs, perPG, cells, sum,
			buf.Total, buf.Reserved, budget, 100*float64(sum-budget)/float64(budget))
	}
}

// anySwitchBuffer reports whether a switch declares buffer facts ok accepts.
func anySwitchBuffer(s *spec.Spec, ok func(*spec.Buffer) bool) bool {
	for _, sw := range s.Switches {
		if sw.Buffer != nil && ok(sw.Buffer) {
			return true
		}
	}
	return false
}
