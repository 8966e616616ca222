package telemetry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/fabctl/fabctl/agent"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/telemetry"
	"github.com/fabctl/fabctl/testbed/sonicemu"
)

// TestPrometheusE2ESSH: Debian's Prometheus scrapes the switch exporter
// polling a SONiC emulator over SSH (the sonic driver's show commands)
// with the spec's rules loaded; a pause storm raised on the emulator's
// `show pfc counters` fires FabricPFCPauseStorm labelled with the port
// and the host cabled to it.
func TestPrometheusE2ESSH(t *testing.T) {
	telemetry.Promtool(t)
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		testutil.SkipOrFail(t, "prometheus not installed (apt-get install prometheus)")
	}
	sw, err := sonicemu.Start(sonicemu.Options{Password: "pw", Ports: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sw.Close() })
	s := telemetry.SSHFabric(t, "sonic", "admin", sw, "Ethernet4")
	c, _ := telemetry.PollFabric(t, s, "pw")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	h, err := agent.MetricsHandler(c)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = agent.ServeMetrics(ctx, ln, h) }()

	dir := t.TempDir()
	rules, err := telemetry.Rules(s, telemetry.RuleOptions{For: -1, Window: 5 * time.Second}).YAML()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fabctl.rules.yml"), rules, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files: [fabctl.rules.yml]\n"+
		"scrape_configs:\n  - job_name: fabctl-telemetry\n    static_configs: [{targets: [%q]}]\n", ln.Addr().String())
	get, exited, out := startPrometheus(t, prom, dir, cfg)
	wait := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(40 * time.Second)
		for !cond() {
			select {
			case <-exited:
				t.Fatalf("prometheus exited:\n%s", out.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s\nprometheus:\n%s", what, out.String())
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	firing := func() map[string]map[string]string {
		var a struct {
			Data struct {
				Alerts []struct {
					Labels map[string]string `json:"labels"`
					State  string            `json:"state"`
				} `json:"alerts"`
			} `json:"data"`
		}
		m := map[string]map[string]string{}
		if get("/api/v1/alerts", &a) == nil {
			for _, x := range a.Data.Alerts {
				if x.State == "firing" {
					m[x.Labels["alertname"]] = x.Labels
				}
			}
		}
		return m
	}
	wait("the switch polled and scraped", func() bool {
		var r struct {
			Data struct {
				Result []json.RawMessage `json:"result"`
			} `json:"data"`
		}
		return get(`/api/v1/query?query=fabctl_switch_up%7Bleaf%3D%22leaf6%22%7D%3D%3D1`, &r) == nil && len(r.Data.Result) == 1
	})
	time.Sleep(3 * time.Second)
	if f := firing(); len(f) > 0 {
		t.Fatalf("alerts on a quiet switch: %v", f)
	}
	// Pause storm: 5000 PFC frames received on priority 3 every 250ms.
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			sw.SetCounters("Ethernet4", func(pc *sonicemu.PortCounters) { pc.PFCRx[3] += 5000 })
			select {
			case <-stop:
				return
			case <-time.After(250 * time.Millisecond):
			}
		}
	}()
	defer func() { close(stop); <-done }()
	wait("FabricPFCPauseStorm", func() bool { return firing()["FabricPFCPauseStorm"] != nil })
	got := firing()["FabricPFCPauseStorm"]
	for k, v := range map[string]string{"leaf": "leaf6", "port": "Ethernet4", "host": "h5", "nic": "eth1", "priority": "3", "direction": "rx", "fabric": "tele"} {
		if got[k] != v {
			t.Errorf("pause storm alert label %s = %q, want %q (%v)", k, got[k], v, got)
		}
	}
}
