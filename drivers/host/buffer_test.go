package host

import (
	"os"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/dcbnl"
	"github.com/fabctl/fabctl/spec"
)

// TestMLX5Xoff: the headroom mlx5 computes for a lossless buffer
// (en/port_buffer.c calculate_xoff: xoff = (301 + 216*cable_len/100) *
// speed/1000 + 272*mtu/100 in u32 arithmetic, speed in Mb/s and at least
// SPEED_40000; update_xoff_threshold: the buffer holds xoff + max_mtu +
// one 128-byte cell, max_mtu at least MINIMUM_MAX_MTU 9216).
func TestMLX5Xoff(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		cable, speed, mtu, maxMT uint32
		xoff, min, write         uint32
	}{
		// 216*7/100 = 15; 316*100000/1000 = 31600; 272*1500/100 = 4080.
		{"7m 100G 1500, max_mtu 9978", 7, 100000, 1500, 9978, 35680, 35680 + 9978 + 128, 45824},
		// 25G is below the 40G floor: 307*40000/1000 = 12280; 272*4200/100 = 11424.
		{"3m 25G 4200", 3, 25000, 4200, 9216, 23704, 23704 + 9216 + 128, 33152},
		// 216*100/100 = 216; 517*400000/1000 = 206800; 272*9000/100 = 24480.
		{"100m 400G 9000", 100, 400000, 9000, 9216, 231280, 231280 + 9216 + 128, 240640},
		// no cable: 301*40000/1000 = 12040.
		{"0m 40G 1500", 0, 40000, 1500, 1500, 16120, 16120 + 9216 + 128, 25472},
		// 216*30/100 = 64 (64.8 cut off); 365*100000/1000 = 36500.
		{"30m 100G 4200 (the VM test)", 30, 100000, 4200, 9216, 47924, 57268, 57344},
	} {
		if got := mlx5Xoff(tc.cable, tc.speed, tc.mtu); got != tc.xoff {
			t.Errorf("%s: xoff %d, want %d", tc.name, got, tc.xoff)
		}
		if got := mlx5LosslessMin(tc.cable, tc.speed, tc.mtu, tc.maxMT); got != tc.min {
			t.Errorf("%s: lossless minimum %d, want %d", tc.name, got, tc.min)
		}
		if got := roundCell(tc.min); got != tc.write || got%128 != 0 || got < tc.min {
			t.Errorf("%s: written size %d, want %d (whole 128-byte cells)", tc.name, got, tc.write)
		}
	}
}

// bufferNIC is the VM spec's NIC on a 100G link with cable.
func bufferNIC(t *testing.T, cable string) (*intent.Host, *intent.NIC) {
	t.Helper()
	b, err := os.ReadFile("testdata/vm/fabdcb.fab.hcl")
	if err != nil {
		t.Fatal(err)
	}
	src := strings.ReplaceAll(string(b), "FABDCB_NIC", "e0")
	_, f := loadSpec(t, bufferSpec(src, "e0", cable))
	h := f.Hosts[0]
	return h, &h.NICs[0]
}

// TestBufferLayout: each lossless priority on a buffer of its own, the
// rest on buffer 0; the state has the layout and "headroom" per lossless
// buffer, only with a cable length.
func TestBufferLayout(t *testing.T) {
	for _, tc := range []struct {
		pfc      []int
		want     [8]int
		lossless []int
	}{
		{[]int{3}, [8]int{0, 0, 0, 1, 0, 0, 0, 0}, []int{1}},
		{[]int{3, 4}, [8]int{0, 0, 0, 1, 2, 0, 0, 0}, []int{1, 2}},
		{[]int{0, 1, 2, 3, 4, 5, 6, 7}, [8]int{0, 1, 2, 3, 4, 5, 6, 7}, []int{0, 1, 2, 3, 4, 5, 6, 7}},
	} {
		n := intent.NIC{PFC: tc.pfc}
		m, l := n.Prio2Buffer()
		if m != tc.want || fmtInts(l) != fmtInts(tc.lossless) {
			t.Errorf("PFC %v: prio2buffer %v lossless %v, want %v %v", tc.pfc, m, l, tc.want, tc.lossless)
		}
	}
	h, _ := bufferNIC(t, "30m")
	st := h.Flatten()
	if st["nic/e0/buffer/prio"] != "0,0,0,1,0,0,0,0" || st["nic/e0/buffer/1/size"] != intent.BufferHeadroom {
		t.Errorf("desired buffers: prio %q size %q", st["nic/e0/buffer/prio"], st["nic/e0/buffer/1/size"])
	}
	if got := feature("nic/e0/buffer/1/size"); got != "buffer" {
		t.Errorf("feature %q", got)
	}
	_, f := loadSpec(t, strings.ReplaceAll(mustRead(t, "testdata/vm/fabdcb.fab.hcl"), "FABDCB_NIC", "e0"))
	if _, ok := f.Hosts[0].Flatten()["nic/e0/buffer/prio"]; ok {
		t.Errorf("buffers planned without a cable length")
	}
	// By default the firmware sizes the buffers (as NVIDIA's
	// nic-configuration-operator leaves them): only the cable length.
	src := bufferSpecAt(strings.ReplaceAll(mustRead(t, "testdata/vm/fabdcb.fab.hcl"), "FABDCB_NIC", "e0"), "e0", "400G", "30m", false)
	_, f = loadSpec(t, src)
	st = f.Hosts[0].Flatten()
	if _, ok := st["nic/e0/buffer/prio"]; ok || st["nic/e0/cable_len"] != "30" {
		t.Errorf("receive_buffers unset: buffer/prio planned %v, cable_len %q", ok, st["nic/e0/cable_len"])
	}
}

