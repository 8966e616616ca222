package cli

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/memory"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/validate/traffic"
	"github.com/fabctl/fabctl/validate/verbs"
)

// liveStore returns a memory store holding every device's desired state
// (a fabric that was applied), with edit applied to it.
func liveStore(t *testing.T, specPath string, edit func(*memory.Store)) *memory.Store {
	t.Helper()
	s := testutil.Load(t, specPath, spec.LoadOptions{})
	store := memory.NewStore()
	for _, u := range plan.Units(intent.Compile(s)) {
		store.Set(u.Device.Name, u.State)
	}
	if edit != nil {
		edit(store)
	}
	return store
}

// okLinks stores the link reports of testdata/validate/ok.fab.hcl's
// cabling as it should be (border2 has no links: nothing to report).
func okLinks(s *memory.Store) {
	up := func(mbps int64, sys, port string) *linktruth.Observation {
		return &linktruth.Observation{Oper: linktruth.Up, SpeedMbps: mbps, Counters: &linktruth.Counters{},
			Neighbors: []linktruth.Neighbor{{SystemName: sys, PortID: port}}}
	}
	dl := func(ports map[string]*linktruth.Observation) *linktruth.DeviceLinks {
		return &linktruth.DeviceLinks{Ports: ports, LLDP: true, Source: "memory", LLDPSource: "memory"}
	}
	s.Links["leaf1"] = dl(map[string]*linktruth.Observation{
		"Ethernet0": up(100000, "h1", "eth1"), "Ethernet4": up(100000, "h2", "eth1"), "Ethernet8": up(400000, "border1", "Ethernet1")})
	s.Links["border1"] = dl(map[string]*linktruth.Observation{"Ethernet1": up(400000, "leaf1", "Ethernet8")})
	s.Links["border2"] = dl(map[string]*linktruth.Observation{})
	s.Links["h1"] = dl(map[string]*linktruth.Observation{"eth1": up(100000, "leaf1", "Ethernet0")})
	s.Links["h2"] = dl(map[string]*linktruth.Observation{"eth1": up(100000, "leaf1", "Ethernet4")})
}

// fakeTraffic answers the planned tests: the first pair passes, the rest
// follow outcome.
func fakeTraffic(outcome traffic.Status, reason string) func(context.Context, []*traffic.Test) *traffic.Report {
	return func(_ context.Context, tests []*traffic.Test) *traffic.Report {
		rep := &traffic.Report{Tests: tests}
		for _, tt := range tests {
			for ri, r := range tt.Rounds {
				for _, p := range r {
					o := &traffic.Outcome{Test: tt, Round: ri + 1, Pair: p, Status: outcome, Reason: reason}
					if outcome != traffic.NotRun {
						res := &verbs.Result{Test: tt.Verbs, Gbps: 0.27, Messages: 2000, Elapsed: 3880 * time.Millisecond}
						if tt.Verbs.Mode == verbs.ModeLatency {
							res = &verbs.Result{Test: tt.Verbs, Latency: &verbs.LatencyStats{Samples: 1000, Median: 31 * time.Microsecond, P99: 120 * time.Microsecond}}
						}
						ev := traffic.Evidence{Wire: traffic.Wire{All: 4000, Match: 4000, Observed: true}}
						if outcome == traffic.Fail {
							ev.Wire.Match = 1000
						}
						o.Result, o.Checks = res, traffic.Evaluate(tt.Criteria, p, res, ev)
						o.Status, o.Reason = traffic.Verdict(o.Checks)
					}
					rep.Outcomes = append(rep.Outcomes, o)
				}
			}
		}
		return rep
	}
}

