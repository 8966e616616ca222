package intent

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/spec"
)

const ibSmall = `
fabric "t" {
  transport = "infiniband"
  rdma_mtu  = 2048
}
class "default" {
  role      = "other"
  default   = true
  sl        = 3
  bandwidth = 100
}
infiniband {
  subnet_manager = "sm"
  partition "compute" {
    pkey            = "0x8001"
    members         = ["sm:ib0", "cn1", "SELF"]
    limited_members = ["cn1:ib0", "cn2:ib0"]
    ipoib           = true
  }
}
host "sm" {
  address = "192.0.2.1"
  sudo    = true
  nic "ib0" {
    guid = "0x0000000000000001"
  }
}
host "cn1" {
  address = "192.0.2.2"
  nic "ib0" {
    guid = "0x0000000000000002"
  }
  nic "ib1" {
    guid = "0x0000000000000003"
  }
}
host "cn2" {
  address = "192.0.2.3"
  nic "ib0" {}
}
`

func TestCompileSubnetManager(t *testing.T) {
	f := compile(t, ibSmall)
	if len(f.SubnetManagers) != 1 {
		t.Fatalf("%d subnet managers", len(f.SubnetManagers))
	}
	sm := f.SubnetManagers[0]
	wantDev := Device{Kind: KindSM, Name: "sm", Platform: PlatformOpenSM, Driver: "ssh", Address: "192.0.2.1", Role: "subnet-manager"}
	if sm.Device != wantDev || !sm.Sudo || sm.Fabric != "t" {
		t.Errorf("device %+v sudo %v fabric %q", sm.Device, sm.Sudo, sm.Fabric)
	}
	if !sm.QoS || sm.DefaultSL != 3 {
		t.Errorf("QoS %v DefaultSL %d: a class on SL 3 needs QoS on", sm.QoS, sm.DefaultSL)
	}
	if len(sm.Partitions) != 2 || sm.Partitions[0].Name != "compute" || sm.Partitions[1].PKey != DefaultPKey || !sm.Partitions[1].Implicit {
		t.Fatalf("partitions %+v", sm.Partitions)
	}
	// Full wins over limited; a bare host is every NIC; keywords last; a
	// NIC without a GUID keeps an empty ID.
	want := []PartitionMember{
		{"", "cn2:ib0", false},
		{"0x0000000000000001", "sm:ib0", true},
		{"0x0000000000000002", "cn1:ib0", true},
		{"0x0000000000000003", "cn1:ib1", true},
		{"SELF", "", true},
	}
	if got := sm.Partitions[0].Members; !reflect.DeepEqual(got, want) {
		t.Errorf("members:\n got  %+v\n want %+v", got, want)
	}
	if d := sm.Partitions[1]; d.MTU != 2048 || !d.IPoIB || d.Members[0].ID != "ALL" || !d.Members[0].Full {
		t.Errorf("implicit default partition %+v", d)
	}
	st := sm.Flatten()
	for k, v := range map[string]string{
		"partitions/compute/pkey":                      "0x0001",
		"partitions/compute/member/0x0000000000000002": "full",
		"partitions/compute/member/?cn2:ib0":           "limited",
		"partitions/Default/member/ALL":                "full",
		"opensm/qos":                                   "TRUE",
		"qos-policy/level/DEFAULT/sl":                  "3",
		"qos-policy/match/1":                           "pkey=0x0001 qos-level-name=partition-compute",
		"qos-policy/level/partition-compute/mtu-limit": "4096",
	} {
		if st[k] != v {
			t.Errorf("%s = %q, want %q", k, st[k], v)
		}
	}
	if _, ok := st["opensm/qos_sl2vl"]; ok {
		t.Error("qos_sl2vl set without sl2vl in the spec")
	}
	// The hosts' ports: what they must hold.
	for _, h := range f.Hosts {
		for _, n := range h.NICs {
			if n.IB == nil {
				t.Fatalf("%s:%s has no IB port intent", h.Name, n.Name)
			}
		}
	}
	cn1 := f.Hosts[1].NICs[0].IB
	if !reflect.DeepEqual(cn1.PKeys, map[int]string{0x0001: "full", DefaultPKey: "full"}) || cn1.MTU != 4096 || cn1.GUID != "0x0000000000000002" {
		t.Errorf("cn1:ib0 %+v", cn1)
	}
	cn2 := f.Hosts[2].NICs[0].IB
	if !reflect.DeepEqual(cn2.PKeys, map[int]string{0x0001: "limited", DefaultPKey: "full"}) {
		t.Errorf("cn2:ib0 %+v", cn2)
	}
}

