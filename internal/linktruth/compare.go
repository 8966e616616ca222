package linktruth

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fabctl/fabctl/spec"
)

// Finding kinds. link-down, miswired and speed are InfiniBand's names
// for the same faults (drivers/sm/ibfabric).
const (
	KindLinkDown   = "link-down"   // the port is not up
	KindMiswired   = "miswired"    // the LLDP neighbour is another port than the spec cables
	KindNoNeighbor = "no-neighbor" // LLDP runs on the port and heard nothing
	KindSpeed      = "speed"       // negotiated at another speed than the link's
	KindErrors     = "errors"      // more errors counted than link_errors_max
	KindUnreadable = "unreadable"  // the device was read but did not report the port
)

// Verdicts, as validate/ibreadback's: mismatch is a fault no change
// fixes; unchecked a check that could not run.
const (
	VerdictMismatch  = "mismatch"
	VerdictUnchecked = "unchecked"
)

// Finding is one link end that does not look as the spec says.
type Finding struct {
	// Link is the link's address (link.leaf1:Ethernet0--gpu01:ens1f0),
	// End the port the finding is about, Peer the other end the spec
	// cables to it.
	Link   string `json:"link"`
	End    string `json:"end"`
	Peer   string `json:"peer"`
	Device string `json:"device"` // the end's device address (switch.leaf1, host.gpu01)
	Port   string `json:"port"`
	Kind   string `json:"kind"`
	// Verdict is VerdictMismatch or VerdictUnchecked.
	Verdict string `json:"verdict"`
	// Want and Have are what the spec asks and what was seen, in words
	// ("gpu01:ens1f0", "up", "400G", "at most 0 errors").
	Want    string `json:"want"`
	Have    string `json:"have"`
	Message string `json:"message"`
}

func (f Finding) String() string { return f.End + ": " + f.Message + " [" + f.Kind + "]" }

// Read is what became of one device's read: Links, or why there are
// none (NotRead: "link truth not read on sonic", an error).
type Read struct {
	Links   *DeviceLinks
	NotRead string
}

// NotRead is a reason some devices' links were not read, and the
// devices (addresses, sorted).
type NotRead struct {
	Reason  string   `json:"reason"`
	Devices []string `json:"devices"`
}

// Report is the comparison's result.
type Report struct {
	// Links is the Ethernet links the spec cables, Ends the link ends
	// whose device was read and reported the port, Checked the ends
	// compared (with their neighbour, when LLDP was read).
	Links int `json:"links"`
	Ends  int `json:"ends_read"`
	// ErrorsMax is the fabric's link_errors_max.
	ErrorsMax int64     `json:"errors_max"`
	Findings  []Finding `json:"findings"`
	// NotRead are the devices whose links were not read, by reason;
	// NoLLDP those read without their LLDP neighbours, by reason.
	NotRead []NotRead `json:"not_read,omitempty"`
	NoLLDP  []NotRead `json:"no_lldp,omitempty"`
	// EndList is every link end in the spec's order, for a report per
	// end (validate's JUnit); not part of the JSON (Findings and NotRead
	// say it).
	EndList []End `json:"-"`
}

// NotReadEnds counts the link ends not checked (their device not read
// or not selected, or the port not reported).
func (r *Report) NotReadEnds() int {
	n := 0
	for _, e := range r.EndList {
		if e.NotRead != "" {
			n++
		}
	}
	return n
}

// End is one link end of a Report.
type End struct {
	End, Peer, Link, Device string
	// NotRead is why the end was not checked ("" when it was; its
	// findings are the Report's with this End).
	NotRead string
}

// Mismatch reports whether the report holds a finding no change fixes.
func (r *Report) Mismatch() bool {
	if r == nil {
		return false
	}
	for _, f := range r.Findings {
		if f.Verdict == VerdictMismatch {
			return true
		}
	}
	return false
}

// Applies reports whether the spec has Ethernet links to check.
func Applies(s *spec.Spec) bool {
	if s == nil || s.Fabric == nil || s.Fabric.Transport == spec.InfiniBand {
		return false
	}
	for _, l := range s.Links {
		if ethernet(s, l) {
			return true
		}
	}
	return false
}

// ethernet reports whether l is an Ethernet link: not on an InfiniBand
// switch (those are discovered over MADs, validate/ibreadback).
func ethernet(s *spec.Spec, l *spec.Link) bool {
	for _, e := range [2]spec.Endpoint{l.A, l.B} {
		if e.Kind == spec.KindSwitch {
			if sw := s.Switch(e.Node); sw == nil || sw.InfiniBand {
				return false
			}
		}
	}
	return true
}

// Address is the device address of a link end (as plan names devices).
func Address(e spec.Endpoint) string { return e.Kind + "." + e.Node }

