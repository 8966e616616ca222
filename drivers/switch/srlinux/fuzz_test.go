package srlinux

import (
	"encoding/json"
	"testing"

	"github.com/fabctl/fabctl/drivers/switch/gnmicore"
	"github.com/fabctl/fabctl/internal/switchtest"
)

// FuzzReadJSON feeds arbitrary Get answers to the reader: it must return
// a State (or a JSON error), never panic. Seeds: the configuration the
// testbed leaf's rendering leaves on a device, and odd shapes (prefixed
// names, PHB names, wrong types); more in testdata/fuzz/FuzzReadJSON.
func FuzzReadJSON(f *testing.F) {
	_, fab := load(f, "testbed")
	sw := switchtest.Switch(f, fab, "leaf5", Name)
	ops, err := gnmicore.DesiredOps(Platform{}, sw)
	if err != nil {
		f.Fatal(err)
	}
	tree, err := gnmicore.ApplyOps(Platform{}.Factory(sw), ops)
	if err != nil {
		f.Fatal(err)
	}
	qos, _ := json.Marshal(gnmicore.N(tree).Get("qos").Raw())
	ifs, _ := json.Marshal(gnmicore.N(tree).Get("interface").Raw())
	f.Add(qos, ifs)
	f.Add([]byte(`{"srl_nokia-qos:classifiers":{"dscp-policy":[{"name":"fabctl","dscp":[{"value":"AF31","forwarding-class":"fc3"},{"value":99,"forwarding-class":"fcX"}]}]}}`),
		[]byte(`{"srl_nokia-interfaces:interface":[{"name":"ethernet-1/1","mtu":"9014","ethernet":{"flow-control":{"receive":true}}}]}`))
	f.Add([]byte(`{"pfc-mapping-profile":[{"name":"fabctl-pfc","received-traffic":{"unicast-mapping":{"pfc-queue":[{"enable-pfc":"true","dot1p":[3,4],"forwarding-class":"fc3"}]}},"received-pfc-pause-frames":{"deadlock":{"enable":true}}}],"interfaces":{"interface":[{"interface-id":"ethernet-1/1","pfc":{"pfc-enable":true,"pfc-mapping-profile":"fabctl-pfc"}}]}}`),
		[]byte(`[{"name":"ethernet-1/1"},7,null]`))
	f.Add([]byte(`[]`), []byte(`{}`))
	f.Fuzz(func(t *testing.T, qos, ifs []byte) {
		st, err := ReadJSON(qos, ifs, sw)
		if err == nil && st == nil {
			t.Fatal("nil state without error")
		}
	})
}

// FuzzRenderedLines (issue 37, issue 30 item 5): any spec the loader
// accepts renders an SR Linux request file gnmic reads as data (no
// template action from a name such as ethernet-1/{{.TargetName}}), with
// SR Linux's port names only (switchtest.FuzzGNMI).
func FuzzRenderedLines(f *testing.F) { switchtest.FuzzGNMI(f, Name, Descriptor.Ports, New) }
