package host

import (
	"context"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/host/dcbnl"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// Temporary: where the time of one 8-NIC apply goes in the VM.
func TestZZBreakdown(t *testing.T) {
	fabdcbDev(t, 0)
	var names []string
	for i := 0; i < 8; i++ {
		n := fmt.Sprintf("fbd%d", i)
		_ = exec.Command("ip", "link", "del", n).Run()
		run(t, "ip", "link", "add", n, "type", "fabdcb")
		names = append(names, n)
	}
	defer func() {
		for _, n := range names {
			_ = exec.Command("ip", "link", "del", n).Run()
		}
	}()
	hosts := [2]*intentHost{benchIntent(names, 0), benchIntent(names, 1)}
	s, err := open(&intentHostLocal)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	tm := func(what string, fn func(v int)) {
		for v := 0; v < 4; v++ {
			t0 := time.Now()
			fn(v % 2)
			t.Logf("%-10s v%d %8.1f ms", what, v%2, float64(time.Since(t0).Microseconds())/1000)
		}
	}
	tm("mtu", func(v int) {
		for _, n := range hosts[v].NICs {
			l, _ := s.nl.LinkByName(n.Name)
			if err := s.nl.LinkSetMTU(l, n.MTU); err != nil {
				t.Fatal(err)
			}
		}
	})
	tm("up", func(v int) {
		for _, n := range hosts[v].NICs {
			l, _ := s.nl.LinkByName(n.Name)
			_ = s.nl.LinkSetUp(l)
		}
	})
	tm("get", func(v int) {
		for _, n := range hosts[v].NICs {
			if _, err := s.dcb.IEEE(n.Name); err != nil {
				t.Fatal(err)
			}
		}
	})
	tm("ets", func(v int) {
		for _, n := range hosts[v].NICs {
			want := desiredETS(&n)
			if err := s.dcb.UpdateETS(n.Name, func(e *dcbnl.ETS) { e.PrioTC, e.TCTSA, e.TCTxBW = want.PrioTC, want.TCTSA, want.TCTxBW }); err != nil {
				t.Fatal(err)
			}
		}
	})
	tm("pfc", func(v int) {
		for _, n := range hosts[v].NICs {
			en := desiredPFC(&n)
			if err := s.dcb.UpdatePFC(n.Name, func(p *dcbnl.PFC) { p.Enable = en }); err != nil {
				t.Fatal(err)
			}
		}
	})
	tm("app", func(v int) {
		for _, n := range hosts[v].NICs {
			if err := setApps(s, n.Name, desiredApps(&n)); err != nil {
				t.Fatal(err)
			}
		}
	})
	tm("pause", func(v int) {
		for _, n := range hosts[v].NICs {
			if err := setPause(s, n.Name, n.Pause); err != nil {
				t.Fatal(err)
			}
		}
	})
	tm("irq", func(v int) {
		_ = setIRQAffinity(9, spec.CPUSet{v})
	})
	d := New()
	tm("apply", func(v int) {
		h := hosts[v]
		if _, err := d.Apply(context.Background(), drivers.Target{Device: h.Device, Intent: h}, benchChanges(names), drivers.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	tm("ip-mtu", func(v int) {
		for _, n := range hosts[v].NICs {
			run(t, "ip", "link", "set", "dev", n.Name, "mtu", fmt.Sprint(n.MTU))
		}
	})
	tm("true", func(v int) {
		for range hosts[v].NICs {
			run(t, "true")
		}
	})
}

type intentHost = intent.Host

type intentHostT = intent.Host

var intentHostLocal = intentHostT{Connect: spec.Connect{Kind: "local"}}
