package intent

import (
	"testing"

	"github.com/fabctl/fabctl/internal/testutil"
)

// A switch port the spec gives no MTU wants at least the fabric's (or
// its host's) MTU: a device with more keeps it, one with less is raised.
func TestMTUFloor(t *testing.T) {
	f := Field{}
	for _, tc := range []struct {
		want, have string
		equal      bool
	}{
		{">=9000", "9000", true},
		{">=9000", "9100", true},
		{">=9000", "9216", true},
		{">=9000", "1500", false},
		{">=9000", "", false},
		{">=9000", "x", false},
		{"9000", "9100", false},
	} {
		if got := f.Equal(tc.want, tc.have); got != tc.equal {
			t.Errorf("Equal(%q, %q) = %v", tc.want, tc.have, got)
		}
	}
	if n, ok := FloorValue(AtLeast(9000)); !ok || n != "9000" {
		t.Errorf("FloorValue(AtLeast(9000)) = %q, %v", n, ok)
	}
	desired := State{"port/Ethernet0/mtu": AtLeast(9000), "port/Ethernet4/mtu": AtLeast(9000), "port/Ethernet8/mtu": "9216"}
	live := State{"port/Ethernet0/mtu": "9100", "port/Ethernet4/mtu": "1500", "port/Ethernet8/mtu": "9100"}
	changes, tolerated := DiffTolerated(desired, live, nil)
	if len(changes) != 2 || changes[0].Path != "port/Ethernet4/mtu" || changes[1].Path != "port/Ethernet8/mtu" || len(tolerated) != 0 {
		t.Errorf("changes %+v, tolerated %+v", changes, tolerated)
	}
}

func TestCompileMTUFloor(t *testing.T) {
	f := Compile(testutil.LoadSrc(t, `
fabric "t" {
  transport = "rocev2"
  mtu       = 9000
}
switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
  port "Ethernet0" {}
  port "Ethernet4" {}
  port "Ethernet8" {
    mtu = 9216
  }
}
switch "leaf2" {
  platform = "sonic"
  address  = "192.0.2.2"
  mtu      = 9100
}
host "h1" {
  address = "192.0.2.10"
  nic "eth1" {
    device = "mlx5_0"
    mtu    = 9100
  }
  nic "eth2" {
    device = "mlx5_1"
  }
}
link {
  endpoints = ["leaf1:Ethernet0", "h1:eth1"]
  speed     = "100G"
}
link {
  endpoints = ["leaf1:Ethernet4", "h1:eth2"]
  speed     = "100G"
}
link {
  endpoints = ["leaf1:Ethernet8", "leaf2:Ethernet0"]
  speed     = "100G"
}
`))
	st := f.Switches[0].Flatten()
	for path, want := range map[string]string{
		"port/Ethernet0/mtu": ">=9100", // the host NIC it faces is larger than the fabric's
		"port/Ethernet4/mtu": ">=9000",
		"port/Ethernet8/mtu": "9216",
	} {
		if st[path] != want {
			t.Errorf("leaf1 %s = %q, want %q", path, st[path], want)
		}
	}
	if got := f.Switches[1].Flatten()["port/Ethernet0/mtu"]; got != "9100" {
		t.Errorf("leaf2's switch mtu: %q", got)
	}
}