// Compare checks every Ethernet link of s against the devices' reads
// (by device address; a device missing from reads was not selected and
// its ends are not checked). It is linear in the links and the devices.
func Compare(s *spec.Spec, reads map[string]Read) *Report {
	r := &Report{Findings: []Finding{}}
	if !Applies(s) {
		return r
	}
	r.ErrorsMax = s.Fabric.LinkErrorsMax
	r.EndList = make([]End, 0, 2*len(s.Links))
	c := comparer{s: s, reads: reads, r: r, names: nameIndex(s)}
	for _, l := range s.Links {
		if !ethernet(s, l) {
			continue
		}
		r.Links++
		want := LinkSpeed(l)
		c.end(l, l.A, l.B, want)
		c.end(l, l.B, l.A, want)
	}
	r.NotRead = group(reads, func(rd Read) string { return rd.NotRead })
	r.NoLLDP = group(reads, func(rd Read) string {
		if rd.Links == nil || rd.Links.LLDP {
			return ""
		}
		if rd.Links.LLDPNote != "" {
			return "LLDP neighbours not read: " + rd.Links.LLDPNote
		}
		return "LLDP neighbours not read"
	})
	return r
}

// LinkSpeed is the speed the link should run at in Mb/s: the link's
// speed, else a speed both ends declare alike (0: not checked).
func LinkSpeed(l *spec.Link) int64 {
	if l.Speed > 0 {
		return Mbps(int64(l.Speed))
	}
	a, b := endSpeed(l.EndA()), endSpeed(l.EndB())
	switch {
	case a == 0:
		return b
	case b == 0 || a == b:
		return a
	}
	return 0 // the ends disagree: lint's matter, not a reading's
}

func endSpeed(_ *spec.Switch, p *spec.Port, _ *spec.Host, n *spec.NIC) int64 {
	switch {
	case p != nil && p.Speed > 0:
		return Mbps(int64(p.Speed))
	case n != nil && n.Speed > 0:
		return Mbps(int64(n.Speed))
	}
	return 0
}

// group collects the devices each reason applies to, reasons sorted.
func group(reads map[string]Read, reason func(Read) string) []NotRead {
	by := map[string][]string{}
	for addr, rd := range reads {
		if why := reason(rd); why != "" {
			by[why] = append(by[why], addr)
		}
	}
	out := make([]NotRead, 0, len(by))
	for why, devs := range by {
		sort.Strings(devs)
		out = append(out, NotRead{Reason: why, Devices: devs})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Reason < out[j].Reason })
	return out
}

type comparer struct {
	s     *spec.Spec
	reads map[string]Read
	r     *Report
	names map[string]spec.Endpoint // lower-cased LLDP name -> device (Port empty)
}

// nameIndex maps every name a device may advertise (its spec name and
// lldp_name, lower-cased) to the device, to name what a port sees in the
// spec's words.
func nameIndex(s *spec.Spec) map[string]spec.Endpoint {
	m := make(map[string]spec.Endpoint, len(s.Switches)+len(s.Hosts))
	for _, sw := range s.Switches {
		e := spec.Endpoint{Node: sw.Name, Kind: spec.KindSwitch}
		m[strings.ToLower(sw.Name)] = e
		if sw.LLDPName != "" {
			m[strings.ToLower(sw.LLDPName)] = e
		}
	}
	for _, h := range s.Hosts {
		e := spec.Endpoint{Node: h.Name, Kind: spec.KindHost}
		m[strings.ToLower(h.Name)] = e
		if h.LLDPName != "" {
			m[strings.ToLower(h.LLDPName)] = e
		}
	}
	return m
}

// lldpName is the system name the spec expects a device to advertise.
func (c *comparer) lldpName(e spec.Endpoint) string {
	if e.Kind == spec.KindSwitch {
		if sw := c.s.Switch(e.Node); sw != nil && sw.LLDPName != "" {
			return sw.LLDPName
		}
	} else if h := c.s.Host(e.Node); h != nil && h.LLDPName != "" {
		return h.LLDPName
	}
	return e.Node
}

// sameSystem reports whether an advertised system name is the expected
// one: equal ignoring case, or its first DNS label is (lldpd advertises
// the host's FQDN, lldpd(8) "hostname").
func sameSystem(seen, want string) bool {
	if strings.EqualFold(seen, want) {
		return true
	}
	if i := strings.IndexByte(seen, '.'); i > 0 && !strings.Contains(want, ".") {
		return strings.EqualFold(seen[:i], want)
	}
	return false
}

// samePort reports whether a neighbour's Port ID or Port Description
// names the port (lldpd sends the MAC as Port ID and the interface name
// as Port Description by default, lldpcli(8) "configure lldp
// portidsubtype"; switches send the interface name as Port ID).
func samePort(n Neighbor, port string) bool {
	return strings.EqualFold(n.PortID, port) || strings.EqualFold(n.PortDesc, port)
}

// seenAs names a neighbour in the spec's words when its system name is
// a spec device's, else as advertised.
func (c *comparer) seenAs(n Neighbor) string {
	name := strings.ToLower(n.SystemName)
	e, ok := c.names[name]
	if !ok {
		if i := strings.IndexByte(name, '.'); i > 0 {
			e, ok = c.names[name[:i]]
		}
	}
	port := n.PortID
	if n.PortDesc != "" && (n.PortIDSubtype == "mac" || n.PortIDSubtype == "macAddress" || port == "") {
		port = n.PortDesc
	}
	if ok {
		return e.Node + ":" + port
	}
	return n.String()
}

