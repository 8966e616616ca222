package telemetry_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fabctl/fabctl/agent"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/telemetry"
)

// scrapeText GETs url and returns the value of the first sample of name
// whose line holds every fragment (ok false: none).
func scrapeText(t *testing.T, url, name string, fragments ...string) (float64, bool) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
next:
	for sc.Scan() {
		l := sc.Text()
		if !strings.HasPrefix(l, name+"{") {
			continue
		}
		for _, f := range fragments {
			if !strings.Contains(l, f) {
				continue next
			}
		}
		v, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
		return v, err == nil
	}
	return 0, false
}

// TestVMDCBDrift: a PFC change made with iproute2's dcb on a fabdcb NIC
// (the kernel's DCB netlink, testbed/vm/kmod/fabdcb) reaches the agent's
// DCB watch (host.WatchDCB) and the agent's /metrics says
// fabctl_nic_dcb_drift 1; putting the setting back makes it 0. Runs in
// the VM testbed's telemetry section.
func TestVMDCBDrift(t *testing.T) {
	dev := testutil.FabdcbDevs(t, 1)[0]
	testutil.DCBSet(t, "pfc", "set", "dev", dev, "prio-pfc", "all:off") // the baseline
	s := testutil.LoadSrc(t, fmt.Sprintf(`
fabric "vmtele" { transport = "rocev2" }
host "vm" {
  connect = "local"
  nic %q {
    addresses = ["198.18.21.1/24"]
  }
}
`, dev))
	nics, _ := telemetry.NICs(s, nil)
	hc := telemetry.NewHostCollector(nics, "/sys")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	agent.WatchMetrics(ctx, hc, agent.WatchDCB, func(h string, err error) { t.Errorf("watch of %s: %v", h, err) })
	h, err := agent.MetricsHandler(hc)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = agent.ServeMetrics(ctx, ln, h) }()
	url := "http://" + ln.Addr().String() + "/metrics"
	nic := `nic="` + dev + `"`
	wait := func(want float64) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			v, ok := scrapeText(t, url, "fabctl_nic_dcb_drift", nic)
			if ok && v == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("fabctl_nic_dcb_drift = %v (found %v), want %v", v, ok, want)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	wait(0)
	time.Sleep(2 * time.Second) // the watch reads its baseline when it starts (TCG is slow)
	testutil.DCBSet(t, "pfc", "set", "dev", dev, "prio-pfc", "3:on")
	wait(1)
	if v, ok := scrapeText(t, url, "fabctl_nic_dcb_drift_changes", nic); !ok || v < 1 {
		t.Errorf("fabctl_nic_dcb_drift_changes = %v, %v", v, ok)
	}
	testutil.DCBSet(t, "pfc", "set", "dev", dev, "prio-pfc", "3:off")
	wait(0)
}

// TestVMQPDump: the RDMA netlink QP dump of a Soft-RoCE device counts the
// QPs `rdma resource show qp` lists for it (at least the kernel's GSI QP),
// and those in the error state alike. Runs in the VM testbed's telemetry
// section (FABCTL_TELEMETRY_RXE names the device).
func TestVMQPDump(t *testing.T) {
	dev := os.Getenv("FABCTL_TELEMETRY_RXE")
	if dev == "" {
		t.Skip("needs an rxe device: run in the VM testbed (make e2e-vm FABTB_SECTIONS=telemetry)")
	}
	got, err := telemetry.ReadQPs()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("rdma", "-j", "resource", "show", "qp").Output()
	if err != nil {
		t.Fatalf("rdma resource show qp: %v", err)
	}
	var qps []struct {
		IfName string `json:"ifname"`
		LQPN   int    `json:"lqpn"`
		State  string `json:"state"`
	}
	if err := json.Unmarshal(out, &qps); err != nil {
		t.Fatalf("rdma -j resource show qp: %v\n%s", err, out)
	}
	var want telemetry.QPCount
	for _, q := range qps {
		if q.IfName == dev {
			want.Total++
			if q.State == "ERR" {
				want.Error++
			}
		}
	}
	t.Logf("%s: netlink dump %+v, rdma tool %+v", dev, got[dev], want)
	if want.Total == 0 {
		t.Fatalf("rdma resource show qp lists no QP of %s:\n%s", dev, out)
	}
	if got[dev] != want {
		t.Errorf("%s: dump %+v, rdma resource show qp %+v", dev, got[dev], want)
	}
}
