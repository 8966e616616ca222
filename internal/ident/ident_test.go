package ident

import (
	"strings"
	"testing"
)

func TestGrammars(t *testing.T) {
	for _, c := range []struct {
		name  string
		check func(string) error
		ok    []string
		bad   []string
	}{
		{"Netdev", Netdev, []string{"eth1", "ens1f0np0", "ib0", "eth1.100", "bond0", "rail7", "FABDCB_NIC"},
			[]string{"", ".", "..", "../../etc/x", "eth 1", "eth1\n", "eth1;x", "enp1s0f0np0verylong", "-x", "a/b", "a:b", "eth\u202e1"}},
		{"RDMADevice", RDMADevice, []string{"mlx5_0", "rxe0", "irdma0", "bnxt_re0", "siw0"}, []string{"", "..", "mlx5_0;reboot", "a/b", "x y"}},
		{"UserName", UserName, []string{"admin", "cumulus", "svc.fabctl@corp.example", "a-b_c"}, []string{"", "-l", "admin\nenable", "a b", "a;b", strings.Repeat("a", 65)}},
		{"Address", Address, []string{"192.0.2.1", "192.0.2.1:22", "leaf1", "leaf1.example.com:2222", "2001:db8::1", "[2001:db8::1]:22", "a-b.c", "host."},
			[]string{"", "192.0.2.1:0", "192.0.2.1:65536", "a..b", "a..", "-oProxyCommand=sh", "h\nx", "h x", "[2001:db8::1", "[1.2.3.4]:22", "h:", "a_b", "[::1]x"}},
		{"Description", Description, []string{"", "fabric-facing: to spine1", "host-facing: GPU RoCE NIC", "management uplink, lossy", "rack 3 (row B) 50%"},
			[]string{"a\nb", "to spine1?", "x | include y", "a $(reboot)", "it's", "a\u202eb", strings.Repeat("x", 241), "a\x00b"}},
		{"Path", Path, []string{"/etc/nccl.conf", "/run/fabctl/env-1"}, []string{"", "rel/x", "/a/../b", "/a//b", "/a b", "/a;b", "/a/./b"}},
		{"Port", Port, []string{"Ethernet0", "Ethernet1/1", "swp1s0", "ethernet-1/1", "1"}, []string{"", "Ethernet0\n", "swp2 ; touch FILE ;", "E{{.T}}", "-x", "/x", "a]b", strings.Repeat("x", 65)}},
		{"Line", Line, []string{"interface Ethernet1", "nv set qos pfc default-global tx enable", "naïve"}, []string{"a\nb", "a\rb", "a\x1bb", "a\x00", "a\u0085b", "a\u202eb", "a\xffb"}},
	} {
		for _, v := range c.ok {
			if err := c.check(v); err != nil {
				t.Errorf("%s(%q) = %v, want ok", c.name, v, err)
			}
		}
		for _, v := range c.bad {
			if err := c.check(v); err == nil {
				t.Errorf("%s(%q) accepted", c.name, v)
			}
		}
	}
	if Template("Ethernet{{.TargetName}}") != 8 || Template("Ethernet0") != -1 {
		t.Error("Template")
	}
}
