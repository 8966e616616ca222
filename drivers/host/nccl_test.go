package host

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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
	got, fs := ncclEnv(h)
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
	if got, _ := ncclEnv(h); got["NCCL_IB_GID_INDEX"] != "5" {
		t.Errorf("RoCE v2 GID index %q, want 5", got["NCCL_IB_GID_INDEX"])
	}
	// No matching GID: stays auto, with a finding.
	h.NICs[0].Addresses = []string{"10.9.9.9/24"}
	if got, fs := ncclEnv(h); got["NCCL_IB_GID_INDEX"] != "auto" || len(fs) != 1 {
		t.Errorf("unresolvable: %q %v", got["NCCL_IB_GID_INDEX"], fs)
	}
}
