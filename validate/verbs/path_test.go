package verbs

import (
	"strings"
	"testing"
)

func mustGID(t *testing.T, s string) GID {
	t.Helper()
	g, err := ParseGID(s)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestGIDForms(t *testing.T) {
	g := mustGID(t, gidV4a)
	if g.String() != gidV4a || !g.IsV4Mapped() || g.IsLinkLocal() {
		t.Errorf("%s: v4mapped %v linklocal %v", g, g.IsV4Mapped(), g.IsLinkLocal())
	}
	if ll := mustGID(t, gidLL); !ll.IsLinkLocal() || ll.IsV4Mapped() {
		t.Errorf("%s link-local", ll)
	}
	for _, bad := range []string{"", "fe80::1", "fe80:0000:0000:0000:5054:00ff:fe12", "zz80:0000:0000:0000:5054:00ff:fe12:3456", gidLL + ":0000"} {
		if _, err := ParseGID(bad); err == nil {
			t.Errorf("ParseGID(%q) accepted", bad)
		}
	}
}

func TestMTU(t *testing.T) {
	for _, tc := range []struct{ netdev, roce int }{{1500, 1024}, {4192, 4096}, {4191, 2048}, {9000, 4096}, {300, 0}, {352, 256}} {
		if got := RoCEMTUFor(tc.netdev); got != tc.roce {
			t.Errorf("RoCEMTUFor(%d) = %d, want %d", tc.netdev, got, tc.roce)
		}
	}
	for e := 1; e <= 5; e++ {
		if MTUEnum(MTUBytes(e)) != e {
			t.Errorf("MTU enum %d does not round-trip", e)
		}
	}
	if MTUEnum(1500) != 0 || MTUBytes(6) != 0 {
		t.Error("invalid MTUs accepted")
	}
	if m, err := PathMTU("rxe_a", 1024, "rxe_b", 4096, 0); err != nil || m != 1024 {
		t.Errorf("min: %d %v", m, err)
	}
	if _, err := PathMTU("rxe_a", 1024, "rxe_b", 4096, 4096); err == nil ||
		!strings.Contains(err.Error(), "MTU mismatch: the test requires a path MTU of 4096 but rxe_a's active MTU is 1024") ||
		!strings.Contains(err.Error(), "at least 4192") {
		t.Errorf("mismatch: %v", err)
	}
	if m, err := PathMTU("a", 4096, "b", 4096, 2048); err != nil || m != 2048 {
		t.Errorf("required below both: %d %v", m, err)
	}
}

func TestVectorRoCE(t *testing.T) {
	local := &Endpoint{Device: "rxe_b", Port: 1, LinkLayer: LinkEthernet, GIDIndex: 1, GID: mustGID(t, gidV4b)}
	peer := &Endpoint{Device: "rxe_a", Port: 1, LinkLayer: LinkEthernet, GIDIndex: 1, GID: mustGID(t, gidV4a)}
	av, err := Vector(local, peer, 106, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !av.IsGlobal || av.DGID != peer.GID || av.SGIDIndex != 1 || av.TClass != 106 || av.HopLimit != 0xff || av.DLID != 0 || av.Port != 1 {
		t.Errorf("RoCE vector %+v", av)
	}
	peer.GID = GID{}
	if _, err := Vector(local, peer, 0, 0); err == nil {
		t.Error("RoCE without a peer GID accepted")
	}
}

// The LID path: InfiniBand peers in one subnet are reached by LID with
// the class's SL and no GRH; another subnet prefix adds the GRH.
func TestVectorInfiniBand(t *testing.T) {
	local := &Endpoint{Device: "mlx5_0", Port: 1, LinkLayer: LinkInfiniBand, LID: 3, GIDIndex: 0,
		GID: mustGID(t, "fe80:0000:0000:0000:0c42:a103:0000:0b01")}
	peer := &Endpoint{Device: "mlx5_0", Port: 1, LinkLayer: LinkInfiniBand, LID: 7,
		GID: mustGID(t, "fe80:0000:0000:0000:0c42:a103:0000:0b02")}
	av, err := Vector(local, peer, 0, 5)
	if err != nil {
		t.Fatal(err)
	}
	if av.IsGlobal || av.DLID != 7 || av.SL != 5 || av.DGID != (GID{}) {
		t.Errorf("same subnet: %+v", av)
	}
	peer.GID = mustGID(t, "fec0:0000:0000:0001:0c42:a103:0000:0b02")
	if av, err = Vector(local, peer, 0, 5); err != nil || !av.IsGlobal || av.DLID != 7 || av.DGID != peer.GID {
		t.Errorf("routed: %+v %v", av, err)
	}
	peer.LID = 0
	if _, err := Vector(local, peer, 0, 5); err == nil || !strings.Contains(err.Error(), "subnet manager") {
		t.Errorf("no LID: %v", err)
	}
	peer.LID = 0xc001 // multicast range
	if _, err := Vector(local, peer, 0, 5); err == nil {
		t.Error("multicast LID accepted")
	}
	peer.LinkLayer = LinkEthernet
	if _, err := Vector(local, peer, 0, 5); err == nil || !strings.Contains(err.Error(), "link layer mismatch") {
		t.Errorf("mixed link layers: %v", err)
	}
}

func TestCheckPeer(t *testing.T) {
	v2a := &Endpoint{Device: "rxe_a", LinkLayer: LinkEthernet, GIDIndex: 1, GIDType: GIDTypeRoCEv2, GID: mustGID(t, gidV4a), Transport: "ib"}
	v2b := &Endpoint{Device: "rxe_b", LinkLayer: LinkEthernet, GIDIndex: 1, GIDType: GIDTypeRoCEv2, GID: mustGID(t, gidV4b), Transport: "ib"}
	if err := CheckPeer(v2a, v2b, ConnVerbs); err != nil {
		t.Fatal(err)
	}
	v1 := *v2b
	v1.GIDType, v1.GIDIndex = GIDTypeRoCEv1, 0
	if err := CheckPeer(v2a, &v1, ConnVerbs); err == nil || !strings.Contains(err.Error(), "GID type mismatch: rxe_a uses GID index 1 (RoCE v2) but the peer rxe_b uses GID index 0 (IB/RoCE v1)") {
		t.Errorf("type mismatch: %v", err)
	}
	v6 := *v2b
	v6.GID = mustGID(t, gidLL)
	if err := CheckPeer(v2a, &v6, ConnVerbs); err == nil || !strings.Contains(err.Error(), "address family mismatch") {
		t.Errorf("family mismatch: %v", err)
	}
	iw := *v2b
	iw.Transport = "iwarp"
	if err := CheckPeer(v2a, &iw, ConnVerbs); err == nil || !strings.Contains(err.Error(), "rdma_cm") {
		t.Errorf("iWARP over verbs: %v", err)
	}
	if err := CheckPeer(v2a, &iw, ConnCM); err != nil {
		t.Errorf("iWARP over rdma_cm: %v", err)
	}
}

func TestTestCheck(t *testing.T) {
	ok := Test{}
	ok.Fill()
	if err := ok.Check(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	if ok.Op != OpWrite || ok.Size != DefaultSize || ok.Iterations != 5000 || ok.TxDepth != 128 || ok.CQMod != 100 || ok.TClass != 0 {
		t.Errorf("defaults %+v", ok)
	}
	lat := Test{Mode: ModeLatency, Op: OpSend}
	lat.Fill()
	if lat.Size != 2 || lat.CQMod != 1 || lat.TxDepth != 1 || lat.Iterations != 1000 {
		t.Errorf("latency defaults %+v", lat)
	}
	for _, tc := range []struct {
		name string
		mod  func(*Test)
		want string
	}{
		{"op", func(t *Test) { t.Op = "atomic" }, "unknown operation"},
		{"both", func(t *Test) { t.Duration = 1 }, "not both"},
		{"qps", func(t *Test) { t.QPs = 2000 }, "qps 2000"},
		{"cqmod", func(t *Test) { t.CQMod = 500 }, "cq moderation 500"},
		{"tclass", func(t *Test) { t.TClass = 256 }, "traffic class 256"},
		{"mtu", func(t *Test) { t.MTU = 1500 }, "not an RDMA MTU"},
		{"lat qps", func(t *Test) { t.Mode = ModeLatency; t.QPs = 2 }, "one QP"},
	} {
		x := ok
		tc.mod(&x)
		if err := x.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
