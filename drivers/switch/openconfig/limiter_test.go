package openconfig

import (
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
)

func TestUnexpressible(t *testing.T) {
	desired := intent.State{
		"trust": "pcp", "port/Ethernet1/1/trust": "pcp", "port/Ethernet0/trust": "dscp",
		"tc/3/lossless": "true", "tc/0/lossless": "false", "tc/3/sched": "ets", "tc/3/ecn/min": "150000",
		"port/Ethernet0/pfc": "3", "port/Ethernet0/pfcwd": "true", "port/Ethernet0/cable": "3m",
		"port/Ethernet0/mtu": "9000", "port/Ethernet0/pause": "false",
		"pfcwd/detect": "200ms", "pfcwd/action": "drop", "buffer/headroom": "256000",
	}
	got := New().(drivers.Limiter).Unexpressible(drivers.Target{}, desired)
	want := []string{"trust", "port/Ethernet1/1/trust", "tc/3/lossless", "tc/0/lossless", "port/Ethernet0/pfc",
		"port/Ethernet0/pfcwd", "port/Ethernet0/cable", "pfcwd/detect", "pfcwd/action", "buffer/headroom"}
	for _, k := range want {
		if got[k] == "" {
			t.Errorf("%s: not listed as unexpressible", k)
		}
	}
	if len(got) != len(want) {
		t.Errorf("unexpressible %v, want exactly %v", got, want)
	}
	if !strings.Contains(got["port/Ethernet0/pfc"], "no PFC") || !strings.Contains(got["trust"], "802.1p") {
		t.Errorf("reasons: %v", got)
	}
}

// TestFindings: the plan says what the payload assumes exists (the
// interfaces) and that persistence is the operator's.
func TestFindings(t *testing.T) {
	sw := &intent.Switch{Ports: []intent.Port{{Name: "Ethernet0"}, {Name: "Ethernet4"}}}
	fs := New().(drivers.Reporter).Findings(drivers.Target{Intent: sw})
	if len(fs) != 2 || !strings.Contains(fs[0].Message, "Ethernet0, Ethernet4") || fs[1].Path != drivers.PathSaved ||
		!strings.Contains(fs[1].Message, "persistence is the operator's") {
		t.Errorf("findings: %+v", fs)
	}
}
