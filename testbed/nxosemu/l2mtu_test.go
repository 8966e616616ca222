package nxosemu

import (
	"strings"
	"testing"
)

// TestL2PortMTU: a layer-2 port takes only the default or the system
// jumbo MTU (Cisco TechNote 118994); `no switchport` makes it routed,
// where any MTU in range is taken; the default mode comes from `system
// default switchport`, shown by the command cisco.nxos reads it with.
func TestL2PortMTU(t *testing.T) {
	sw, c := dial(t)
	if out := strings.TrimSpace(send(t, c, "show running-config all | incl 'system default switchport'")); out != "no system default switchport" {
		t.Fatalf("default mode line: %q", out)
	}
	sw.mu.Lock()
	sw.running.DefaultSwitchport = true
	sw.mu.Unlock()
	if out := strings.TrimSpace(send(t, c, "show running-config all | incl 'system default switchport'")); out != "system default switchport" {
		t.Fatalf("default mode line: %q", out)
	}
	send(t, c, "configure terminal", "interface Ethernet1/1")
	out, err := c.Send("mtu 9000")
	if err == nil || !strings.Contains(out+err.Error(), "ERROR: MTU can only be default or system jumbo MTU") {
		t.Fatalf("mtu 9000 on an L2 port: %q, %v", out, err)
	}
	send(t, c, "mtu 9216", "interface Ethernet1/2", "no switchport", "mtu 9000", "interface Ethernet1/3", "switchport", "end")
	run := string(sw.RunningConfig())
	for _, want := range []string{"system default switchport\n", "interface Ethernet1/1\n  mtu 9216\n",
		"interface Ethernet1/2\n  no switchport\n  mtu 9000\n", "interface Ethernet1/3\n  switchport\n"} {
		if !strings.Contains(run, want) {
			t.Fatalf("running-config lacks %q:\n%s", want, run)
		}
	}
}
