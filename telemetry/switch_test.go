package telemetry

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/gnmitarget"
	"github.com/fabctl/fabctl/testbed/portlink"
)

const tgPassword = "tele-secret"

// gnmiFabric starts a YANG-validating gNMI target of platform plat
// (srlinux or openconfig) with port and returns the fabric that names it:
// one leaf, one host cabled to port.
func gnmiFabric(t testing.TB, plat, port string) (*spec.Spec, *gnmitarget.Target) {
	t.Helper()
	dir := t.TempDir()
	pki, err := gnmitarget.NewTestPKI(dir)
	if err != nil {
		t.Fatal(err)
	}
	flavor := gnmitarget.FlavorOpenConfig
	if plat == "srlinux" {
		flavor = gnmitarget.FlavorSRLinux
	}
	desc, _ := builtin.Platform(plat)
	tg, err := gnmitarget.Start(context.Background(), gnmitarget.Config{Flavor: flavor, YANGDir: testutil.Shared(t, "yang", plat), Profile: &desc.YANG.Profile,
		TLS: pki.TLS(false), Username: "admin", Password: tgPassword, Interfaces: []string{port},
		Links: portlink.Static{}.With(port, linktruth.Observation{Oper: linktruth.Up, SpeedMbps: 100_000})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	src := fmt.Sprintf(`
fabric "tele" { transport = "rocev2" }
credentials "g" {
  username = "admin"
  password = env("FAB_TELE_PW")
  ca_file  = %q
}
switch "leaf5" {
  platform    = %q
  address     = %q
  credentials = "g"
  role        = "leaf"
}
host "h5" {
  connect = "local"
  nic "eth1" {
    device    = "rxe_h5"
    addresses = ["10.9.0.1/31"]
  }
}
link {
  endpoints = ["leaf5:%s", "h5:eth1"]
  speed     = "100G"
}
`, filepath.Join(dir, "ca.pem"), plat, tg.Addr(), port)
	return testutil.LoadSrc(t, src), tg
}

// value is the value of the series of name whose labels include want.
func value(t testing.TB, g prometheus.Gatherer, name string, want map[string]string) (float64, bool) {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if got[k] != v {
					continue next
				}
			}
			return metricValue(m), true
		}
	}
	return 0, false
}