func TestValidateLive(t *testing.T) {
	okSpec, vmSpec := "testdata/validate/ok.fab.hcl", "testdata/validate/live/vm.fab.hcl"
	for _, tc := range []struct {
		name    string
		spec    string
		edit    func(*memory.Store)
		traffic func(context.Context, []*traffic.Test) *traffic.Report
		args    []string
		code    ExitCode
	}{
		// Every device matches, no validate block: read-back proves it.
		{name: "match", spec: okSpec},
		// A device drifted: read-back lists the setting and fails.
		{name: "differs", spec: okSpec, code: ExitError, edit: func(s *memory.Store) {
			st := s.Get("leaf1")
			st["port/Ethernet0/mtu"] = "1500"
			s.Set("leaf1", st)
			s.FailRead["h2"] = errors.New("connection refused")
		}},
		// Every link end read and as cabled: the links stage says ✔.
		{name: "links-clean", spec: okSpec, edit: func(s *memory.Store) { okLinks(s) }},
		// Two host cables swapped on leaf1, a port down and the uplink at
		// half speed: the links stage names each end, no change fixes it
		// (exit 6, JUnit failures per end).
		{name: "links-faults", spec: okSpec, code: ExitMismatch, edit: func(s *memory.Store) {
			okLinks(s)
			p := s.Links["leaf1"].Ports
			p["Ethernet0"].Neighbors, p["Ethernet4"].Neighbors = p["Ethernet4"].Neighbors, p["Ethernet0"].Neighbors
			s.Links["h2"].Ports["eth1"].Oper = linktruth.Down
			s.Links["border1"].Ports["Ethernet1"].SpeedMbps = 200000
		}},
		{name: "traffic-pass", spec: vmSpec, traffic: fakeTraffic(traffic.Pass, "")},
		// The wire saw another DSCP: the priority check fails the test.
		{name: "traffic-fail", spec: vmSpec, code: ExitError, traffic: fakeTraffic(traffic.Fail, "")},
		// This build (no verbs tag in make test) cannot run the test: not
		// proven, exit 5, never a pass.
		{name: "traffic-unavailable", spec: vmSpec, code: ExitNothingTested},
		{name: "skip-traffic", spec: vmSpec, args: []string{"--skip-traffic"}},
		// First run, defect 4: the read-back reached no host (one root
		// cause): the traffic stage is not attempted, so its pairs do not
		// repeat the error as failures of their own.
		{name: "hosts-unreached", spec: vmSpec, code: ExitError, traffic: fakeTraffic(traffic.Fail, ""), edit: func(s *memory.Store) {
			for _, h := range []string{"ha", "hb"} {
				s.FailRead[h] = errors.New("ssh: no known_hosts file")
			}
		}},
		// Issue 40: the read-back reached some hosts only: the traffic
		// stage runs, and the pairs with an end on an unreached host are
		// consequences of it (not run, naming it), not failures.
		{name: "some-hosts-unreached", spec: vmSpec, code: ExitError, traffic: fakeTraffic(traffic.Fail, ""), edit: func(s *memory.Store) {
			s.FailRead["hb"] = errors.New("ssh: no known_hosts file")
		}},
	} {
		for _, asJSON := range []bool{false, true} {
			name, ext := tc.name, ".txt"
			if asJSON {
				name, ext = name+"/json", ".json"
			}
			t.Run(name, func(t *testing.T) {
				if tc.name == "traffic-unavailable" && verbs.Built {
					t.Skip("built with -tags verbs: the engine is available (the VM testbed runs it for real)")
				}
				store := liveStore(t, tc.spec, tc.edit)
				f, _, stdout, stderr := testFactory()
				f.Drivers = func() *drivers.Registry { return newTestRegistry(t, store) }
				f.SkipSecretCheck = true // the memory drivers log in nowhere
				dir := t.TempDir()
				junit := filepath.Join(dir, "report.xml")
				args := append(append([]string{}, tc.args...), "--junit", junit, tc.spec)
				if asJSON {
					args = append([]string{"--json"}, args...)
				}
				var code ExitCode
				if tc.traffic != nil {
					code = execCmd(f, NewCmdValidate(f, func(o *ValidateOptions) error { o.Traffic = tc.traffic; return validateRun(o) }), append([]string{"validate"}, args...)...)
				} else {
					code = validateCmd(f, args...)
				}
				if code != tc.code {
					t.Errorf("exit %d, want %d\n%s%s", code, tc.code, stdout, stderr)
				}
				if asJSON {
					var doc validateJSONDoc
					if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
						t.Fatalf("invalid JSON: %v\n%s", err, stdout)
					}
					if doc.ExitCode != int(tc.code) {
						t.Errorf("exit_code %d", doc.ExitCode)
					}
				}
				testutil.Golden(t, filepath.Join("testdata", "validate", "golden", "live-"+tc.name+ext), stdout.Bytes())
				b, err := os.ReadFile(junit)
				if err != nil {
					t.Fatal(err)
				}
				var doc junitSuites
				if err := xml.Unmarshal(b, &doc); err != nil {
					t.Fatalf("junit: %v", err)
				}
				if !asJSON {
					testutil.Golden(t, filepath.Join("testdata", "validate", "golden", "live-"+tc.name+".junit.xml"), b)
				}
				if (tc.code == ExitError || tc.code == ExitMismatch) != (doc.Fails > 0) {
					t.Errorf("junit failures %d for exit %d", doc.Fails, tc.code)
				}
			})
		}
	}
}

// A traffic test that could not run is skipped in JUnit, never passed.
func TestValidateLiveJUnitNeverPassesUnrun(t *testing.T) {
	res := &validateResult{Traffic: fakeTraffic(traffic.NotRun, "host hb is reached over ssh")(context.Background(), traffic.Plan(testutil.Load(t, "testdata/validate/live/vm.fab.hcl", spec.LoadOptions{})))}
	for _, s := range liveJUnitSuites(res) {
		for _, c := range s.Cases {
			if c.Skipped == nil || !strings.Contains(c.Skipped.Message, "not run: host hb") {
				t.Errorf("%s: %+v", c.Name, c)
			}
		}
		if s.Skipped != s.Tests || s.Tests != 3 {
			t.Errorf("suite %s: %d tests, %d skipped", s.Name, s.Tests, s.Skipped)
		}
	}
}

// --self-mark makes every block mark its own traffic (marking = "self").
func TestValidateSelfMark(t *testing.T) {
	for _, self := range []bool{false, true} {
		var got []*traffic.Test
		opts := &ValidateOptions{SelfMark: self, Traffic: func(_ context.Context, tests []*traffic.Test) *traffic.Report {
			got = tests
			return &traffic.Report{Tests: tests}
		}}
		s := testutil.Load(t, "testdata/validate/live/vm.fab.hcl", spec.LoadOptions{})
		runTraffic(context.Background(), s, opts, nil)
		if len(got) == 0 {
			t.Fatal("no tests planned")
		}
		for _, tt := range got {
			if tt.Criteria.SelfMarked != self || (tt.Verbs.Conn == verbs.ConnCM) == self {
				t.Errorf("--self-mark=%v: %s conn %s self-marked %v", self, tt.Label(), tt.Verbs.Conn, tt.Criteria.SelfMarked)
			}
		}
	}
}