func fmtInts(v []int) string { return "[" + intsList(v) + "]" }

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestBufferRead: the read-back reports "headroom" for a lossless buffer
// that holds the driver's minimum and the size otherwise, the live
// mapping as is (so drift in either is seen), and a port too small for
// the buffers as not expressible; ice, bnxt and an mlx5 port without
// buffers list them as not expressible.
func TestBufferRead(t *testing.T) {
	_, n := bufferNIC(t, "30m")
	need := needsOf(n, 4200, 9216, 0)
	if need.min() != 57268 || need.write(7) != 57344 {
		t.Fatalf("need %+v: min %d write %d", need, need.min(), need.write(7))
	}
	for _, tc := range []struct {
		name      string
		live      dcbnl.Buffer
		prio, siz string
		unsup     string
	}{
		{"as applied", dcbnl.Buffer{Prio2Buffer: [8]uint8{0, 0, 0, 1}, BufferSize: [8]uint32{262144, 57344}, TotalSize: 524288}, "0,0,0,1,0,0,0,0", "headroom", ""},
		{"larger is fine", dcbnl.Buffer{Prio2Buffer: [8]uint8{0, 0, 0, 1}, BufferSize: [8]uint32{262144, 100000}, TotalSize: 524288}, "0,0,0,1,0,0,0,0", "headroom", ""},
		{"too small", dcbnl.Buffer{Prio2Buffer: [8]uint8{0, 0, 0, 1}, BufferSize: [8]uint32{262144, 40000}, TotalSize: 524288}, "0,0,0,1,0,0,0,0", "40000", ""},
		{"out of the box", dcbnl.Buffer{BufferSize: [8]uint32{262144}, TotalSize: 524288}, "0,0,0,0,0,0,0,0", "0", ""},
		{"port too small", dcbnl.Buffer{BufferSize: [8]uint32{262144}, TotalSize: 300000}, "0,0,0,0,0,0,0,0", "0", "the port buffer holds 300000 B"},
	} {
		st, unsup := map[string]string{}, map[string]string{}
		putBuffer(n, tc.live, need, st, unsup, "nic/e0/", 7)
		if st["nic/e0/buffer/prio"] != tc.prio || st["nic/e0/buffer/1/size"] != tc.siz {
			t.Errorf("%s: prio %q size %q, want %q %q", tc.name, st["nic/e0/buffer/prio"], st["nic/e0/buffer/1/size"], tc.prio, tc.siz)
		}
		if !strings.Contains(unsup["nic/e0/buffer"], tc.unsup) || (tc.unsup == "") != (unsup["nic/e0/buffer"] == "") {
			t.Errorf("%s: not expressible %q, want %q", tc.name, unsup["nic/e0/buffer"], tc.unsup)
		}
	}
	ieee := &dcbnl.IEEE{Buffer: &dcbnl.Buffer{TotalSize: 524288}}
	for _, tc := range []struct {
		fam  family
		ieee *dcbnl.IEEE
		why  string
	}{
		{famICE, ieee, "ice has no dcbnl buffer ops"},
		{famBNXT, ieee, "bnxt has no dcbnl buffer ops"},
		{famMLX5, &dcbnl.IEEE{}, "MLX5_BUFFER_SUPPORTED"},
	} {
		unsup := map[string]string{}
		readBuffer(nil, n, tc.fam, tc.ieee, map[string]string{}, unsup)
		if !strings.Contains(unsup["nic/e0/buffer"], tc.why) {
			t.Errorf("%s: %q, want %q", tc.fam, unsup["nic/e0/buffer"], tc.why)
		}
		if got := blocked(unsup, "e0", "buffer"); got == "" {
			t.Errorf("%s: the buffer feature is not blocked", tc.fam)
		}
	}
	slow := *n
	slow.Speed = spec.BitRate(0)
	unsup := map[string]string{}
	readBuffer(nil, &slow, famMLX5, ieee, map[string]string{}, unsup)
	if !strings.Contains(unsup["nic/e0/buffer"], "no speed") {
		t.Errorf("no link speed: %q", unsup["nic/e0/buffer"])
	}
}