func (c *comparer) end(l *spec.Link, at, peer spec.Endpoint, speed int64) {
	rd, ok := c.reads[Address(at)]
	e := End{End: at.String(), Peer: peer.String(), Link: l.Address(), Device: Address(at)}
	switch {
	case !ok:
		e.NotRead = "not selected"
	case rd.Links == nil:
		e.NotRead = rd.NotRead
	case rd.Links.Ports[at.Port] == nil:
		e.NotRead = "the device did not report the port"
	}
	c.r.EndList = append(c.r.EndList, e)
	if rd.Links == nil {
		return // not selected or not read: Report.NotRead says so
	}
	add := func(kind, verdict, want, have, format string, args ...any) {
		c.r.Findings = append(c.r.Findings, Finding{Link: e.Link, End: e.End, Peer: e.Peer,
			Device: e.Device, Port: at.Port, Kind: kind, Verdict: verdict, Want: want, Have: have,
			Message: fmt.Sprintf(format, args...)})
	}
	o := rd.Links.Ports[at.Port]
	if o == nil {
		add(KindUnreadable, VerdictUnchecked, "a report of the port", "none",
			"%s did not report the port (%s), so its link to %s is not checked", Address(at), rd.Links.Source, peer)
		return
	}
	c.r.Ends++
	if o.Oper != "" && o.Oper != Up {
		switch {
		case o.AdminDown:
			add(KindLinkDown, VerdictUnchecked, Up, "administratively down",
				"link to %s not checked: the port is administratively down (apply brings up a port the spec manages)", peer)
		case c.adminDown(peer):
			add(KindLinkDown, VerdictUnchecked, Up, o.Oper,
				"link to %s not checked: it is %s, and %s is administratively down", peer, o.Oper, peer)
		default:
			add(KindLinkDown, VerdictMismatch, Up, o.Oper, "link to %s is %s", peer, o.Oper)
		}
		return // a down port has no neighbour and no speed worth judging
	}
	if rd.Links.LLDP {
		c.neighbor(o, peer, add)
	}
	if speed > 0 && o.SpeedMbps > 0 && o.SpeedMbps != speed {
		add(KindSpeed, VerdictMismatch, SpeedString(speed), SpeedString(o.SpeedMbps),
			"link to %s runs at %s, the spec's link is %s", peer, SpeedString(o.SpeedMbps), SpeedString(speed))
	}
	if k := o.Counters; k != nil && k.InErrors+k.OutErrors > uint64(c.r.ErrorsMax) {
		add(KindErrors, VerdictMismatch, fmt.Sprintf("at most %d errors", c.r.ErrorsMax), fmt.Sprintf("%d in, %d out", k.InErrors, k.OutErrors),
			"link to %s counted %d input and %d output errors (link_errors_max = %d)", peer, k.InErrors, k.OutErrors, c.r.ErrorsMax)
	}
}

// advertisedID is the Port ID the peer's device says the port
// advertises when it is not the port's name (DeviceLinks.PortIDs), "".
func (c *comparer) advertisedID(peer spec.Endpoint) string {
	rd, ok := c.reads[Address(peer)]
	if !ok || rd.Links == nil {
		return ""
	}
	return rd.Links.PortIDs[peer.Port]
}

// adminDown reports whether an end was read and is administratively down.
func (c *comparer) adminDown(e spec.Endpoint) bool {
	rd, ok := c.reads[Address(e)]
	if !ok || rd.Links == nil {
		return false
	}
	o := rd.Links.Ports[e.Port]
	return o != nil && o.AdminDown
}

func (c *comparer) neighbor(o *Observation, peer spec.Endpoint, add func(kind, verdict, want, have, format string, args ...any)) {
	want := c.lldpName(peer)
	alias := c.advertisedID(peer)
	for _, n := range o.Neighbors {
		if sameSystem(n.SystemName, want) && (samePort(n, peer.Port) || alias != "" && samePort(n, alias)) {
			return
		}
	}
	wantS := want + ":" + peer.Port
	if len(o.Neighbors) == 0 {
		// Silence is a fault only when the peer is known to speak LLDP.
		verdict, tail := VerdictMismatch, ""
		if prd, ok := c.reads[Address(peer)]; !ok || prd.Links == nil || !prd.Links.LLDP {
			verdict, tail = VerdictUnchecked, fmt.Sprintf(" (%s's own LLDP was not read, so it may not send any)", peer.Node)
		}
		add(KindNoNeighbor, verdict, wantS, "none", "no LLDP neighbour seen; the spec cables %s%s", peer, tail)
		return
	}
	seen := make([]string, len(o.Neighbors))
	for i, n := range o.Neighbors {
		seen[i] = c.seenAs(n)
	}
	have := strings.Join(seen, ", ")
	add(KindMiswired, VerdictMismatch, wantS, have, "LLDP neighbour is %s, the spec cables %s", have, peer)
}
