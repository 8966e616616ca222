package linktruth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
)

// LLDPCLISource names the command whose output ParseLLDPCLI reads.
const LLDPCLISource = "lldpcli -f json show neighbors"

// maxLLDPCLI bounds the output ParseLLDPCLI accepts (a few hundred
// bytes a neighbour: a 4 MiB answer is tens of thousands of them).
const maxLLDPCLI = 4 << 20

// ParseLLDPCLI reads the output of `lldpcli -f json show neighbors`
// (lldpd's lldpcli(8)) into the neighbours heard per local interface.
//
// The shape is lldpd's "json" writer as its own tests print it
// (lldpd/lldpd tests/integration/test_lldpcli.py, test_json_output):
//
//	{"lldp": {"interface": {"eth0": {"via": "LLDP", "rid": "1",
//	  "chassis": {"ns-2.example.com": {"id": {"type": "mac", "value": "00:00:00:00:00:02"}, ...}},
//	  "port": {"id": {"type": "mac", "value": "00:00:00:00:00:02"}, "descr": "eth1", "ttl": "120"}}}}}
//
// The writer folds a list of one element into an object and keys an
// element by its name: "interface" is an object when one neighbour is
// known and an array of one-key objects ([{"eth0": {...}}, {"eth1":
// {...}}], one entry per neighbour, an interface repeated when it has
// several) when there are more; "chassis" is keyed by the system name
// and holds the chassis fields directly when the neighbour sent none.
// Both forms were captured from Debian's lldpd 1.0.16 for
// testdata/lldpcli-*.json. No neighbour at all is {"lldp": {}} (or an
// empty "interface").
func ParseLLDPCLI(b []byte) (map[string][]Neighbor, error) {
	if len(b) > maxLLDPCLI {
		return nil, fmt.Errorf("lldpcli output of %d bytes is over the %d accepted", len(b), maxLLDPCLI)
	}
	var top struct {
		LLDP json.RawMessage `json:"lldp"`
	}
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, fmt.Errorf("lldpcli output is not lldpd's JSON: %w", err)
	}
	out := map[string][]Neighbor{}
	lldp := bytes.TrimSpace(top.LLDP)
	if len(lldp) == 0 || bytes.Equal(lldp, []byte("null")) {
		return nil, errors.New(`lldpcli output has no "lldp" object`)
	}
	var body struct {
		Interface json.RawMessage `json:"interface"`
	}
	if err := json.Unmarshal(lldp, &body); err != nil {
		return nil, fmt.Errorf(`lldpcli output: "lldp": %w`, err)
	}
	ifaces, err := named(body.Interface)
	if err != nil {
		return nil, fmt.Errorf(`lldpcli output: "interface": %w`, err)
	}
	for _, it := range ifaces {
		var iface struct {
			Chassis json.RawMessage `json:"chassis"`
			Port    struct {
				ID    idTLV  `json:"id"`
				Descr string `json:"descr"`
			} `json:"port"`
		}
		if err := json.Unmarshal(it.val, &iface); err != nil {
			return nil, fmt.Errorf("lldpcli output: interface %q: %w", it.name, err)
		}
		n := Neighbor{PortID: iface.Port.ID.Value, PortIDSubtype: iface.Port.ID.Type, PortDesc: iface.Port.Descr}
		if err := n.chassis(iface.Chassis); err != nil {
			return nil, fmt.Errorf("lldpcli output: interface %q: chassis: %w", it.name, err)
		}
		out[it.name] = append(out[it.name], n)
	}
	return out, nil
}

// idTLV is lldpd's {"type": ..., "value": ...} of a Chassis or Port ID.
type idTLV struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

type chassisFields struct {
	ID idTLV `json:"id"`
}

// chassis fills the system name and chassis ID from lldpd's "chassis":
// {"NAME": {"id": ...}} or, with no system name, {"id": ...}.
func (n *Neighbor) chassis(raw json.RawMessage) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return err
	}
	if id, ok := m["id"]; ok && len(m) > 0 {
		var t idTLV
		if json.Unmarshal(id, &t) == nil && t.Type != "" {
			n.ChassisID = t.Value // unnamed chassis: the fields themselves
			return nil
		}
	}
	if len(m) != 1 {
		return fmt.Errorf("%d chassis entries, lldpd writes one per neighbour", len(m))
	}
	for name, v := range m {
		var f chassisFields
		if err := json.Unmarshal(v, &f); err != nil {
			return err
		}
		n.SystemName, n.ChassisID = name, f.ID.Value
	}
	return nil
}

type namedValue struct {
	name string
	val  json.RawMessage
}

// named reads lldpd's keyed list: {"a": {...}, "b": {...}} or
// [{"a": {...}}, {"b": {...}}] (absent or null: none), in order.
func named(raw json.RawMessage) ([]namedValue, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	if raw[0] == '[' {
		var list []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, err
		}
		var out []namedValue
		for _, m := range list {
			out = append(out, sortedNamed(m)...)
		}
		return out, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return sortedNamed(m), nil
}

func sortedNamed(m map[string]json.RawMessage) []namedValue {
	out := make([]namedValue, 0, len(m))
	for k, v := range m {
		out = append(out, namedValue{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}
