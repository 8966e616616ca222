package openconfig

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/fabctl/fabctl/drivers/switch/gnmicore"
	"github.com/fabctl/fabctl/internal/switchtest"
)

// FuzzReadJSON feeds arbitrary Get answers to the reader: it must return
// a State (or a JSON error), never panic. Seeds: the configuration the
// test leaf's rendering leaves on a device, and odd shapes (prefixed
// names, identities, wrong types); more in testdata/fuzz/FuzzReadJSON.
func FuzzReadJSON(f *testing.F) {
	_, fab := load(f, filepath.Join("testdata", "oc.fab.hcl"))
	sw := switchtest.Switch(f, fab, "leaf1", Name)
	ops, err := gnmicore.DesiredOps(Platform{}, sw)
	if err != nil {
		f.Fatal(err)
	}
	tree, err := gnmicore.ApplyOps(Platform{}.Factory(sw), ops)
	if err != nil {
		f.Fatal(err)
	}
	qos, _ := json.Marshal(gnmicore.N(tree).Get("qos").Raw())
	ifs, _ := json.Marshal(gnmicore.N(tree).Get("interfaces").Raw())
	f.Add(qos, ifs)
	f.Add([]byte(`{"openconfig-qos:qos":{"queues":{"queue":[{"name":"Q3","config":{"queue-id":"3"}}]},"scheduler-policies":{"scheduler-policy":[{"name":"fabctl","schedulers":{"scheduler":[{"config":{"priority":"openconfig-qos:STRICT"},"inputs":{"input":[{"config":{"queue":"Q3"}}]}}]}}]}}}`),
		[]byte(`{"interface":[{"name":"Ethernet0","config":{"mtu":"x"},"openconfig-if-ethernet:ethernet":{"config":{"enable-flow-control":"maybe"}}}]}`))
	f.Add([]byte(`{"classifiers":{"classifier":[{"name":"fabctl-dscp-ipv4","terms":{"term":[{"conditions":{"ipv4":{"config":{"dscp-set":[1e3,-1,"26",null]}}}}]}}]}}`),
		[]byte(`{"interface":{"name":"Ethernet0"}}`))
	f.Add([]byte(`null`), []byte(`[1,2]`))
	f.Fuzz(func(t *testing.T, qos, ifs []byte) {
		st, err := ReadJSON(qos, ifs, sw)
		if err == nil && st == nil {
			t.Fatal("nil state without error")
		}
	})
}

// FuzzRenderedLines (issue 37, issue 30 item 5): any spec the loader
// accepts renders an OpenConfig request file gnmic reads as data (no
// template action from a name such as Ethernet{{.TargetName}}), with
// the platform's port names only (switchtest.FuzzGNMI).
func FuzzRenderedLines(f *testing.F) { switchtest.FuzzGNMI(f, Name, Descriptor.Ports, New) }
