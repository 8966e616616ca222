package readback

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/memory"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
)

const src = `
fabric "t" {
  transport = "rocev2"
  mtu       = 9000
}
switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
}
host "h1" {
  address = "192.0.2.10"
  nic "eth1" {
    device    = "mlx5_0"
    addresses = ["10.0.0.1/31"]
  }
}
host "h2" {
  address = "192.0.2.11"
  nic "eth1" {
    device    = "mlx5_1"
    addresses = ["10.0.0.3/31"]
  }
}
`

// applied is a memory store holding every device's desired state, and a
// registry of memory drivers over it.
func applied(t *testing.T, s *spec.Spec) (*memory.Store, *drivers.Registry) {
	t.Helper()
	store := memory.NewStore()
	for _, u := range plan.Units(intent.Compile(s)) {
		store.Set(u.Device.Name, u.State)
	}
	reg := drivers.NewRegistry()
	for _, n := range []string{"sonic", "host"} {
		if err := reg.Register(n, func() drivers.Driver { return &memory.Driver{Store: store} }); err != nil {
			t.Fatal(err)
		}
	}
	return store, reg
}

func TestRun(t *testing.T) {
	s := testutil.LoadSrc(t, src)
	store, reg := applied(t, s)
	ctx := context.Background()

	rb := Run(ctx, s, reg, Options{Parallelism: 2})
	if rb.Failed() || rb.Match != 3 || rb.Differ+rb.Errored != 0 || rb.Skipped != "" {
		t.Fatalf("applied fabric: %+v", rb)
	}

	st := store.Get("leaf1")
	if len(st) == 0 {
		t.Fatal("leaf1 has no desired state")
	}
	for k := range st {
		st[k] += "-changed"
		break
	}
	store.Set("leaf1", st)
	store.FailRead["h2"] = errors.New("connection refused")
	rb = Run(ctx, s, reg, Options{Parallelism: 2})
	if !rb.Failed() || rb.Match != 1 || rb.Differ != 1 || rb.Errored != 1 {
		t.Fatalf("drifted fabric: %+v", rb)
	}
	byAddr := map[string]Device{}
	for _, d := range rb.Devices {
		byAddr[d.Address] = d
	}
	if d := byAddr["switch.leaf1"]; d.Status != Differs || len(d.Diffs) == 0 {
		t.Errorf("leaf1: %+v", d)
	}
	if d := byAddr["host.h2"]; d.Status != Error || d.Error == "" {
		t.Errorf("h2: %+v", d)
	}
	if d := byAddr["host.h1"]; d.Status != Match {
		t.Errorf("h1: %+v", d)
	}
}

// A spec without devices is skipped, not passed.
func TestRunNoDevices(t *testing.T) {
	s := testutil.LoadSrc(t, "fabric \"t\" {\n  transport = \"rocev2\"\n  mtu = 9000\n}\n")
	_, reg := applied(t, s)
	rb := Run(context.Background(), s, reg, Options{})
	if rb.Skipped == "" || rb.Failed() || len(rb.Devices) != 0 {
		t.Fatalf("%+v", rb)
	}
	var none *Result
	if none.Failed() {
		t.Fatal("a read-back that did not run failed")
	}
}

// noDCB is the memory driver on a device without DCB on its NICs.
type noDCB struct{ memory.Driver }

func (d *noDCB) Unexpressible(_ drivers.Target, desired intent.State) map[string]string {
	out := map[string]string{}
	for k := range desired {
		if strings.HasSuffix(k, "/pfc") && strings.HasPrefix(k, "nic/") || strings.HasSuffix(k, "/cable") {
			out[k] = "no DCB"
		}
	}
	return out
}

// A device whose lossless class's settings are not in effect fails the
// read-back even though what it can express matches; accepted, it
// matches and is counted as accepted; a gap that only tunes the device
// fails only under Strict.
func TestRunNotCarried(t *testing.T) {
	for _, tc := range []struct {
		name            string
		accept          string
		strict          bool
		match, notCarry int
		accepted        int
	}{
		{name: "gap", match: 1, notCarry: 2},
		{name: "accepted", accept: `accept_not_in_effect = { "pfc" = "test host" }`, match: 3, accepted: 2},
		{name: "strict", accept: `accept_not_in_effect = { "pfc" = "test host" }`, strict: true, match: 2, notCarry: 1, accepted: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.ReplaceAll(src, `    addresses = [`, "    "+tc.accept+"\n    addresses = [")
			src += "link {\n  endpoints = [\"leaf1:Ethernet0\", \"h1:eth1\"]\n  speed = \"100G\"\n  cable_length = \"3m\"\n}\n"
			s := testutil.LoadSrc(t, src)
			store := memory.NewStore()
			reg := drivers.NewRegistry()
			for _, n := range []string{"sonic", "host"} {
				_ = reg.Register(n, func() drivers.Driver { return &noDCB{memory.Driver{Store: store}} })
			}
			p := plan.Make(context.Background(), s, intent.Compile(s), reg, plan.Options{})
			for _, d := range p.Devices {
				st := intent.State{}
				for k, v := range d.Desired {
					st[k] = v
				}
				store.Set(d.Name, st)
			}
			rb := Run(context.Background(), s, reg, Options{Strict: tc.strict})
			if rb.Match != tc.match || rb.NotCarried != tc.notCarry || rb.Accepted != tc.accepted || rb.Failed() != (tc.notCarry > 0) {
				t.Fatalf("match %d not carried %d accepted %d failed %v: %+v", rb.Match, rb.NotCarried, rb.Accepted, rb.Failed(), rb.Devices)
			}
			for _, d := range rb.Devices {
				if d.Status == NotCarried && len(d.NotInEffect) == 0 {
					t.Errorf("%s: not carried without the settings", d.Address)
				}
			}
		})
	}
}
