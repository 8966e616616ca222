package difftest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/yangval"
	"github.com/fabctl/fabctl/yangval/libyang"
)

// yangValidator validates payloads with libyang against the vendors'
// models in ../shared/yang, loaded as each platform's descriptor says
// (its model set and libyang profile), the way `render --yang-dir` does:
// a CONFIG_DB fragment merged over the rows a running SONiC switch has,
// a gNMI payload as the configuration it leaves on the device (the
// driver's Tree) or, without one, the SetRequest applied to an empty
// device. nil (renders only) in a build without libyang, which fails
// under CI=true: make test builds with -tags libyang where it is
// installed.
func yangValidator(t *testing.T) validator {
	t.Helper()
	if !libyang.Available {
		if testutil.CI() {
			t.Fatal("built without libyang (go test -tags libyang, libyang2-dev): CI validates every payload")
		}
		t.Log("built without libyang: the payloads are rendered, not validated (go test -tags libyang)")
		return nil
	}
	root := testutil.Shared(t, "yang")
	type set struct {
		ly     *libyang.Context
		s      *yangval.Schema
		prefer string
	}
	sets := map[string]*set{}
	for _, p := range builtin.Platforms() {
		name := p.YANG.Set
		if name == "" || sets[name] != nil {
			continue
		}
		dir := filepath.Join(root, name)
		ly, err := libyang.ForDir(dir, p.YANG.Profile)
		if err != nil || ly == nil {
			t.Fatalf("libyang: the %s models in %s: %v", name, dir, err)
		}
		s, err := yangval.Load(dir)
		if err != nil {
			t.Fatalf("the %s models in %s: %v", name, dir, err)
		}
		sets[name] = &set{ly: ly, s: s, prefer: p.YANG.Profile.Prefer}
	}
	return func(p drivers.YANGPayload) []string {
		ms := sets[p.Models]
		if ms == nil {
			return []string{fmt.Sprintf("no %q model set in %s", p.Models, root)}
		}
		var errs []error
		if len(p.ConfigDB) > 0 {
			var db map[string]map[string]map[string]any
			if err := decode(p.ConfigDB, &db); err != nil {
				return []string{"CONFIG_DB: " + err.Error()}
			}
			frag := libyang.ConfigDB(db)
			errs = append(errs, ms.ly.ValidateConfigDB(libyang.MergeConfigDB(libyang.FragmentBase(frag), frag), libyang.Options{}))
		}
		if len(p.Ops) > 0 {
			if len(p.Tree) > 0 {
				var tree any
				if err := decode(p.Tree, &tree); err != nil {
					return []string{"tree: " + err.Error()}
				}
				b, err := json.Marshal(ms.s.QualifyTree(tree, ms.prefer))
				if err != nil {
					return []string{"tree: " + err.Error()}
				}
				errs = append(errs, ms.ly.ValidateJSON(b, libyang.Options{}))
			} else {
				var req libyang.SetRequest
				for _, o := range p.Ops {
					switch o.Op {
					case "delete":
						req.Delete = append(req.Delete, o.Path)
					case "replace":
						req.Replace = append(req.Replace, libyang.Update{Path: o.Path, Encoding: "json_ietf", Val: o.Val})
					default:
						req.Update = append(req.Update, libyang.Update{Path: o.Path, Encoding: "json_ietf", Val: o.Val})
					}
				}
				errs = append(errs, ms.ly.ValidateSet(nil, req, libyang.Options{}))
			}
		}
		var out []string
		for _, err := range errs {
			if err != nil {
				out = append(out, err.Error())
			}
		}
		return out
	}
}

func decode(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

// TestValidatorRefuses: the validator the differential test relies on
// refuses what the models refuse (a negative control per payload kind):
// a SONiC watchdog poll below POLL_INTERVAL's 100..1000 ms, and an SR
// Linux port MTU above srl_nokia-interfaces' 9500.
func TestValidatorRefuses(t *testing.T) {
	v := yangValidator(t)
	if v == nil {
		t.Skip("built without libyang")
	}
	for _, c := range []struct {
		name string
		p    drivers.YANGPayload
	}{
		{"sonic POLL_INTERVAL 50", drivers.YANGPayload{Models: "sonic", ConfigDB: []byte(`{"PFC_WD":{"GLOBAL":{"POLL_INTERVAL":"50"}}}`)}},
		{"srlinux mtu 9600", drivers.YANGPayload{Models: "srlinux", Ops: []drivers.YANGOp{{Op: "update",
			Path: "/interface[name=ethernet-1/1]", Val: []byte(`{"name":"ethernet-1/1","mtu":9600}`)}}}},
	} {
		if got := v(c.p); len(got) == 0 {
			t.Errorf("%s: accepted", c.name)
		} else {
			t.Logf("%s: %s", c.name, got[0])
		}
	}
	for _, c := range []struct {
		name string
		p    drivers.YANGPayload
	}{
		{"sonic POLL_INTERVAL 200", drivers.YANGPayload{Models: "sonic", ConfigDB: []byte(`{"PFC_WD":{"GLOBAL":{"POLL_INTERVAL":"200"}}}`)}},
		{"srlinux mtu 9412", drivers.YANGPayload{Models: "srlinux", Ops: []drivers.YANGOp{{Op: "update",
			Path: "/interface[name=ethernet-1/1]", Val: []byte(`{"name":"ethernet-1/1","mtu":9412}`)}}}},
	} {
		if got := v(c.p); len(got) != 0 {
			t.Errorf("%s: refused: %v", c.name, got)
		}
	}
}
