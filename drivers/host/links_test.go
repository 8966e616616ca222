package host

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
)

const linksSpec = `
fabric "t" {
  transport = "rocev2"
}
host "h1" {
  connect = "netns:fabctl-links-a"
  nic "v0a" {
    device = "rxe0"
  }
}
host "h2" {
  connect = "netns:fabctl-links-b"
  nic "v0b" {
    device = "rxe1"
  }
}
link {
  endpoints = ["h1:v0a", "h2:v0b"]
  speed     = "SPEED"
}
`

// Two hosts cabled back to back by a real veth pair: plan reads each
// end's state, speed (veth reports SPEED_10000, drivers/net/veth.c
// veth_get_link_ksettings) and counters from the kernel; an end taken
// down and a link declared at another speed are findings no change fixes,
// named by port; LLDP is said not read on hosts, never passed.
func TestReadLinksVeth(t *testing.T) {
	testutil.RequireRoot(t, rootWhy)
	testutil.Netns(t, "fabctl-links-a")
	testutil.Netns(t, "fabctl-links-b")
	testutil.Run(t, "ip", "-n", "fabctl-links-a", "link", "add", "v0a", "type", "veth", "peer", "name", "v0b", "netns", "fabctl-links-b")
	testutil.Run(t, "ip", "-n", "fabctl-links-a", "link", "set", "v0a", "up")
	testutil.Run(t, "ip", "-n", "fabctl-links-b", "link", "set", "v0b", "up")
	reg := registry(t)
	planOf := func(speed string) *plan.Plan {
		s, f := loadSpec(t, strings.Replace(linksSpec, "SPEED", speed, 1))
		return plan.Make(context.Background(), s, f, reg, plan.Options{})
	}

	p := planOf("10G")
	if p.Links == nil || p.Links.Ends != 2 || len(p.Links.Findings) != 0 || p.Mismatched() {
		t.Fatalf("clean veth: %+v", p.Links)
	}
	if notes := strings.Join(p.LinkNotes(), "\n"); !strings.Contains(notes, "LLDP neighbours not read: no lldpd runs for netns fabctl-links-a (no control socket /run/lldpd.netns-fabctl-links-a.socket)") {
		t.Fatalf("notes %q", notes)
	}
	p = planOf("25G")
	if got := kinds(p.Links); got != "h1:v0a speed mismatch;h2:v0b speed mismatch" {
		t.Fatalf("findings %s", got)
	}
	// h2's NIC administratively down (as testbed up leaves a NIC for
	// apply to bring up): configuration, not a cable; never a match.
	testutil.Run(t, "ip", "-n", "fabctl-links-b", "link", "set", "v0b", "down")
	p = planOf("10G")
	if got := kinds(p.Links); got != "h1:v0a link-down unchecked;h2:v0b link-down unchecked" || p.Mismatched() {
		t.Fatalf("findings %s", got)
	}
	// The cable pulled: h1's far end leaves h2 (moved to a namespace of
	// its own), so h1 is down with its own port up, and h2 no longer has
	// the port: a mismatch no change fixes, named by port.
	testutil.Netns(t, "fabctl-links-c")
	testutil.Run(t, "ip", "-n", "fabctl-links-b", "link", "set", "v0b", "netns", "fabctl-links-c")
	p = planOf("10G")
	if got := kinds(p.Links); got != "h1:v0a link-down mismatch;h2:v0b unreadable unchecked" || !p.Mismatched() {
		t.Fatalf("findings %s", got)
	}
	if f := p.Device("host.h1").Findings; len(f) != 1 || f[0].Path != "port/v0a/link" || !strings.Contains(f[0].Message, "h1:v0a: link to h2:v0b is down") {
		t.Fatalf("h1 findings %+v", f)
	}
}

// Both hosts run Debian's lldpd on the documented socket
// (LLDPSocket): each reads the other as its LLDP neighbour from
// `lldpcli -f json show neighbors`, so the clean cable passes with LLDP
// read; a host advertising another name than the spec's lldp_name is
// miswired on its peer's end, named by port with what was heard.
func TestReadLinksLLDP(t *testing.T) {
	testutil.RequireRoot(t, rootWhy)
	if _, err := exec.LookPath("lldpd"); err != nil {
		testutil.SkipOrFail(t, "lldpd is not installed (Debian package lldpd): the hosts' LLDP read is not tested")
	}
	testutil.Netns(t, "fabctl-links-a")
	testutil.Netns(t, "fabctl-links-b")
	testutil.Run(t, "ip", "-n", "fabctl-links-a", "link", "add", "v0a", "type", "veth", "peer", "name", "v0b", "netns", "fabctl-links-b")
	testutil.Run(t, "ip", "-n", "fabctl-links-a", "link", "set", "v0a", "up")
	testutil.Run(t, "ip", "-n", "fabctl-links-b", "link", "set", "v0b", "up")
	startLLDPD(t, lldpHost{"h1", "fabctl-links-a", "v0a"}, lldpHost{"h2", "fabctl-links-b", "v0b"})
	reg := registry(t)
	planOf := func(src string) *plan.Plan {
		s, f := loadSpec(t, src)
		return plan.Make(context.Background(), s, f, reg, plan.Options{})
	}
	clean := strings.Replace(linksSpec, "SPEED", "10G", 1)
	var p *plan.Plan
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		p = planOf(clean)
		if p.Links != nil && len(p.Links.NoLLDP) == 0 && len(p.Links.Findings) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("LLDP did not converge in 10s: %+v; not read %+v", p.Links.Findings, p.Links.NoLLDP)
		}
	}
	if p.Links.Ends != 2 || p.Mismatched() {
		t.Fatalf("clean: %+v", p.Links)
	}
	p = planOf(strings.Replace(clean, `host "h2" {`, `host "h2" {
  lldp_name = "h2.other"`, 1))
	if got := kinds(p.Links); got != "h1:v0a miswired mismatch" || !p.Mismatched() {
		t.Fatalf("findings %s", got)
	}
	if f := p.Links.Findings[0]; f.Have != "h2:v0b" || f.Want != "h2.other:v0b" {
		t.Fatalf("finding %+v", f)
	}
}

// lldpHost is a namespace host lldpd runs for: its system name, its
// namespace and the NIC lldpd listens on.
type lldpHost struct{ name, ns, nic string }

// startLLDPD runs Debian's lldpd in each host's namespace on the
// documented control socket (LLDPSocket), advertising the host's name
// every second, stopped at cleanup. The caller checked that lldpd is
// installed.
func startLLDPD(t *testing.T, hosts ...lldpHost) {
	t.Helper()
	// lldpd reads -O as its unprivileged user (_lldpd): the directory
	// must let it in.
	dir, err := os.MkdirTemp("", "fabctl-lldpd-")
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for _, h := range hosts {
		conf := filepath.Join(dir, h.name+".conf")
		if err := os.WriteFile(conf, []byte("configure system hostname "+h.name+"\nconfigure lldp tx-interval 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		sock := LLDPSocket(h.ns)
		cmd := exec.Command("ip", "netns", "exec", h.ns, "lldpd", "-d", "-d", "-u", sock, "-I", h.nic, "-C", h.nic, "-O", conf)
		var logb strings.Builder
		cmd.Stdout, cmd.Stderr = &logb, &logb
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("%s's lldpd said:\n%s", h.name, logb.String())
			}
		})
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
			_ = os.Remove(sock)
		})
	}
}

func kinds(r *linktruth.Report) string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, f.End+" "+f.Kind+" "+f.Verdict)
	}
	return strings.Join(out, ";")
}
