package rdmagid

import (
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func addrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out
}

// TestPreferred: IPv4 first (NCCL's default AF_INET), then global IPv6;
// link-local, loopback and unspecified addresses never (NCCL validGid).
func TestPreferred(t *testing.T) {
	got := Preferred(addrs("fe80::1", "fd00::1", "::ffff:198.18.0.1", "2001:db8::1", "10.0.0.1", "::"))
	if s := strings.Join(toStrings(got), " "); s != "198.18.0.1 10.0.0.1 fd00::1 2001:db8::1" {
		t.Errorf("Preferred = %s", s)
	}
}

func toStrings(a []netip.Addr) []string {
	out := make([]string, len(a))
	for i, x := range a {
		out[i] = x.String()
	}
	return out
}

// TestReadTableResolve: the table as sysfs shows it (%pI6, types, ndevs;
// empty slots skipped), and the entry of the preferred address of the
// wanted type on the wanted netdev, or why there is none.
func TestReadTableResolve(t *testing.T) {
	root := t.TempDir()
	port := filepath.Join(root, "class/infiniband/mlx5_0/ports/1")
	for i, g := range []struct{ gid, typ, ndev string }{
		{"fe80:0000:0000:0000:0a0b:0cff:fe0d:0e0f", "IB/RoCE v1", "e0"},
		{"fe80:0000:0000:0000:0a0b:0cff:fe0d:0e0f", "RoCE v2", "e0"},
		{"0000:0000:0000:0000:0000:0000:0000:0000", "", ""},
		{"fd00:0001:0000:0000:0000:0000:0000:0001", "RoCE v2", "e0.100"},
		{"0000:0000:0000:0000:0000:ffff:c612:0001", "IB/RoCE v1", "e0.100"},
		{"0000:0000:0000:0000:0000:ffff:c612:0001", "RoCE v2", "e0.100"},
	} {
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
	table, err := ReadTable(root, "mlx5_0", 1)
	if err != nil || len(table) != 5 || table[3].GID != netip.MustParseAddr("198.18.0.1") {
		t.Fatalf("table %+v %v", table, err)
	}
	for _, c := range []struct {
		netdev, typ string
		addrs       []netip.Addr
		want        int
		err         string
	}{
		{"e0.100", TypeRoCEv2, addrs("fd00:1::1", "198.18.0.1"), 5, ""},
		{"e0.100", TypeRoCEv1, addrs("198.18.0.1"), 4, ""},
		{"e0.100", TypeRoCEv2, addrs("fd00:1::1"), 3, ""},
		{"e0", TypeRoCEv2, addrs("198.18.0.1"), -1, "no RoCE v2 GID for 198.18.0.1 on e0"},
		{"e0.100", TypeRoCEv1, addrs("fd00:1::1"), -1, "[5] 198.18.0.1 RoCE v2"},
		{"e0", TypeRoCEv2, addrs("fe80::1"), -1, "no IPv4 or global IPv6 address"},
	} {
		e, err := Resolve(table, c.netdev, c.typ, c.addrs)
		switch {
		case c.err == "" && (err != nil || e.Index != c.want):
			t.Errorf("%s %s %v: %+v %v, want index %d", c.netdev, c.typ, c.addrs, e, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s %s %v: %v, want an error with %q", c.netdev, c.typ, c.addrs, err, c.err)
		}
	}
	if _, err := ReadTable(root, "mlx5_9", 1); err == nil {
		t.Error("no error for a device without a table")
	}
}
