package plan

import (
	"context"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
)

// unmanagedSrc is src with settings left as the devices run them.
var unmanagedSrc = strings.NewReplacer(
	`  role     = "leaf"
`, `  role     = "leaf"
  unmanaged = {
    "trust"              = "the site's classification"
    "port/Ethernet0/pfc" = "storage port, PFC by the storage team"
    "tc/1"               = "a vendor profile's class"
  }
`,
	`    addresses = ["10.0.0.1/31"]
`, `    addresses = ["10.0.0.1/31"]
    unmanaged = { "tos" = "set by the job launcher" }
`).Replace(src)

// TestPlanUnmanaged (issue 36): a difference under an unmanaged key is
// not a change, is listed with the device's value and the reason, is not
// in the desired state (so nothing renders or verifies it), and neither
// plans nor drifts; a difference elsewhere still plans.
func TestPlanUnmanaged(t *testing.T) {
	_, _, store, reg := setup(t)
	s := testutil.LoadSrc(t, unmanagedSrc)
	f := intent.Compile(s)
	full := map[string]intent.State{}
	for _, u := range Units(f) {
		live := intent.State{}
		for k, v := range u.State {
			live[k] = v
		}
		switch u.Device.Name {
		case "leaf1":
			live["trust"] = "both"
			live["port/Ethernet0/pfc"] = ""
			live["tc/1/lossless"] = "false" // a class the spec does not have
		case "h1":
			live["nic/eth1/tos"] = "0"
		}
		full[u.Device.Addr()] = u.State
		store.Set(u.Device.Name, live)
	}
	p := Make(context.Background(), s, f, reg, Options{Applied: map[string]intent.State{
		"switch.leaf1": {"trust": "dscp", "port/Ethernet0/pfc": "3"},
	}})
	if p.HasChanges() {
		for _, d := range p.Devices {
			t.Errorf("%s changes %+v", d.Address, d.Changes)
		}
	}
	for _, d := range p.Devices {
		if len(d.Drift) > 0 {
			t.Errorf("%s drift on unmanaged settings: %+v", d.Address, d.Drift)
		}
		if Expressed(full[d.Address], d).Fingerprint() != d.Desired.Fingerprint() {
			t.Errorf("%s: Expressed of the compiled state is not the plan's desired state", d.Address)
		}
	}
	leaf := p.Device("leaf1")
	got := map[string]Unmanaged{}
	for _, u := range leaf.Unmanaged {
		got[u.Path] = u
	}
	for path, want := range map[string]Unmanaged{
		"trust":              {Live: "both", Spec: "dscp", Differs: true, Reason: "the site's classification"},
		"port/Ethernet0/pfc": {Live: "", Spec: "3", Differs: true, Reason: "storage port, PFC by the storage team"},
		"tc/1/lossless":      {Live: "false", Differs: true, Reason: "a vendor profile's class"},
	} {
		want.Path = path
		if got[path] != want {
			t.Errorf("leaf1 unmanaged %s: %+v, want %+v", path, got[path], want)
		}
		if _, ok := leaf.Desired[path]; ok {
			t.Errorf("leaf1 desired state names unmanaged %s", path)
		}
	}
	if n := len(leaf.UnmanagedDiffering()); n != 3 {
		t.Errorf("leaf1: %d differing unmanaged settings, want 3: %+v", n, leaf.Unmanaged)
	}
	h := p.Device("h1")
	if len(h.Unmanaged) != 1 || h.Unmanaged[0] != (Unmanaged{Path: "nic/eth1/tos", Live: "0", Spec: full["host.h1"]["nic/eth1/tos"], Differs: true, Reason: "set by the job launcher"}) {
		t.Errorf("h1 unmanaged %+v", h.Unmanaged)
	}
	// Apply's verification does not see the unmanaged settings either.
	if rem := leaf.WithoutUnexpressible(intent.Diff(leaf.Desired, store.Get("leaf1"), nil)); len(rem) > 0 {
		t.Errorf("verification of leaf1 finds %+v", rem)
	}

	// A managed difference still plans, and its steps name no unmanaged
	// setting.
	live := store.Get("leaf1")
	live["port/Ethernet1/mtu"] = "1500"
	store.Set("leaf1", live)
	p = Make(context.Background(), s, f, reg, Options{})
	leaf = p.Device("leaf1")
	if len(leaf.Changes) != 1 || leaf.Changes[0].Path != "port/Ethernet1/mtu" {
		t.Fatalf("changes %+v", leaf.Changes)
	}
	for _, st := range leaf.Steps {
		for _, path := range st.Paths {
			if _, ok := s.Switch("leaf1").Unmanaged.Match(path); ok {
				t.Errorf("step %q sends unmanaged %s", st.Summary, path)
			}
		}
	}
}
