package gnmicore

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/fabctl/fabctl/drivers"
	gnmitransport "github.com/fabctl/fabctl/drivers/transport/gnmi"
	"github.com/fabctl/fabctl/internal/linktruth"
)

// LinkPlatform is a platform that reads link truth (drivers.LinkReader):
// the state paths of its interfaces and of its LLDP neighbours, read in
// ONE Get, and the decoder of what came back.
type LinkPlatform interface {
	// LinkPaths are the Get paths (wildcard keys) of the interfaces'
	// state and of the LLDP neighbours.
	LinkPaths() (interfaces, lldp []string)
	// DecodeLinks reads the ports from the tree the Get's updates make
	// (top-level members as the device named them); lldp says whether
	// the LLDP paths were read. An error names what is wrong, without
	// the device (the caller adds it).
	DecodeLinks(tree map[string]any, lldp bool) (*linktruth.DeviceLinks, error)
}

// ReadLinkTruth reads the device's link truth with one Get of the platform's
// interface and LLDP state paths (data type ALL: SR Linux keeps
// admin-state in the configuration). A device that has no data at the
// LLDP paths answers the whole Get NotFound (gNMI specification 3.3.4):
// the interfaces are then read again alone, and the report says LLDP was
// not read and why. A platform without link paths reports nothing (nil).
//
// A platform driver implements drivers.LinkReader by calling it.
func (c *Core) ReadLinkTruth(ctx context.Context, t drivers.Target) (*linktruth.DeviceLinks, error) {
	lp, ok := c.P.(LinkPlatform)
	if !ok {
		return nil, nil
	}
	ifs, lldp := lp.LinkPaths()
	cl, _, release, err := c.acquire(ctx, t)
	if err != nil {
		return nil, err
	}
	defer release()
	note := ""
	ups, err := cl.GetState(ctx, append(append([]string(nil), ifs...), lldp...))
	if notFound(err) && len(lldp) > 0 {
		note = fmt.Sprintf("the device has no LLDP state at %s (gNMI Get: NotFound): is LLDP enabled?", strings.Join(lldp, ", "))
		ups, err = cl.GetState(ctx, ifs)
	}
	if err != nil {
		return nil, err
	}
	tree, err := LinkTree(ups)
	if err != nil {
		return nil, fmt.Errorf("%s: gNMI Get: %w", t.Device.Name, err)
	}
	dl, err := lp.DecodeLinks(tree, note == "")
	if err != nil {
		return nil, fmt.Errorf("%s: link state from gNMI Get %s: %w", t.Device.Name, strings.Join(ifs, ", "), err)
	}
	src := "gNMI Get " + strings.Join(ifs, ", ")
	dl.Source = src
	if note == "" {
		dl.LLDPSource = "gNMI Get " + strings.Join(lldp, ", ")
	} else {
		dl.LLDP, dl.LLDPNote = false, note
	}
	return dl, nil
}

// LinkTree merges a Get's updates into one tree (top-level members as the
// device named them), list entries created from the keys in each path.
func LinkTree(ups []gnmitransport.Update) (map[string]any, error) {
	tree := map[string]any{}
	for _, u := range ups {
		if len(u.Path) == 0 {
			m, ok := u.Val.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("the root's value is a %T, not an object", u.Val)
			}
			tree = merge(tree, m).(map[string]any)
			continue
		}
		setAt(tree, u.Path, OpUpdate, u.Val)
	}
	return tree, nil
}

func notFound(err error) bool {
	e, ok := err.(*gnmitransport.Error)
	return ok && e.Code == codes.NotFound
}

// Counter64 reads a counter64 leaf (an RFC 7951 string, or a JSON number
// from a lenient device); absent is 0. ok is false for anything else.
func Counter64(n Node) (v uint64, ok bool) {
	if !n.Exists() {
		return 0, true
	}
	s, isScalar := n.String()
	if !isScalar {
		return 0, false
	}
	v, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	return v, err == nil
}

// PortCounters reads a port's error and discard counters from the four
// named leaves of a counters container; nil when none is there.
func PortCounters(port string, c Node, inErr, outErr, inDisc, outDisc string) (*linktruth.Counters, error) {
	if !c.Exists() {
		return nil, nil
	}
	var k linktruth.Counters
	for _, f := range []struct {
		name string
		dst  *uint64
	}{{inErr, &k.InErrors}, {outErr, &k.OutErrors}, {inDisc, &k.InDiscards}, {outDisc, &k.OutDiscards}} {
		v, ok := Counter64(c.Get(f.name))
		if !ok {
			return nil, fmt.Errorf("port %s: %s %s is not a counter64", port, f.name, short(c.Get(f.name).Raw()))
		}
		*f.dst = v
	}
	return &k, nil
}

// PortIDSubtype is the port-id-type enum of the LLDP models
// (openconfig-lldp-types.yang:264-302, srl_nokia-lldp-types.yang:237-281)
// in lldpd's words (linktruth.Neighbor.PortIDSubtype: "ifname", "mac",
// ...); an unknown value is kept, lower-cased.
func PortIDSubtype(enum string) string {
	switch enum {
	case "INTERFACE_NAME":
		return "ifname"
	case "MAC_ADDRESS":
		return "mac"
	case "LOCAL":
		return "local"
	case "INTERFACE_ALIAS":
		return "ifalias"
	case "NETWORK_ADDRESS":
		return "ip"
	}
	return strings.ToLower(enum)
}

// Neighbor reads one LLDP neighbour's leaves (system-name, chassis-id,
// port-id, port-id-type, port-description: the same names in both
// models).
func Neighbor(n Node) linktruth.Neighbor {
	str := func(name string) string {
		s, _ := n.Get(name).String()
		return s
	}
	typ, _ := n.Get("port-id-type").Ident()
	return linktruth.Neighbor{SystemName: str("system-name"), ChassisID: str("chassis-id"),
		PortID: str("port-id"), PortIDSubtype: PortIDSubtype(typ), PortDesc: str("port-description")}
}

// short quotes a hostile value for an error, at most 40 characters.
func short(v any) string {
	s := fmt.Sprintf("%v", v)
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return strconv.Quote(s)
}