func TestIBCodes(t *testing.T) {
	for mtu, code := range map[int]int{256: 1, 2048: 4, 4096: 5} {
		if c, ok := IBMTUCode(mtu); !ok || c != code {
			t.Errorf("IBMTUCode(%d) = %d %v", mtu, c, ok)
		}
		if b, ok := IBMTUBytes(code); !ok || b != mtu {
			t.Errorf("IBMTUBytes(%d) = %d %v", code, b, ok)
		}
	}
	if c, ok := IBRateCode(400e9); !ok || c != 21 {
		t.Errorf("IBRateCode(400G) = %d %v", c, ok)
	}
	if r, ok := IBRate(3); !ok || r != 10e9 {
		t.Errorf("IBRate(3) = %v %v", r, ok)
	}
	if _, ok := IBRateCode(800e9); ok {
		t.Error("800G: opensm 3.3 has no code for it")
	}
}

func TestNoSubnetManagerOnEthernet(t *testing.T) {
	if f := compile(t, small); len(f.SubnetManagers) != 0 || f.Hosts[0].NICs[0].IB != nil {
		t.Errorf("Ethernet fabric got IB intent: %+v", f.SubnetManagers)
	}
}

// TestSubnetManagerVLs: max_vls and vl_high_limit become opensm.conf's
// qos_max_vls and qos_high_limit (and turn QoS on by themselves); bad
// values are load errors naming the attribute.
func TestSubnetManagerVLs(t *testing.T) {
	base := strings.Replace(ibSmall, "  sl        = 3\n", "  sl        = 0\n", 1)
	with := func(attrs string) string {
		return strings.Replace(base, "  subnet_manager = \"sm\"\n", "  subnet_manager = \"sm\"\n"+attrs, 1)
	}
	st := compile(t, with("  max_vls = 4\n  vl_high_limit = 0\n")).SubnetManagers[0].Flatten()
	for k, v := range map[string]string{"opensm/qos": "TRUE", "opensm/qos_max_vls": "4", "opensm/qos_high_limit": "0"} {
		if st[k] != v {
			t.Errorf("%s = %q, want %q", k, st[k], v)
		}
	}
	st = compile(t, base).SubnetManagers[0].Flatten()
	for _, k := range []string{"opensm/qos", "opensm/qos_max_vls", "opensm/qos_high_limit"} {
		if _, ok := st[k]; ok {
			t.Errorf("%s set by a spec without QoS settings", k)
		}
	}
	for _, tc := range []struct{ attrs, want string }{
		{"  max_vls = 3\n", "max_vls is the number of data VLs a port runs: 1, 2, 4, 8 or 15"},
		{"  max_vls = 16\n", "max_vls = 16 is outside 1..15"},
		{"  vl_high_limit = 256\n", "vl_high_limit = 256 is outside 0..255"},
	} {
		_, diags := spec.LoadFiles([]spec.File{{Name: "t.fab.hcl", Data: []byte(with(tc.attrs))}}, spec.LoadOptions{})
		if !diags.HasErrors() || !strings.Contains(diags.Error(), tc.want) || !strings.Contains(diags.Error(), "t.fab.hcl:") {
			t.Errorf("%q: diagnostics %v, want an error at t.fab.hcl:line containing %q", tc.attrs, diags, tc.want)
		}
	}
}
