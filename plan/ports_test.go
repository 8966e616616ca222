package plan

import (
	"context"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/memory"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
)

// inventoried is the memory driver on a switch whose read lists its
// ports (drivers.FactPorts).
type inventoried struct {
	memory.Driver
	ports []string
}

func (d *inventoried) Read(ctx context.Context, t drivers.Target) (intent.State, error) {
	st, err := d.Driver.Read(ctx, t)
	if err != nil {
		return nil, err
	}
	if d.ports != nil && t.Device.Kind == intent.KindSwitch {
		drivers.PutPorts(st, d.ports)
	}
	return st, nil
}

// A spec port the switch does not have makes the device unplanned, with
// the port, the nearest names it has and where the spec names it.
func TestMissingPort(t *testing.T) {
	s := testutil.LoadSrc(t, src)
	f := intent.Compile(s)
	for _, tc := range []struct {
		name  string
		ports []string
		want  []string
	}{
		{"inventory lacks Ethernet1", []string{"Ethernet0", "Ethernet4", "Ethernet8", "Ethernet12", "Management0"},
			[]string{`switch.leaf1 has no port "Ethernet1" (nearest: Ethernet0, Ethernet4, Ethernet8)`, "Ethernet1 at t.fab.hcl:"}},
		{"both ports missing", []string{"swp1", "swp2"}, []string{`no ports "Ethernet0", "Ethernet1"`}},
		{"every port there", []string{"Ethernet0", "Ethernet1"}, nil},
		{"no inventory read", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := memory.NewStore()
			reg := drivers.NewRegistry()
			for _, n := range []string{"sonic", "eos", "host"} {
				_ = reg.Register(n, func() drivers.Driver { return &inventoried{memory.Driver{Store: store}, tc.ports} })
			}
			leaf := Make(context.Background(), s, f, reg, Options{}).Device("leaf1")
			for _, w := range tc.want {
				if !strings.Contains(leaf.Error, w) {
					t.Errorf("error %q does not say %q", leaf.Error, w)
				}
			}
			if tc.want == nil && leaf.Error != "" {
				t.Errorf("error %q", leaf.Error)
			}
			if tc.want != nil && (leaf.HasChanges() || len(leaf.Steps) > 0) {
				t.Errorf("a switch without the spec's port was planned: %d changes", len(leaf.Changes))
			}
		})
	}
}

func TestNearestNames(t *testing.T) {
	inv := []string{"Ethernet1", "Ethernet2", "Ethernet10", "Ethernet1/1", "Management0", "Loopback0"}
	for name, want := range map[string]string{
		"Ethernet1/2": "Ethernet1/1,Ethernet1,Ethernet2",
		"Ethernet3":   "Ethernet1,Ethernet2,Ethernet10",
		"swp1":        "",
	} {
		if got := strings.Join(nearestNames(name, inv, 3), ","); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
}
