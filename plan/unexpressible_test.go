package plan

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/memory"
	"github.com/fabctl/fabctl/intent"
)

// limited is the memory driver on a platform without cable lengths.
type limited struct{ memory.Driver }

func (l *limited) Unexpressible(_ drivers.Target, desired intent.State) map[string]string {
	out := map[string]string{}
	for k := range desired {
		if strings.HasSuffix(k, "/cable") {
			out[k] = "no cable-length setting on this platform"
		}
	}
	return out
}

func TestUnexpressible(t *testing.T) {
	s, f, store, _ := setup(t)
	reg := drivers.NewRegistry()
	for _, n := range []string{"sonic", "eos", "host"} {
		_ = reg.Register(n, func() drivers.Driver { return &limited{memory.Driver{Store: store}} })
	}
	p := Make(context.Background(), s, f, reg, Options{})
	leaf := p.Device("leaf1")
	if len(leaf.Unexpressible) != 2 {
		t.Fatalf("unexpressible %+v", leaf.Unexpressible)
	}
	for _, c := range leaf.Changes {
		if strings.HasSuffix(c.Path, "/cable") {
			t.Errorf("unexpressible setting planned as a change: %s", c.Path)
		}
	}
	if _, ok := leaf.Desired["port/Ethernet0/cable"]; ok {
		t.Errorf("unexpressible setting left in Desired (apply would never verify)")
	}
	// Converge: only the expressible settings are needed.
	for _, d := range p.Devices {
		store.Set(d.Name, d.Desired)
	}
	p = Make(context.Background(), s, f, reg, Options{})
	if p.HasChanges() {
		t.Errorf("plan does not converge: %+v", p.Counts())
	}
	var b bytes.Buffer
	if err := WriteHuman(&b, p, ViewOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Not expressible on these platforms") || !strings.Contains(b.String(), "port/Ethernet0/cable") {
		t.Errorf("human view:\n%s", b.String())
	}
	b.Reset()
	if err := WriteMarkdown(&b, p, ViewOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Not expressible") {
		t.Errorf("markdown view lacks the section")
	}
}
