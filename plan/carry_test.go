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

// noDCB is the memory driver on a device that has no DCB on its NICs (a
// veth) and no cable-length setting on its switch ports.
type noDCB struct{ memory.Driver }

func (l *noDCB) Unexpressible(_ drivers.Target, desired intent.State) map[string]string {
	out := map[string]string{}
	for k := range desired {
		switch {
		case strings.HasSuffix(k, "/cable"):
			out[k] = "no cable-length setting on this platform"
		case strings.HasPrefix(k, "nic/") && !strings.HasSuffix(k, "/mtu") && !strings.HasSuffix(k, "/addresses"):
			out[k] = "no DCB on this NIC (EOPNOTSUPP)"
		}
	}
	return out
}

// carryPlan plans src with lines added to host h1's nic block (nic) and
// host block (host).
func carryPlan(t *testing.T, nic, host string) *Plan {
	t.Helper()
	text := strings.Replace(src, `device    = "mlx5_0"`, `device    = "mlx5_0"`+"\n"+nic, 1)
	text = strings.Replace(text, `address = "192.0.2.10"`, `address = "192.0.2.10"`+"\n"+host, 1)
	s := testutil.LoadSrc(t, text)
	store := memory.NewStore()
	reg := drivers.NewRegistry()
	for _, n := range []string{"sonic", "eos", "host"} {
		_ = reg.Register(n, func() drivers.Driver { return &noDCB{memory.Driver{Store: store}} })
	}
	return Make(context.Background(), s, intent.Compile(s), reg, Options{})
}

// A NIC without DCB cannot carry the RoCEv2 defaults' lossless RDMA
// class and CNP class; a switch without a cable-length setting still
// carries them (cable length only sizes its headroom).
func TestNotCarried(t *testing.T) {
	p := carryPlan(t, "", "")
	nc := p.NotCarried()
	if len(nc) != 1 || nc[0].Address != "host.h1" {
		t.Fatalf("devices that cannot carry the intent: %v", addrs(nc))
	}
	got := map[string]string{}
	for _, u := range nc[0].NotCarried() {
		got[u.Path] = u.Carries
	}
	for path, want := range map[string]string{
		"nic/eth1/pfc":           "PFC of the lossless priorities 3",
		"nic/eth1/trust":         "classification",
		"nic/eth1/dscp/26":       `class "roce" (lossless, RDMA)`,
		"nic/eth1/tc/3/lossless": "no-drop",
		"nic/eth1/tc/6/sched":    `class "cnp" (CNP) scheduling`,
		"nic/eth1/cnp_dscp":      "CNPs",
		"nic/eth1/roce_mode":     "rdma_cm",
	} {
		if !strings.Contains(got[path], want) {
			t.Errorf("%s carries %q, want it to say %q", path, got[path], want)
		}
	}
	// Settings that only tune the NIC or the lossy default class are
	// not the intent.
	for _, path := range []string{"nic/eth1/pause", "nic/eth1/tc/0/sched", "nic/eth1/irq_cpus", "nic/eth1/cable_len"} {
		if c, ok := got[path]; ok {
			t.Errorf("%s counted as carrying the intent (%q)", path, c)
		}
	}
	leaf := p.Device("leaf1")
	if len(leaf.Unexpressible) == 0 || len(leaf.NotCarried()) != 0 {
		t.Errorf("leaf1: cable lengths are not the intent: %+v", leaf.Unexpressible)
	}
	if lines := NotCarriedSummary(nc[0], 3); len(lines) != 1 || !strings.Contains(lines[0], "and ") || !strings.Contains(lines[0], "EOPNOTSUPP") {
		t.Errorf("summary %q", lines)
	}
}

// accept_not_in_effect on the NIC or the host accepts the gap: the
// device then carries no unaccepted gap, and each accepted setting keeps
// the spec's reason.
func TestNotCarriedAccepted(t *testing.T) {
	for name, tc := range map[string]struct {
		nic, host string
		left      int
	}{
		"nic, everything": {nic: `accept_not_in_effect = { "*" = "veth test host" }`},
		"host, by path":   {host: `accept_not_in_effect = { "nic/*" = "veth test host" }`},
		"nic, pfc only":   {nic: `accept_not_in_effect = { "pfc" = "veth test host" }`, left: -1},
	} {
		t.Run(name, func(t *testing.T) {
			p := carryPlan(t, tc.nic, tc.host)
			h := p.Device("h1")
			left := len(h.NotCarried())
			if tc.left >= 0 && left != tc.left || tc.left < 0 && left == 0 {
				t.Fatalf("%d settings not carried: %+v", left, h.NotCarried())
			}
			for _, u := range h.Unexpressible {
				if u.Path == "nic/eth1/pfc" && u.Accepted != "veth test host" {
					t.Errorf("pfc accepted %q", u.Accepted)
				}
			}
			if tc.left == 0 && len(p.NotCarried()) != 0 {
				t.Errorf("plan still reports %v", addrs(p.NotCarried()))
			}
		})
	}
}

func addrs(ds []*DevicePlan) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Address)
	}
	return out
}
