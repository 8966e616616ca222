package gnmitarget

import (
	"google.golang.org/grpc/status"

	"encoding/json"
	"fmt"
	"strconv"

	"github.com/fabctl/fabctl/internal/jsontree"
	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/yangval"
)

// The state model is small on purpose: every interface of the
// configuration reports its oper status, speed and LLDP neighbours from
// Config.Links (links.go) and counters that grow with each read (so two
// polls differ; errors and discards are the Source's), in the flavor's
// shape. SetState overrides any leaf of that state tree.

type stateOverride struct {
	path  []yangval.PathElem
	value any
}

// SetState sets a state leaf or subtree (gNMI path string, JSON_IETF
// value) that Get and Subscribe report from now on, over the generated
// state: e.g. SetState("/interfaces/interface[name=Ethernet0]/state/oper-status", []byte(`"DOWN"`)).
func (t *Target) SetState(path string, value []byte) error {
	elems, err := yangval.ParsePath(path)
	if err != nil {
		return err
	}
	if len(elems) == 0 {
		return fmt.Errorf("state path %q: the root cannot be overridden", path)
	}
	v, err := decodeJSON(value)
	if err != nil {
		return fmt.Errorf("state value for %s: %w", path, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.overrides = append(t.overrides, stateOverride{elems, v})
	return nil
}

// initialTree builds the starting configuration from Config.Initial and
// Config.Interfaces and validates it when the target has models.
func (t *Target) initialTree() (map[string]any, error) {
	return t.initialTreeFor(t.cfg.Interfaces)
}

func (t *Target) initialTreeFor(ifs []string) (map[string]any, error) {
	tree := map[string]any{}
	if len(t.cfg.Initial) > 0 {
		v, err := decodeJSON(t.cfg.Initial)
		if err != nil {
			return nil, err
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("must be a JSON object, got %T", v)
		}
		t.merge(tree, m, yangval.Node{}, true)
	}
	for _, name := range ifs {
		var op yangval.SetOp
		if t.cfg.Flavor == FlavorSRLinux {
			op = yangval.SetOp{Op: yangval.OpUpdate,
				Path:  []yangval.PathElem{{Name: "srl_nokia-interfaces:interface", Keys: map[string]string{"name": name}}},
				Value: map[string]any{"admin-state": "enable"}}
		} else {
			op = yangval.SetOp{Op: yangval.OpUpdate,
				Path:  []yangval.PathElem{{Name: "openconfig-interfaces:interfaces"}, {Name: "interface", Keys: map[string]string{"name": name}}},
				Value: map[string]any{"config": map[string]any{"name": name, "type": "iana-if-type:ethernetCsmacd", "enabled": true}}}
		}
		var err error
		if tree, err = t.apply(tree, op); err != nil {
			return nil, err
		}
	}
	if t.schema != nil {
		if errs := t.schema.ValidateTree(tree); len(errs) > 0 {
			return nil, fmt.Errorf("not valid against the models: %s", joinErrors(errs))
		}
	}
	if err := t.validateLibYANG(tree); err != nil {
		return nil, fmt.Errorf("not valid against the models: %s", status.Convert(err).Message())
	}
	return tree, nil
}

// counterNames are the flavor's interface counters (all counter64:
// strings in RFC 7951), with the per-read increment of each.
var counterNames = map[string][]string{
	FlavorOpenConfig: {"in-octets", "in-pkts", "in-unicast-pkts", "in-discards", "in-errors",
		"out-octets", "out-pkts", "out-unicast-pkts", "out-discards", "out-errors"},
	FlavorSRLinux: {"in-octets", "in-packets", "in-unicast-packets", "in-discarded-packets", "in-error-packets",
		"out-octets", "out-packets", "out-unicast-packets", "out-discarded-packets", "out-error-packets"},
}

// counters for interface number i after reads reads: octets grow by
// 1 MB per read, packets by 1000, discards and errors stay 0.
func counters(flavor string, i int, reads uint64) map[string]any {
	c := map[string]any{}
	for j, name := range counterNames[flavor] {
		var v uint64
		switch j % 5 {
		case 0:
			v = reads * 1_000_000 * uint64(i+1)
		case 1, 2:
			v = reads * 1000 * uint64(i+1)
		}
		c[name] = strconv.FormatUint(v, 10)
	}
	return c
}

// stateTree is the state-only tree (list keys included) of the current
// configuration, with each interface's link from links (links.go).
// Caller holds t.mu.
func (t *Target) stateTree(links map[string]linktruth.Observation) map[string]any {
	t.reads++
	st := map[string]any{}
	var ports []linktruth.Observation
	if t.cfg.Flavor == FlavorSRLinux {
		name, ok := member(t.tree, "srl_nokia-interfaces:interface")
		if ok {
			var out []any
			for i, e := range asList(t.tree[name]) {
				admin := "enable"
				if s, ok := e["admin-state"].(string); ok {
					admin = s
				}
				o := portState(links, e["name"], admin == "enable")
				ports = append(ports, o)
				stats := counters(t.cfg.Flavor, i, t.reads)
				errorCounters(t.cfg.Flavor, stats, o)
				s := map[string]any{"name": e["name"], "oper-state": o.Oper, "statistics": stats}
				eth := map[string]any{}
				if sp := srlSpeed(o.SpeedMbps); sp != "" {
					eth["port-speed"] = sp
				}
				if fecModes[t.cfg.Flavor][o.FEC] && o.Oper == linktruth.Up {
					eth["forward-error-correction"] = map[string]any{"operational-host-if-fec": o.FEC}
				}
				if len(eth) > 0 {
					s["ethernet"] = eth
				}
				out = append(out, s)
			}
			if out != nil {
				st["srl_nokia-interfaces:interface"] = out
				st["srl_nokia-system:system"] = map[string]any{"srl_nokia-lldp:lldp": lldpSRLinux(ports)}
			}
		}
	} else if name, ok := member(t.tree, "openconfig-interfaces:interfaces"); ok {
		ifs, _ := t.tree[name].(map[string]any)
		var out []any
		if ln, ok := member(ifs, "interface"); ok {
			for i, e := range asList(ifs[ln]) {
				s := map[string]any{}
				if cfg, ok := e["config"].(map[string]any); ok {
					for k, v := range cfg {
						s[k] = v
					}
				}
				up := s["enabled"] != false
				o := portState(links, e["name"], up)
				ports = append(ports, o)
				s["admin-status"], s["oper-status"] = "DOWN", "DOWN"
				if up {
					s["admin-status"] = "UP"
				}
				if o.Oper == linktruth.Up {
					s["oper-status"] = "UP"
				}
				c := counters(t.cfg.Flavor, i, t.reads)
				errorCounters(t.cfg.Flavor, c, o)
				s["counters"] = c
				entry := map[string]any{"name": e["name"], "state": s}
				eth := map[string]any{}
				if sp := ocSpeed(o.SpeedMbps); sp != "" {
					eth["port-speed"] = sp
					if o.Oper == linktruth.Up {
						eth["negotiated-port-speed"] = sp
					}
				}
				if fecModes[t.cfg.Flavor][o.FEC] && o.Oper == linktruth.Up {
					eth["fec-mode"] = "openconfig-if-ethernet:" + o.FEC
				}
				if len(eth) > 0 {
					entry["openconfig-if-ethernet:ethernet"] = map[string]any{"state": eth}
				}
				out = append(out, entry)
			}
		}
		if out != nil {
			st["openconfig-interfaces:interfaces"] = map[string]any{"interface": out}
			st["openconfig-lldp:lldp"] = lldpOpenConfig(ports)
		}
	}
	for _, o := range t.overrides {
		// an override naming an interface the configuration lacks is
		// created: the test asked for it
		if next, err := t.apply(st, yangval.SetOp{Op: yangval.OpReplace, Path: o.path, Value: jsontree.DeepCopy(o.value)}); err == nil {
			st = next
		}
	}
	return st
}

func asList(v any) []map[string]any {
	arr, _ := v.([]any)
	out := make([]map[string]any, 0, len(arr))
	for _, e := range arr {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// jsonBytes marshals a value for a TypedValue.
func jsonBytes(v any) ([]byte, error) { return json.Marshal(v) }
