package host

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
)

// TestNCCLGIDIndexFromGIDTable: NCCL_IB_GID_INDEX is the index of the RDMA
// interface's IPv4 GID of the fabric's RoCE version in the device's GID
// table (here a RoCEv1 NIC on VLAN 100: the untagged parent's GIDs come
// first, so 0, the old hard-coded value, is the parent's link-local GID),
// and the env file gets it.
func TestNCCLGIDIndexFromGIDTable(t *testing.T) {
	src := `
fabric "t" {
  transport          = "rocev1"
  trust              = "pcp"
  congestion_control = "pfc-only"
  rdma_tos           = 24
}
class "roce" {
  role      = "rdma"
  priority  = 3
  lossless  = true
  bandwidth = 50
}
class "default" {
  role      = "other"
  priority  = 0
  default   = true
  bandwidth = 50
}
host "h1" {
  address       = "192.0.2.10"
  nccl_env_file = "ENVFILE"
  nic "ens1f0" {
    device    = "mlx5_0"
    addresses = ["192.168.100.11/24"]
    vlan      = 100
  }
}
`
	dir := t.TempDir()
	env := filepath.Join(dir, "nccl.conf")
	oldRoot := sysRoot
	t.Cleanup(func() { sysRoot = oldRoot })
	sysRoot = filepath.Join(dir, "sys")
	port := filepath.Join(sysRoot, "class/infiniband/mlx5_0/ports/1")
	// The table mlx5 builds for a port with a link-local address on the
	// parent and 192.168.100.11 on ens1f0.100: v1 and v2 entry per address.
	gids := []struct{ gid, typ, ndev string }{
		{"fe80:0000:0000:0000:0a0b:0cff:fe0d:0e0f", "IB/RoCE v1", "ens1f0"},
		{"fe80:0000:0000:0000:0a0b:0cff:fe0d:0e0f", "RoCE v2", "ens1f0"},
		{"fe80:0000:0000:0000:0a0b:0cff:fe0d:0e0f", "IB/RoCE v1", "ens1f0.100"},
		{"fe80:0000:0000:0000:0a0b:0cff:fe0d:0e0f", "RoCE v2", "ens1f0.100"},
		{"0000:0000:0000:0000:0000:ffff:c0a8:640b", "IB/RoCE v1", "ens1f0.100"},
		{"0000:0000:0000:0000:0000:ffff:c0a8:640b", "RoCE v2", "ens1f0.100"},
	}
	for i, g := range gids {
		for sub, v := range map[string]string{"gids": g.gid, "gid_attrs/types": g.typ, "gid_attrs/ndevs": g.ndev} {
			p := filepath.Join(port, sub, strconv.Itoa(i))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	_, f := loadSpec(t, strings.Replace(src, "ENVFILE", env, 1))
	h := f.Hosts[0]
	got, fs, _ := ncclEnv(h)
	if got["NCCL_IB_GID_INDEX"] != "4" || len(fs) != 0 {
		t.Fatalf("NCCL_IB_GID_INDEX %q (findings %v), want 4: the RoCE v1 GID of 192.168.100.11 on ens1f0.100", got["NCCL_IB_GID_INDEX"], fs)
	}
	if got["NCCL_IB_TC"] != "24" || got["NCCL_IB_HCA"] != "mlx5_0" {
		t.Errorf("NCCL env %v", got)
	}
	if err := writeEnvFile(env, got); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(env)
	if !strings.Contains(string(b), "NCCL_IB_GID_INDEX=4\n") {
		t.Errorf("env file:\n%s", b)
	}
	if v := readEnvFile(env)["NCCL_IB_GID_INDEX"]; v != "4" {
		t.Fatalf("env file index %q", v)
	}
	// A v2 fabric picks the v2 entry.
	h.NICs[0].RoCEMode = "v2"
	if got, _, _ := ncclEnv(h); got["NCCL_IB_GID_INDEX"] != "5" {
		t.Errorf("RoCE v2 GID index %q, want 5", got["NCCL_IB_GID_INDEX"])
	}
	// No matching GID: left out of the env file (never "auto", which
	// NCCL's strtoll reads as index 0), with a finding and the reason the
	// plan lists it as not expressible.
	h.NICs[0].Addresses = []string{"10.9.9.9/24"}
	got, fs, why := ncclEnv(h)
	if v, ok := got["NCCL_IB_GID_INDEX"]; ok || len(fs) != 1 || !strings.Contains(why, "10.9.9.9") || !strings.Contains(why, "strtoll") {
		t.Errorf("unresolvable: %q (present %v) %v %q", v, ok, fs, why)
	}
	if err := writeEnvFile(env, got); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(env); strings.Contains(string(b), "NCCL_IB_GID_INDEX") {
		t.Errorf("env file names an unresolved index:\n%s", b)
	}
}

// gidFixture writes a port's GID table under sysRoot.
func gidFixture(t *testing.T, dev string, gids []struct{ gid, typ, ndev string }) {
	t.Helper()
	port := filepath.Join(sysRoot, "class/infiniband", dev, "ports/1")
	for i, g := range gids {
		for sub, v := range map[string]string{"gids": g.gid, "gid_attrs/types": g.typ, "gid_attrs/ndevs": g.ndev} {
			p := filepath.Join(port, sub, strconv.Itoa(i))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestNCCLGIDIndexFamilies: NCCL_IB_GID_INDEX on IPv6-only, dual-stack
// and IPv4 RoCE v2 NICs, from the GID table mlx5 builds for them (the
// link-local default GID first, then v1 and v2 entries per address; an
// IPv4 address as ::ffff:a.b.c.d). IPv6-only resolves to its global
// address's v2 GID, never the link-local one; dual-stack to the IPv4
// GID, as NCCL prefers AF_INET; and the plan lists an unresolvable index
// as not expressible.
func TestNCCLGIDIndexFamilies(t *testing.T) {
	dir := t.TempDir()
	oldRoot := sysRoot
	t.Cleanup(func() { sysRoot = oldRoot })
	sysRoot = filepath.Join(dir, "sys")
	type g = struct{ gid, typ, ndev string }
	ll := "fe80:0000:0000:0000:0a0b:0cff:fe0d:0e0f"
	v6 := "fd00:0128:0000:0000:0000:0000:0000:0001"
	v4 := "0000:0000:0000:0000:0000:ffff:c612:0001"
	gidFixture(t, "mlx5_6", []g{{ll, "IB/RoCE v1", "e6"}, {ll, "RoCE v2", "e6"}, {v6, "IB/RoCE v1", "e6"}, {v6, "RoCE v2", "e6"}})
	gidFixture(t, "mlx5_d", []g{{ll, "IB/RoCE v1", "ed"}, {ll, "RoCE v2", "ed"}, {v6, "IB/RoCE v1", "ed"}, {v6, "RoCE v2", "ed"}, {v4, "IB/RoCE v1", "ed"}, {v4, "RoCE v2", "ed"}})
	gidFixture(t, "mlx5_4", []g{{ll, "IB/RoCE v1", "e4"}, {ll, "RoCE v2", "e4"}, {v4, "IB/RoCE v1", "e4"}, {v4, "RoCE v2", "e4"}})
	src := func(nic, dev, addrs string) string {
		return `
fabric "t" {
  transport = "rocev2"
}
host "h1" {
  address       = "192.0.2.10"
  nccl_env_file = "` + filepath.Join(dir, "nccl-"+nic) + `"
  nic "` + nic + `" {
    device    = "` + dev + `"
    addresses = [` + addrs + `]
  }
}
`
	}
	for _, c := range []struct {
		nic, dev, addrs, want string
	}{
		{"e6", "mlx5_6", `"fd00:128::1/64"`, "3"},
		{"ed", "mlx5_d", `"fd00:128::1/64", "198.18.0.1/24"`, "5"},
		{"e4", "mlx5_4", `"198.18.0.1/24"`, "3"},
	} {
		_, f := loadSpec(t, src(c.nic, c.dev, c.addrs))
		got, fs, why := ncclEnv(f.Hosts[0])
		if got["NCCL_IB_GID_INDEX"] != c.want || len(fs) != 0 || why != "" {
			t.Errorf("%s (%s): NCCL_IB_GID_INDEX %q, want %s (findings %v, %q)", c.nic, c.addrs, got["NCCL_IB_GID_INDEX"], c.want, fs, why)
		}
	}
	// The IPv6-only NIC whose table has only the link-local GID: not
	// expressible, with the table in the reason.
	gidFixture(t, "mlx5_l", []g{{ll, "IB/RoCE v1", "el"}, {ll, "RoCE v2", "el"}})
	s, f := loadSpec(t, src("el", "mlx5_l", `"fd00:128::1/64"`))
	_ = s
	d := New().(*Driver)
	tg := drivers.Target{Device: f.Hosts[0].Device, Intent: f.Hosts[0]}
	unsup := map[string]string{}
	_, _, why := ncclEnv(f.Hosts[0])
	unsup["nccl/"+ncclGIDIndex] = why
	d.unsupported["h1"] = unsup
	un := d.Unexpressible(tg, intent.State{"nccl/NCCL_IB_GID_INDEX": "auto", "nccl/NCCL_IB_TC": "106"})
	if r := un["nccl/NCCL_IB_GID_INDEX"]; !strings.Contains(r, "no RoCE v2 GID for fd00:128::1 on el") || !strings.Contains(r, "[1] fe80::a0b:cff:fe0d:e0f RoCE v2") {
		t.Errorf("unresolved index not listed as not expressible: %v", un)
	}
	if _, ok := un["nccl/NCCL_IB_TC"]; ok {
		t.Errorf("NCCL_IB_TC listed: %v", un)
	}
}
