package plan

import (
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
)

// TestMarkDisruptiveSteps: a step the driver marks disruptive from what
// it read (its Fields could not tell) makes each of its changes
// disruptive; a step whose mark came from one change's Fields leaves the
// others unmarked.
func TestMarkDisruptiveSteps(t *testing.T) {
	changes := []intent.AttrChange{
		{Path: "nic/e0/dscp/26"}, {Path: "nic/e0/trust"},
		{Path: "nic/e0/mtu", Disruptive: "mtu"}, {Path: "nic/e0/addresses"},
		{Path: "nic/e0/pause"},
	}
	markDisruptiveSteps(changes, []drivers.Change{
		{Paths: []string{"nic/e0/dscp/26", "nic/e0/trust"}, Disruptive: "ice resets the netdev"},
		{Paths: []string{"nic/e0/mtu", "nic/e0/addresses"}, Disruptive: "mtu"},
		{Paths: []string{"nic/e0/pause"}},
	})
	want := []string{"ice resets the netdev", "ice resets the netdev", "mtu", "", ""}
	for i, c := range changes {
		if c.Disruptive != want[i] {
			t.Errorf("%s: disruptive %q, want %q", c.Path, c.Disruptive, want[i])
		}
	}
}
