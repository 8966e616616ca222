package cumulusemu

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/testbed/portlink"
)

// showInterfaceJSON answers `nv show interface -o json` from Options.Links
// (testbed/portlink), in the tree NVUE prints
// (testdata/vendor/cumulus/nvue-show-interface-json.txt): per swp
// interface its type, link.mtu, link.state {"up": {}} or {"down": {}}
// (down as well when the applied configuration sets `link state down`),
// link.speed as the `nv show interface` table writes it ("100G", "1G";
// only while up), link.stats (in-errors, out-errors, in-drops, out-drops)
// and lldp.neighbor keyed by the neighbour's system name with its
// chassis (chassis-id, system-name) and port (name, description, type:
// lldpd's subtype word, "ifname" in the reference's example). With no
// Source every port is down and hears nothing (portlink's rule).
func (sw *Switch) showInterfaceJSON() string {
	ports, err := portlink.Read(context.Background(), sw.opts.Links)
	if err != nil {
		// Not a vendor output: the testbed's cabling could not be read.
		return "Error: link state unavailable: " + err.Error() + "\n"
	}
	out := map[string]any{}
	for i := 1; i <= sw.opts.Ports; i++ {
		name := "swp" + strconv.Itoa(i)
		o, cabled := ports[name]
		admin, _ := getPath(sw.applied, "interface."+name+".link.state")
		mtu := 9216 // NVUE's default link mtu (nvue-cli-514.txt:9)
		if m, ok := getPath(sw.applied, "interface."+name+".link.mtu"); ok {
			if n, err := strconv.Atoi(toString(m)); err == nil {
				mtu = n
			}
		}
		link := map[string]any{"mtu": mtu, "state": map[string]any{"down": map[string]any{}}}
		up := cabled && o.Oper == linktruth.Up && !o.AdminDown && toString(admin) != "down"
		if up {
			link["state"] = map[string]any{"up": map[string]any{}}
			if o.SpeedMbps > 0 {
				link["speed"] = linktruth.SpeedString(o.SpeedMbps)
			}
		}
		var c linktruth.Counters
		if cabled && o.Counters != nil {
			c = *o.Counters
		}
		link["stats"] = map[string]any{"in-errors": c.InErrors, "out-errors": c.OutErrors, "in-drops": c.InDiscards, "out-drops": c.OutDiscards}
		nbs := map[string]any{}
		if up {
			for _, n := range o.Neighbors {
				id := n.SystemName
				if id == "" {
					id = n.ChassisID
				}
				nbs[id] = map[string]any{
					"chassis": map[string]any{"chassis-id": n.ChassisID, "system-name": n.SystemName},
					"port":    map[string]any{"name": n.PortID, "description": n.PortDesc, "type": n.PortIDSubtype, "ttl": 120},
				}
			}
		}
		out[name] = map[string]any{"type": "swp", "link": link, "lldp": map[string]any{"neighbor": nbs}}
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	return string(b) + "\n"
}

func toString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case int:
		return strconv.Itoa(x)
	}
	return ""
}
