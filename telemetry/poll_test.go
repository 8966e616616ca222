package telemetry

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/cumulusemu"
	"github.com/fabctl/fabctl/testbed/sonicemu"
)

const sshPasswordEnv = "FAB_TELE_SSH_PW"

// sshEmu is an SSH CLI switch emulator as the poll tests use it.
type sshEmu interface {
	Addr() string
	WriteKnownHosts(path string) error
}

// sshFabric is a fabric of one SSH CLI leaf of platform plat at emu (port
// cabled to host h5's eth1), its credentials verifying emu's host key.
func sshFabric(t testing.TB, plat, user string, emu sshEmu, port string) *spec.Spec {
	t.Helper()
	kh := filepath.Join(t.TempDir(), "known_hosts")
	if err := emu.WriteKnownHosts(kh); err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf(`
fabric "tele" { transport = "rocev2" }
credentials "s" {
  username    = %q
  password    = env(%q)
  known_hosts = %q
}
switch "leaf6" {
  platform    = %q
  address     = %q
  credentials = "s"
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
  endpoints = ["leaf6:%s", "h5:eth1"]
  speed     = "100G"
}
`, user, sshPasswordEnv, kh, plat, emu.Addr(), port)
	return testutil.LoadSrc(t, src)
}

// pollFabric polls s's SSH CLI switches every 50ms through the built-in
// drivers until the test ends.
func pollFabric(t testing.TB, s *spec.Spec, password string) (*SwitchCollector, *prometheus.Registry) {
	t.Helper()
	t.Setenv(sshPasswordEnv, password)
	c := NewSwitchCollector(s, builtin.Platforms())
	added, skipped := c.AddPolled(s, builtin.Registry())
	if len(added) != 1 || len(skipped) != 0 {
		t.Fatalf("polled %v, skipped %v", added, skipped)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		Poll(ctx, s, c, PollOptions{Interval: 50 * time.Millisecond, Timeout: 5 * time.Second})
		close(done)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return c, reg
}

// TestPollSONiC polls the SONiC emulator over SSH through the sonic
// driver's show commands: PFC pause frames per priority and direction,
// ECN marks and drops per queue and the watchdog's storms, labelled like
// the gNMI side (the host cabled to the port), and a counter the test
// raises on the switch shows at the next poll.
func TestPollSONiC(t *testing.T) {
	sw, err := sonicemu.Start(sonicemu.Options{Password: "pw", Ports: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sw.Close() })
	sw.SetCounters("Ethernet4", func(pc *sonicemu.PortCounters) {
		pc.PFCRx[3], pc.PFCTx[3] = 1500, 7
		pc.ECNMarked[3], pc.QueueDrops[0] = 42, 9
		pc.StormDetected[3], pc.Stormed[3] = 2, true
	})
	s := sshFabric(t, "sonic", "admin", sw, "Ethernet4")
	c, reg := pollFabric(t, s, "pw")
	lbl := func(extra ...string) map[string]string {
		m := map[string]string{"fabric": "tele", "leaf": "leaf6", "port": "Ethernet4", "host": "h5", "nic": "eth1", "rail": "0"}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return m
	}
	waitFor(t, "the first poll", func() bool { return c.Status()["leaf6"] == "" })
	for _, tc := range []struct {
		metric string
		labels map[string]string
		want   float64
	}{
		{"fabctl_switch_pfc_pause_frames_total", lbl("direction", "rx", "priority", "3"), 1500},
		{"fabctl_switch_pfc_pause_frames_total", lbl("direction", "tx", "priority", "3"), 7},
		{"fabctl_switch_pfc_pause_frames_total", lbl("direction", "rx", "priority", "4"), 0},
		{"fabctl_switch_ecn_marked_packets_total", lbl("priority", "3"), 42},
		{"fabctl_switch_queue_dropped_packets_total", lbl("priority", "0"), 9},
		{"fabctl_switch_pfc_watchdog_events_total", lbl("priority", "3"), 2},
		{"fabctl_switch_up", map[string]string{"leaf": "leaf6", "platform": "sonic"}, 1},
	} {
		if got, ok := value(t, reg, tc.metric, tc.labels); !ok || got != tc.want {
			t.Errorf("%s%v = %v (found %v), want %v", tc.metric, tc.labels, got, ok, tc.want)
		}
	}
	sw.SetCounters("Ethernet4", func(pc *sonicemu.PortCounters) { pc.PFCRx[3] = 90000 })
	waitFor(t, "the next poll", func() bool {
		v, _ := value(t, reg, "fabctl_switch_pfc_pause_frames_total", lbl("direction", "rx", "priority", "3"))
		return v == 90000
	})
	// The other ports of the switch are exported with leaf/port labels only.
	if _, ok := value(t, reg, "fabctl_switch_pfc_pause_frames_total", map[string]string{"port": "Ethernet0", "host": "", "priority": "3", "direction": "rx"}); !ok {
		t.Error("no series for the uncabled Ethernet0")
	}
}

// TestPollCumulus polls the Cumulus emulator over SSH through the
// cumulus driver (`nv show interface <port> counters qos` per spec port):
// PFC pause frames per switch-priority, the port's ECN marks (no
// priority: NVUE counts them per port) and 802.3x pauses; what NVUE's
// output lacks (watchdog, per-queue drops in packets) is declared.
func TestPollCumulus(t *testing.T) {
	sw, err := cumulusemu.Start(cumulusemu.Options{Password: "pw", Ports: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sw.Close() })
	sw.SetCounters("swp2", func(pc *cumulusemu.PortCounters) { pc.PFCRx[3], pc.PFCTx[3], pc.ECNMarked, pc.PauseRx = 120, 45, 9, 2 })
	s := sshFabric(t, "cumulus", "cumulus", sw, "swp2")
	c, reg := pollFabric(t, s, "pw")
	waitFor(t, "the first poll", func() bool { return c.Status()["leaf6"] == "" })
	lbl := map[string]string{"leaf": "leaf6", "port": "swp2", "host": "h5", "nic": "eth1"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range lbl {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		metric string
		labels map[string]string
		want   float64
	}{
		{"fabctl_switch_pfc_pause_frames_total", with("direction", "rx", "priority", "3"), 120},
		{"fabctl_switch_pfc_pause_frames_total", with("direction", "tx", "priority", "3"), 45},
		{"fabctl_switch_ecn_marked_packets_total", with("priority", ""), 9},
		{"fabctl_switch_mac_pause_frames_total", with("direction", "rx"), 2},
		{"fabctl_switch_counter_supported", map[string]string{"leaf": "leaf6", "counter": "pfc_watchdog_events"}, 0},
	} {
		if got, ok := value(t, reg, tc.metric, tc.labels); !ok || got != tc.want {
			t.Errorf("%s%v = %v (found %v), want %v", tc.metric, tc.labels, got, ok, tc.want)
		}
	}
}

// TestPollDown: a poll that fails (the switch refuses the password)
// makes fabctl_switch_up 0 with the reason, and no stale counters.
func TestPollDown(t *testing.T) {
	sw, err := sonicemu.Start(sonicemu.Options{Password: "pw", Ports: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sw.Close() })
	s := sshFabric(t, "sonic", "admin", sw, "Ethernet4")
	c, reg := pollFabric(t, s, "wrong")
	waitFor(t, "the failed poll", func() bool { return c.Status()["leaf6"] != "" && c.Status()["leaf6"] != "not connected yet" })
	if v, ok := value(t, reg, "fabctl_switch_up", map[string]string{"leaf": "leaf6"}); !ok || v != 0 {
		t.Errorf("fabctl_switch_up = %v, %v", v, ok)
	}
	if _, ok := value(t, reg, "fabctl_switch_pfc_pause_frames_total", nil); ok {
		t.Error("counters exported while the switch is down")
	}
	t.Logf("down: %s", c.Status()["leaf6"])
}

// TestAddPolledByDescriptor: which switches AddPolled polls follows
// from what the platforms' descriptors say, never from a platform's
// name: an InfiniBand platform's switches (whatever the platform is
// called) have no driver to poll and are neither added nor skipped with
// an error; a gNMI platform's are never polled (streamed when its
// descriptor has telemetry paths, else not seen: up 0 with the reason).
func TestAddPolledByDescriptor(t *testing.T) {
	plats := []spec.PlatformInfo{
		{Name: "ib-director", Title: "an InfiniBand director", InfiniBand: true},
		{Name: "gnmi-box", Title: "a gNMI switch", Transport: "gnmi"},
	}
	for _, c := range []struct{ name, src string }{
		{"infiniband", `
fabric "t" { transport = "infiniband" }
switch "ib1" {
  platform = "ib-director"
  ports    = 8
}
`},
		{"gnmi", `
fabric "t" { transport = "rocev2" }
switch "g1" {
  platform = "gnmi-box"
  address  = "192.0.2.1"
  role     = "leaf"
}
`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, diags := spec.LoadFiles([]spec.File{{Name: "t.fab.hcl", Data: []byte(c.src)}}, spec.LoadOptions{Platforms: plats})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			col := NewSwitchCollector(s, nil)
			added, skipped := col.AddPolled(s, drivers.NewRegistry())
			if c.name == "gnmi" {
				// No telemetry paths in its descriptor: not polled, and
				// exported as not seen rather than left out.
				if len(added) != 0 || !strings.HasPrefix(skipped["g1"], "not streamed:") || len(skipped) != 1 {
					t.Errorf("polled %v, skipped %v; want g1 not streamed", added, skipped)
				}
				return
			}
			if len(added) != 0 || len(skipped) != 0 {
				t.Errorf("polled %v, skipped %v; want neither", added, skipped)
			}
		})
	}
}

// TestNotSeenExported: a switch of the spec telemetry cannot read (a
// platform whose driver reads no counters) is a series, not an absence:
// fabctl_switch_up 0 with the reason label; serve --once does not count
// it as a switch that did not answer.
func TestNotSeenExported(t *testing.T) {
	s := testutil.LoadSrc(t, `
fabric "tele" { transport = "rocev2" }
switch "spine1" {
  platform = "eos"
  address  = "192.0.2.1"
}
switch "ib1" {
  platform = "infiniband"
  ports    = 8
}
`)
	c := NewSwitchCollector(s, builtin.Platforms())
	added, skipped := c.AddPolled(s, builtin.Registry())
	if len(added) != 0 || skipped["spine1"] != "not polled: the eos driver reads no counters" || len(skipped) != 1 {
		t.Fatalf("added %v, skipped %v", added, skipped)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	v, ok := value(t, reg, "fabctl_switch_up", map[string]string{"leaf": "spine1", "platform": "eos", "reason": "not polled: the eos driver reads no counters"})
	if !ok || v != 0 {
		t.Errorf("fabctl_switch_up{leaf=spine1} = %v, %v", v, ok)
	}
	if _, ok := value(t, reg, "fabctl_switch_up", map[string]string{"leaf": "ib1"}); ok {
		t.Error("an InfiniBand switch (the subnet manager's) is exported")
	}
	if len(c.Switches()) != 0 || c.NotSeen()["spine1"] == "" || c.Status()["spine1"] == "" {
		t.Errorf("switches %v, not seen %v, status %v", c.Switches(), c.NotSeen(), c.Status())
	}
	if p := PolledPlatforms(builtin.Registry(), []string{"sonic", "eos", "nxos", "cumulus"}); strings.Join(p, ",") != "sonic,cumulus" {
		t.Errorf("polled platforms %v", p)
	}
}

// deadlineReader is a switch that answers at once, unless a poll is
// started with less than half its timeout left: then it fails the way
// a connect with no time left did ("within the connect timeout (-8ms)").
type deadlineReader struct {
	timeout time.Duration
	polls   atomic.Int32
}

func (r *deadlineReader) CounterCommands() []string { return nil }

func (r *deadlineReader) ReadCounters(ctx context.Context, _ drivers.Target) (*drivers.Counters, error) {
	r.polls.Add(1)
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < r.timeout/2 {
		return nil, fmt.Errorf("connect: no answer within the connect timeout (%s)", time.Until(dl).Round(time.Millisecond))
	}
	return &drivers.Counters{}, nil
}

// TestPollDeadline: polling that ends (serve --once) never reports a
// healthy switch down because a poll began as the deadline arrived; with
// Until, every switch is polled at least once and Poll returns after it.
func TestPollDeadline(t *testing.T) {
	s := testutil.LoadSrc(t, `
fabric "tele" { transport = "rocev2" }
switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
}
`)
	for i := 0; i < 5; i++ {
		c := NewSwitchCollector(s, builtin.Platforms())
		r := &deadlineReader{timeout: time.Second}
		c.add(s, s.Switch("leaf1"), nil)
		c.polled["leaf1"] = r
		ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
		Poll(ctx, s, c, PollOptions{Interval: 100 * time.Millisecond, Timeout: time.Second})
		cancel()
		if why := c.Status()["leaf1"]; why != "" {
			t.Fatalf("run %d: a healthy switch reported down after %d polls: %s", i, r.polls.Load(), why)
		}
	}
	// Until in the past: one complete poll, then Poll returns.
	c := NewSwitchCollector(s, builtin.Platforms())
	r := &deadlineReader{timeout: time.Second}
	c.add(s, s.Switch("leaf1"), nil)
	c.polled["leaf1"] = r
	start := time.Now()
	Poll(context.Background(), s, c, PollOptions{Interval: time.Hour, Timeout: time.Second, Until: time.Now()})
	if r.polls.Load() != 1 || c.Status()["leaf1"] != "" || time.Since(start) > 5*time.Second {
		t.Errorf("%d polls, status %q", r.polls.Load(), c.Status()["leaf1"])
	}
}
