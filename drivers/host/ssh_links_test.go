package host

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
)

// TestSSHLinks: two hosts reached over real OpenSSH (ssh+netns), cabled
// back to back by a veth pair, each running Debian's lldpd in its
// namespace: plan reads each end's link truth through the host's agent
// (the links op): state up, the veth's speed (SPEED_10000), counters and
// the LLDP neighbour, so the clean cable passes with LLDP read; an end
// taken down is a finding named by port; an agent that predates the
// links op (it refuses the op as unknown, as an older fabctl's does) is
// a note saying it is too old, and the plan goes on.
func TestSSHLinks(t *testing.T) {
	fx := newSSHFixture(t)
	_, lldpErr := exec.LookPath("lldpd")
	testutil.Netns(t, "fabctl-sshl-a")
	testutil.Netns(t, "fabctl-sshl-b")
	testutil.Run(t, "ip", "-n", "fabctl-sshl-a", "link", "add", "v0a", "type", "veth", "peer", "name", "v0b", "netns", "fabctl-sshl-b")
	testutil.Run(t, "ip", "-n", "fabctl-sshl-a", "link", "set", "v0a", "up")
	testutil.Run(t, "ip", "-n", "fabctl-sshl-b", "link", "set", "v0b", "up")
	if lldpErr == nil {
		startLLDPD(t, lldpHost{"h1", "fabctl-sshl-a", "v0a"}, lldpHost{"h2", "fabctl-sshl-b", "v0b"})
	}
	src := strings.NewReplacer("CREDS", fx.keyCreds(), "KNOWN", fx.srv.KnownHosts, "ADDR", fx.srv.Addr).Replace(`
fabric "t" {
  transport = "rocev2"
}
credentials "ssh" {
  username    = "root"
  known_hosts = "KNOWN"
  CREDS
}
host "h1" {
  address     = "ADDR"
  connect     = "ssh+netns:fabctl-sshl-a"
  credentials = "ssh"
  nic "v0a" {
    device = "rxe0"
  }
}
host "h2" {
  address     = "ADDR"
  connect     = "ssh+netns:fabctl-sshl-b"
  credentials = "ssh"
  nic "v0b" {
    device = "rxe1"
  }
}
link {
  endpoints = ["h1:v0a", "h2:v0b"]
  speed     = "10G"
}
`)
	s, f := loadSpec(t, src)
	reg := fx.registry(t, nil)
	ctx := fx.ctx()

	// The driver's own read of h1 over SSH.
	var dl *linktruth.DeviceLinks
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		var err error
		if dl, err = fx.driver().ReadLinks(ctx, fx.target(s, f, 0)); err != nil {
			t.Fatal(err)
		}
		if lldpErr != nil || dl.LLDP && len(dl.Ports["v0a"].Neighbors) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("LLDP did not converge in 10s: %+v", dl)
		}
	}
	o := dl.Ports["v0a"]
	if o == nil || o.Oper != linktruth.Up || o.AdminDown || o.SpeedMbps != 10000 || o.Counters == nil || dl.Source != linkSource {
		t.Fatalf("h1 over SSH: %+v %+v", dl, o)
	}
	if lldpErr == nil {
		if n := o.Neighbors; len(n) != 1 || n[0].SystemName != "h2" || n[0].PortID != "v0b" && n[0].PortDesc != "v0b" ||
			dl.LLDPSource != "lldpcli -u "+LLDPSocket("fabctl-sshl-a")+" -f json show neighbors" {
			t.Fatalf("h1's LLDP over SSH: %+v %+v", dl, n)
		}
	}

	// The plan compares both ends, read over SSH.
	p := plan.Make(ctx, s, f, reg, fx.planOpts(s))
	if p.Links == nil || p.Links.Ends != 2 || len(p.Links.Findings) != 0 || p.Mismatched() || len(p.Links.NotRead) != 0 {
		t.Fatalf("clean cable over SSH: %+v", p.Links)
	}
	if lldpErr == nil && len(p.Links.NoLLDP) != 0 {
		t.Fatalf("LLDP not read over SSH: %v", p.LinkNotes())
	}
	testutil.Run(t, "ip", "-n", "fabctl-sshl-b", "link", "set", "v0b", "down")
	p = plan.Make(ctx, s, f, reg, fx.planOpts(s))
	if got := kinds(p.Links); got != "h1:v0a link-down unchecked;h2:v0b link-down unchecked" {
		t.Fatalf("an end down over SSH: %s", got)
	}
	testutil.Run(t, "ip", "-n", "fabctl-sshl-b", "link", "set", "v0b", "up")

	// An older agent: the agent's path runs a wrapper that answers the
	// links op as an agent from before it does (Request.Check's refusal)
	// and hands every other request to the real agent.
	la, err := shippedAgent(fx.bin)
	if err != nil {
		t.Fatal(err)
	}
	remote := filepath.Join(fx.remote, "fabctl-"+la.build)
	real := filepath.Join(fx.remote, "real-agent")
	if err := os.Rename(remote, real); err != nil {
		t.Fatal(err)
	}
	refusal := `{"protocol":1,"agent":{"agent":"fabctl","protocol":1,"build":"` + la.build + `","os":"linux","arch":"amd64"},"op":"links","host":"h1","ok":false,` +
		`"errors":[{"kind":"request","message":"unknown op \"links\" (want read, plan, apply, rollback or traffic)"}]}`
	wrapper := "#!/bin/sh\nreq=$(cat)\ncase \"$req\" in\n*'\"op\":\"links\"'*) echo '" + refusal + "' ;;\n*) printf '%s' \"$req\" | exec " + real + " \"$@\" ;;\nesac\n"
	if err := os.WriteFile(remote, []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = fx.driver().ReadLinks(ctx, fx.target(s, f, 0))
	if err == nil || !strings.Contains(err.Error(), "h1: agent links: agent failed: the agent on h1 is too old to report links: update it") {
		t.Fatalf("older agent: %v", err)
	}
	p = plan.Make(ctx, s, f, reg, fx.planOpts(s))
	if dp := p.Device("host.h1"); dp.Error != "" {
		t.Fatalf("the plan failed with an older agent: %s", dp.Error)
	}
	if notes := strings.Join(p.LinkNotes(), "\n"); !strings.Contains(notes, "the agent on h1 is too old to report links: update it") || p.Mismatched() {
		t.Fatalf("older agent's notes: %q", notes)
	}
	if lldpErr != nil {
		testutil.SkipOrFail(t, "lldpd is not installed (Debian package lldpd): the LLDP neighbour over SSH is not tested")
	}
}