func metricValue(m *dto.Metric) float64 {
	if m.GetCounter() != nil {
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue()
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSwitchStreamSRLinux streams from an SR Linux target over gNMI
// STREAM: per-priority PFC pause frames and the watchdog (deadlock
// recovery) from srl_nokia-qos, oper state on change, all labelled with
// the host cabled to the port.
func TestSwitchStreamSRLinux(t *testing.T) {
	s, tg := gnmiFabric(t, "srlinux", "ethernet-1/1")
	c := NewSwitchCollector(s, builtin.Platforms())
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		Stream(ctx, s, c, StreamOptions{Sample: 100 * time.Millisecond, Retry: 100 * time.Millisecond,
			Getenv: func(string) string { return tgPassword }})
		close(done)
	}()
	t.Cleanup(func() { cancel(); <-done })
	pfc := func(rx, wd int) {
		t.Helper()
		v := fmt.Sprintf(`{"total-pfc-pause-frames-received":"%d","pfc-priority":[{"index":3,"pfc-pause-frames-received":"%d","pfc-pause-frames-generated":"0","deadlock-recovery-occurrences":"%d"}]}`, rx, rx, wd)
		if err := tg.SetState("/srl_nokia-qos:qos/interfaces/interface[interface-id=ethernet-1/1]/pfc/statistics", []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	pfc(10, 0)
	lbl := map[string]string{"fabric": "tele", "leaf": "leaf5", "port": "ethernet-1/1", "host": "h5", "nic": "eth1", "rail": "0"}
	waitFor(t, "the stream", func() bool { return c.Status()["leaf5"] == "" })
	rx3 := map[string]string{"direction": "rx", "priority": "3"}
	for k, v := range lbl {
		rx3[k] = v
	}
	waitFor(t, "pfc rx=10", func() bool { v, ok := value(t, reg, "fabctl_switch_pfc_pause_frames_total", rx3); return ok && v == 10 })
	pfc(5000, 2)
	waitFor(t, "pfc rx=5000", func() bool { v, _ := value(t, reg, "fabctl_switch_pfc_pause_frames_total", rx3); return v == 5000 })
	waitFor(t, "watchdog=2", func() bool {
		v, _ := value(t, reg, "fabctl_switch_pfc_watchdog_events_total", map[string]string{"priority": "3", "leaf": "leaf5"})
		return v == 2
	})
	if v, ok := value(t, reg, "fabctl_switch_port_up", lbl); !ok || v != 1 {
		t.Errorf("port_up = %v, %v", v, ok)
	}
	if err := tg.SetState("/srl_nokia-interfaces:interface[name=ethernet-1/1]/oper-state", []byte(`"down"`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "oper down", func() bool { v, _ := value(t, reg, "fabctl_switch_port_up", lbl); return v == 0 })
	if v, _ := value(t, reg, "fabctl_switch_counter_supported", map[string]string{"counter": "ecn_marked_packets"}); v != 0 {
		t.Errorf("srlinux lacks per-queue ECN marks in its models: not declared")
	}
	if v, _ := value(t, reg, "fabctl_switch_spec_speed_bits", lbl); v != 100e9 {
		t.Errorf("spec speed = %v", v)
	}
}

// TestSwitchStreamOpenConfig: per-queue ECN marks and drops from
// openconfig-qos, priority from fabctl's queue names (Q3), and the
// interface counters the target generates.
func TestSwitchStreamOpenConfig(t *testing.T) {
	s, tg := gnmiFabric(t, "openconfig", "Ethernet0")
	c := NewSwitchCollector(s, builtin.Platforms())
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		Stream(ctx, s, c, StreamOptions{Sample: 100 * time.Millisecond, Retry: 100 * time.Millisecond,
			Getenv: func(string) string { return tgPassword }})
		close(done)
	}()
	t.Cleanup(func() { cancel(); <-done })
	if err := tg.SetState("/openconfig-qos:qos/interfaces/interface[interface-id=Ethernet0]/output/queues/queue[name=Q3]/state",
		[]byte(`{"name":"Q3","ecn-marked-pkts":"77","dropped-pkts":"0"}`)); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"leaf": "leaf5", "port": "Ethernet0", "host": "h5", "priority": "3"}
	waitFor(t, "ecn marks", func() bool { v, _ := value(t, reg, "fabctl_switch_ecn_marked_packets_total", want); return v == 77 })
	if _, ok := value(t, reg, "fabctl_switch_in_discards_total", map[string]string{"port": "Ethernet0"}); !ok {
		t.Error("no in_discards from the interface counters")
	}
	if v, _ := value(t, reg, "fabctl_switch_counter_supported", map[string]string{"counter": "pfc_pause_frames"}); v != 0 {
		t.Errorf("openconfig lacks PFC: not declared")
	}
}

// Issue 40 (first run, defect 7): serve --once reports a gNMI switch after
// one complete sample (its sync_response), not "not connected yet"
// because --once ended the stream; a stream cut short leaves the switch as
// it was (up), and an unreachable switch reads down with its own error.
func TestStreamUntilOneCompleteSample(t *testing.T) {
	s, _ := gnmiFabric(t, "srlinux", "ethernet-1/1")
	getenv := func(string) string { return tgPassword }

	// Until already past: the stream runs until its first sync_response.
	c := NewSwitchCollector(s, builtin.Platforms())
	start := time.Now()
	Stream(context.Background(), s, c, StreamOptions{Sample: 2 * time.Second, Retry: 100 * time.Millisecond, Getenv: getenv, Until: time.Now()})
	if why := c.Status()["leaf5"]; why != "" || time.Since(start) > 10*time.Second {
		t.Errorf("Until: leaf5 %q after %s, want up after one complete sample", why, time.Since(start))
	}

	// Cut short by its context after it synced: still up.
	c = NewSwitchCollector(s, builtin.Platforms())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		Stream(ctx, s, c, StreamOptions{Sample: 100 * time.Millisecond, Retry: 100 * time.Millisecond, Getenv: getenv})
		close(done)
	}()
	waitFor(t, "the stream", func() bool { return c.Status()["leaf5"] == "" })
	cancel()
	<-done
	if why := c.Status()["leaf5"]; why != "" {
		t.Errorf("cut short: leaf5 %q, want up as it was", why)
	}

	// Unreachable: down with the dial's error once Until has passed.
	down := s.Switch("leaf5")
	down.Address = "127.0.0.1:1"
	c = NewSwitchCollector(s, builtin.Platforms())
	start = time.Now()
	Stream(context.Background(), s, c, StreamOptions{Sample: time.Second, Retry: time.Hour, Getenv: getenv, Until: time.Now().Add(200 * time.Millisecond)})
	if why := c.Status()["leaf5"]; why == "" || why == "not connected yet" || time.Since(start) > 10*time.Second {
		t.Errorf("unreachable: leaf5 %q after %s", why, time.Since(start))
	}
}