// TestDesiredBuffer: what apply writes: the lossless buffers raised to
// whole cells of the minimum for the spec's cable length and for the one
// the NIC still has (the driver checks new sizes with it), never lowered;
// other buffers kept; the mapping the spec's.
func TestDesiredBuffer(t *testing.T) {
	_, n := bufferNIC(t, "30m")
	need := needsOf(n, 4200, 9216, 0)
	cur := dcbnl.Buffer{BufferSize: [8]uint32{262144, 0, 4096}, TotalSize: 524288}
	got := desiredBuffer(n, cur, need, 7)
	want := dcbnl.Buffer{Prio2Buffer: [8]uint8{0, 0, 0, 1}, BufferSize: [8]uint32{262144, 57344, 4096}, TotalSize: 524288}
	if got != want {
		t.Errorf("7 m on the NIC: %+v, want %+v", got, want)
	}
	// The NIC still computes with 100 m: its minimum wins until the cable
	// length is set (after the buffers).
	got = desiredBuffer(n, cur, need, 100)
	if w := roundCell(mlx5LosslessMin(100, 100000, 4200, 9216)); got.BufferSize[1] != w || w <= 57344 {
		t.Errorf("100 m on the NIC: buffer 1 = %d, want %d", got.BufferSize[1], w)
	}
	big := cur
	big.BufferSize[1] = 200000
	if got := desiredBuffer(n, big, need, 7); got.BufferSize[1] != 200000 {
		t.Errorf("a larger buffer was lowered to %d", got.BufferSize[1])
	}
}

// TestMLX5MaxrateUnits: what mlx5 keeps of a per-TC max rate
// (en_dcbnl.c mlx5e_dcbnl_ieee_setmaxrate, torvalds/linux 43b27d1bd88a +
// d2099d9f16db): up to 255 x 100 Mbit/s in 100 Mbit/s units, up to
// 255 Gbit/s in 1 Gbit/s units, the value divided down (at least one
// unit), more refused; the plan lists a rate that would read back
// differently, naming what it would read.
func TestMLX5MaxrateUnits(t *testing.T) {
	const M, G = 1_000_000, 1_000_000_000
	for _, tc := range []struct {
		bps  int64
		read int64
		why  string
	}{
		{10 * G, 10 * G, ""},
		{25_500 * M, 25_500 * M, ""}, // 255 units of 100 Mbit/s: exact
		{255 * G, 255 * G, ""},
		{100 * M, 100 * M, ""},
		{10_050 * M, 10 * G, "read back as 10 Gbit/s"},
		{25_600 * M, 25 * G, "not a multiple of 1 Gbit/s"},
		{50 * M, 100 * M, "read back as 100 Mbit/s"},
		{300 * G, 300 * G, "above 255 Gbit/s"},
	} {
		why := mlx5Maxrate(tc.bps)
		if !strings.Contains(why, tc.why) || (tc.why == "") != (why == "") {
			t.Errorf("%d bit/s: %q, want %q", tc.bps, why, tc.why)
		}
		if tc.bps <= 255*G {
			if got := mlx5MaxrateRead(tc.bps); got != tc.read {
				t.Errorf("%d bit/s reads back %d, want %d", tc.bps, got, tc.read)
			}
		}
	}
}

// TestBufferLinkSpeed: the headroom follows the faster of the spec's link
// speed and the speed the link runs at (mlx5 calculate_xoff reads PTYS):
// at 100G, 200G and 400G, and a 100G spec on a port running at 400G.
func TestBufferLinkSpeed(t *testing.T) {
	_, n := bufferNIC(t, "30m") // spec 100G, 30 m, MTU 4200
	for _, c := range []struct {
		live uint32
		want uint32
	}{
		// xoff = (301 + 64) * speed/1000 + 11424; + 9216 + 128, whole cells.
		{0, roundCell(36500 + 11424 + 9344)},
		{100000, roundCell(36500 + 11424 + 9344)},
		{200000, roundCell(73000 + 11424 + 9344)},
		{400000, roundCell(146000 + 11424 + 9344)},
		{25000, roundCell(36500 + 11424 + 9344)}, // the spec's 100G is faster
	} {
		if got := needsOf(n, 4200, 9216, c.live).write(0); got != c.want {
			t.Errorf("link at %d Mb/s: lossless buffer %d, want %d", c.live, got, c.want)
		}
	}
}
