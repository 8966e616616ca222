package verbs

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestLatencyFromPosts(t *testing.T) {
	// 101 posts 2 us apart, one 200 us outlier: 100 one-way samples of
	// 1 us (ping-pong halves the round trip) and one of 100 us.
	var posts []uint64
	var now uint64 = 1_000_000
	for i := 0; i <= 100; i++ {
		posts = append(posts, now)
		if i == 50 {
			now += 200_000
		} else {
			now += 2_000
		}
	}
	l := LatencyFromPosts(posts, OpSend)
	if l.Samples != 100 || l.Min != time.Microsecond || l.Median != time.Microsecond || l.Max != 100*time.Microsecond {
		t.Fatalf("%+v", l)
	}
	// ceil(100*0.99) = the 99th smallest: still 1 us; 99.9: the outlier.
	if l.P99 != time.Microsecond || l.P999 != 100*time.Microsecond {
		t.Errorf("percentiles %v %v", l.P99, l.P999)
	}
	if l.Avg != 1990*time.Nanosecond {
		t.Errorf("avg %v", l.Avg)
	}
	// READ latency is a whole round trip per sample.
	if r := LatencyFromPosts(posts[:3], OpRead); r.Min != 2*time.Microsecond {
		t.Errorf("read %+v", r)
	}
	if LatencyFromPosts(posts[:1], OpSend) != nil {
		t.Error("one post gave statistics")
	}
}

func TestBandwidth(t *testing.T) {
	r := &Result{}
	r.bandwidth(2000, 65536, 2*time.Second)
	if r.Bytes != 131072000 || r.Gbps < 0.524 || r.Gbps > 0.525 || r.MsgRate != 1000 {
		t.Errorf("%+v", r)
	}
}

func TestPerftestReports(t *testing.T) {
	b, err := os.ReadFile("testdata/perftest/write_bw-4.5.json")
	if err != nil {
		t.Fatal(err)
	}
	kv, err := ParsePerftestJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	bw := Test{Op: OpWrite, Mode: ModeBandwidth}
	bw.Fill()
	r, err := PerftestResult(bw, kv)
	if err != nil {
		t.Fatal(err)
	}
	// 32.19 MiB/s = 0.27 Gb/s
	if r.Gbps < 0.2700 || r.Gbps > 0.2701 || r.Messages != 2000 || r.Backend != "perftest" || kv["TX_depth"] != 128 {
		t.Errorf("write_bw: %+v (%v)", r, kv)
	}
	b, _ = os.ReadFile("testdata/perftest/send_lat-json.json")
	kv, err = ParsePerftestJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	lat := Test{Op: OpSend, Mode: ModeLatency}
	lat.Fill()
	r, err = PerftestResult(lat, kv)
	if err != nil {
		t.Fatal(err)
	}
	if r.Latency.Median != 31070*time.Nanosecond || r.Latency.P999 != 1100250*time.Nanosecond || r.Latency.Samples != 1000 {
		t.Errorf("send_lat: %+v", r.Latency)
	}
	if _, err := PerftestResult(lat, map[string]float64{"t_min": 1}); err == nil || !strings.Contains(err.Error(), "no t_max") {
		t.Errorf("incomplete report: %v", err)
	}
	if _, err := ParsePerftestJSON([]byte("Can't produce a report\n")); err == nil {
		t.Error("a failed run parsed")
	}
}

func TestPerftestArgs(t *testing.T) {
	bw := Test{Op: OpWrite, TClass: 106, Iterations: 2000}
	bw.Fill()
	l := Local{Device: "rxe_fb", Port: 1, GIDIndex: 1}
	a, err := PerftestArgs(bw, l, 18616, "198.18.0.1", "/tmp/r.json")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(a, " ")
	want := "-d rxe_fb -i 1 -s 65536 -p 18616 -F -x 1 --tclass=106 -n 2000 -q 1 -t 128 -Q 100 -u 14 --out_json --out_json_file=/tmp/r.json 198.18.0.1" // perftest sends nothing inline in a bandwidth test
	if got != want {
		t.Errorf("args\n got %s\nwant %s", got, want)
	}
	if PerftestBinary(bw) != "ib_write_bw" {
		t.Error(PerftestBinary(bw))
	}
	lat := Test{Op: OpSend, Mode: ModeLatency, Duration: 5 * time.Second, Conn: ConnCM}
	lat.Fill()
	if _, err := PerftestArgs(lat, l, 1, "", "x"); err == nil {
		t.Error("duration latency accepted")
	}
	cm := Test{Op: OpWrite, Duration: 3 * time.Second, Conn: ConnCM, TClass: 104}
	cm.Fill()
	a, _ = PerftestArgs(cm, Local{Device: "siw_wb", Port: 1, GIDIndex: -1, Addr: mustAddr("198.18.1.2")}, 1, "198.18.1.1", "x")
	if got := strings.Join(a, " "); !strings.Contains(got, "-R -T 104 --source_ip 198.18.1.2 -D 3") {
		t.Errorf("rdma_cm args: %s", got)
	}
}
