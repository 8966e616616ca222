package telemetry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fabctl/fabctl/agent"
	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/drivers/host"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/telemetry"
)

// TestPrometheusE2E: Debian's real Prometheus scrapes the agent's
// /metrics (agent.ServeMetrics over a HostCollector reading sysfs through
// traffic.SnapshotOnly, its DCB drift fed by agent.WatchMetrics) and the
// gNMI exporter's (a SwitchCollector on a Subscribe STREAM from the
// testbed's SR Linux target), both on loopback, and evaluates the rules
// fabctl telemetry rules derives from the spec. A pause storm injected on
// the target's lossless priority 3 fires FabricPFCPauseStorm; a drift the
// watch reports fires FabricDCBDrift. (A real DCB drift needs a NIC with
// dcbnl: the fabdcb module of the VM testbed; here the watch function is
// the injection point, as in the agent's tests.)
func TestPrometheusE2E(t *testing.T) {
	telemetry.Promtool(t) // the same package ships both
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		testutil.SkipOrFail(t, "prometheus not installed (apt-get install prometheus)")
	}
	s, tg := telemetry.GNMIFabric(t, "srlinux", "ethernet-1/1")
	root := t.TempDir()
	telemetry.FakeSysfs(t, root, map[string][]string{"rxe_h5": telemetry.MLX5HW}, 0)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })

	// The agent.
	nics, _ := telemetry.NICs(s, []string{"h5"})
	hc := telemetry.NewHostCollector(nics, root)
	drift := make(chan host.Drift)
	agent.WatchMetrics(ctx, hc, func(ctx context.Context, netns string, ifaces []string, fn func(host.Drift)) error {
		for {
			select {
			case <-ctx.Done():
				return nil
			case d := <-drift:
				fn(d)
			}
		}
	}, nil)
	listen := func(h http.Handler) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() { defer wg.Done(); _ = agent.ServeMetrics(ctx, ln, h) }()
		return ln.Addr().String()
	}
	ah, err := agent.MetricsHandler(hc)
	if err != nil {
		t.Fatal(err)
	}
	agentAddr := listen(ah)

	// The gNMI exporter.
	sc := telemetry.NewSwitchCollector(s, builtin.Platforms())
	wg.Add(1)
	go func() {
		defer wg.Done()
		telemetry.Stream(ctx, s, sc, telemetry.StreamOptions{Sample: 200 * time.Millisecond, Retry: 200 * time.Millisecond,
			Getenv: func(string) string { return telemetry.TGPassword }})
	}()
	sh, err := agent.MetricsHandler(sc)
	if err != nil {
		t.Fatal(err)
	}
	exporterAddr := listen(sh)

	// Prometheus.
	dir := t.TempDir()
	rules, err := telemetry.Rules(s, telemetry.RuleOptions{For: -1, Window: 5 * time.Second}).YAML()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fabctl.rules.yml"), rules, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [fabctl.rules.yml]
scrape_configs:
  - job_name: fabctl-agent
    static_configs: [{targets: [%q]}]
  - job_name: fabctl-telemetry
    static_configs: [{targets: [%q]}]
`, agentAddr, exporterAddr)
	get, exited, out := startPrometheus(t, prom, dir, cfg)
	var targets struct {
		Data struct {
			ActiveTargets []struct {
				ScrapePool string `json:"scrapePool"`
				Health     string `json:"health"`
				LastError  string `json:"lastError"`
			} `json:"activeTargets"`
		} `json:"data"`
	}
	waitProm := func(what string, d time.Duration, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(d)
		for !cond() {
			select {
			case <-exited:
				t.Fatalf("prometheus exited:\n%s", out.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; targets %+v\nprometheus:\n%s", what, targets.Data.ActiveTargets, out.String())
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	waitProm("both targets up", 30*time.Second, func() bool {
		if get("/api/v1/targets", &targets) != nil || len(targets.Data.ActiveTargets) != 2 {
			return false
		}
		for _, tg := range targets.Data.ActiveTargets {
			if tg.Health != "up" {
				return false
			}
		}
		return true
	})
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
	// Quiet fabric: a few evaluations, nothing fires.
	time.Sleep(4 * time.Second)
	if f := firing(); len(f) > 0 {
		t.Fatalf("alerts on a quiet fabric: %v", f)
	}
	// Pause storm: 5000 PFC frames received on priority 3 every 250ms.
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		var rx uint64
		for {
			rx += 5000
			v := fmt.Sprintf(`{"pfc-priority":[{"index":3,"pfc-pause-frames-received":"%d","pfc-pause-frames-generated":"0","deadlock-recovery-occurrences":"0"}]}`, rx)
			_ = tg.SetState("/srl_nokia-qos:qos/interfaces/interface[interface-id=ethernet-1/1]/pfc/statistics", []byte(v))
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-time.After(250 * time.Millisecond):
			}
		}
	}()
	defer close(stop)
	waitProm("FabricPFCPauseStorm", 30*time.Second, func() bool { return firing()["FabricPFCPauseStorm"] != nil })
	got := firing()["FabricPFCPauseStorm"]
	for k, v := range map[string]string{"leaf": "leaf5", "port": "ethernet-1/1", "host": "h5", "nic": "eth1", "priority": "3", "direction": "rx", "fabric": "tele"} {
		if got[k] != v {
			t.Errorf("pause storm alert label %s = %q, want %q (%v)", k, got[k], v, got)
		}
	}
	// DCB drift reported by the agent's watch.
	drift <- host.Drift{NIC: "eth1", Cmd: "IEEE_SET", Time: time.Now(), Changes: []intent.AttrChange{{Path: "nic/eth1/pfc", Before: "3", After: ""}}}
	waitProm("FabricDCBDrift", 30*time.Second, func() bool { return firing()["FabricDCBDrift"] != nil })
	if h := firing()["FabricDCBDrift"]["host"]; h != "h5" {
		t.Errorf("drift alert on host %q", h)
	}
}

// startPrometheus runs the real Prometheus (prom) in dir with the
// configuration cfg on a free loopback port until the test ends, and
// returns a GET of its HTTP API decoding JSON into v, a channel closed
// when it exits and its output so far.
func startPrometheus(t *testing.T, prom, dir, cfg string) (get func(path string, v any) error, exited <-chan struct{}, out *strings.Builder) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	promAddr := pl.Addr().String()
	pl.Close()
	cmd := exec.Command(prom, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr)
	cmd.Dir = dir
	out = &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	return func(path string, v any) error {
		resp, err := http.Get("http://" + promAddr + path)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		return json.NewDecoder(resp.Body).Decode(v)
	}, done, out
}
