package gnmitarget

import (
	"bytes"
	"testing"

	gpb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/yangval"
)

// FuzzSet feeds arbitrary gNMI path strings and JSON_IETF values through
// the target's Set decoding, validation and tree operations, with and
// without the OpenConfig models: no panic, a refused request leaves the
// tree unchanged, an accepted replace or update can be read back at its
// path, and the stored tree stays canonical JSON. Seeds:
// testdata/fuzz/FuzzSet.
func FuzzSet(f *testing.F) {
	f.Add("/interfaces/interface[name=Ethernet0]/config", []byte(`{"mtu": 9100}`), uint8(2))
	f.Add("/qos/queues/queue[name=Q1]", []byte(`{"config": {"name": "Q1", "queue-id": 1}}`), uint8(1))
	f.Add("/qos", []byte(ocQoS), uint8(1))
	f.Add("/qos/queues/queue[name=Q\\]1]/config/name", []byte(`"Q]1"`), uint8(2))
	f.Add("/", []byte(`{"openconfig-qos:qos": {}}`), uint8(2))
	f.Add("/interfaces/interface[name=Ethernet0]", []byte(nil), uint8(0))
	var s *yangval.Schema
	if dir := testutil.SharedIfPresent(f, "yang", "openconfig"); dir != "" {
		var err error
		if s, err = yangval.Load(dir); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, path string, val []byte, op uint8) {
		elems, err := yangval.ParsePath(path)
		if err != nil {
			return
		}
		gp := toPath(elems)
		for _, sch := range []*yangval.Schema{nil, s} {
			if sch == nil && s != nil && op&4 != 0 {
				continue // half the schemaless runs, to spend time on both
			}
			tg := &Target{cfg: Config{Flavor: FlavorOpenConfig, DefaultRollback: 1}, schema: sch}
			tree, err := tg.initialTreeFor([]string{"Ethernet0"})
			if err != nil {
				t.Fatal(err)
			}
			tg.tree = tree
			before, _ := marshalTree(tg.tree)
			req := &gpb.SetRequest{}
			tv := &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: val}}
			switch op % 3 {
			case 0:
				req.Delete = []*gpb.Path{gp}
			case 1:
				req.Replace = []*gpb.Update{{Path: gp, Val: tv}}
			default:
				req.Update = []*gpb.Update{{Path: gp, Val: tv}}
			}
			ops, _, err := tg.setOps(req)
			if err == nil {
				var next map[string]any
				if next, err = tg.applyOps(ops); err == nil {
					tg.tree = next
				}
			}
			after, merr := marshalTree(tg.tree)
			if merr != nil {
				t.Fatalf("tree does not marshal: %v", merr)
			}
			if err != nil {
				if !bytes.Equal(before, after) {
					t.Fatalf("refused Set (%v) changed the tree", err)
				}
				continue
			}
			if _, err := decodeJSON(after); err != nil {
				t.Fatalf("stored tree is not JSON: %v", err)
			}
			if op%3 != 0 && len(elems) > 0 {
				var ms []match
				tg.collect(tg.tree, yangval.Node{}, true, elems, nil, &ms)
				if len(ms) == 0 && !emptyValue(ops[0].Value) {
					t.Fatalf("accepted %s at %s not readable back; tree %s", ops[0].Op, path, after)
				}
			}
		}
	})
}

// emptyValue: an empty object or list stores nothing to read back.
func emptyValue(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}
