package telemetry

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"gopkg.in/yaml.v3"

	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/internal/testutil"
)

// promtool is Debian's promtool (package prometheus), or a skip (a
// failure under CI=true).
func promtool(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		testutil.SkipOrFail(t, "promtool not installed (apt-get install prometheus)")
	}
	return p
}

// recorder turns successive gathers into promtool input series.
type recorder struct {
	steps  int
	series map[string][]string
}

func (r *recorder) gather(t testing.TB, g prometheus.Gatherer) {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			k := mf.GetName() + "{" + strings.Join(ls, ",") + "}"
			vals := r.series[k]
			for len(vals) < r.steps {
				vals = append(vals, "_")
			}
			r.series[k] = append(vals, strconv.FormatFloat(metricValue(m), 'g', -1, 64))
		}
	}
	r.steps++
}

type promSeries struct {
	Series string `yaml:"series"`
	Values string `yaml:"values"`
}

func (r *recorder) input() []promSeries {
	var keys []string
	for k := range r.series {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []promSeries
	for _, k := range keys {
		out = append(out, promSeries{Series: k, Values: strings.Join(r.series[k], " ")})
	}
	return out
}

// TestRulesPromtool records a fabric through its real exporters: an SR
// Linux gNMI target streaming PFC counters (the testbed's target) and a
// host NIC read from sysfs, quiet for four scrapes, then a pause storm on
// lossless priority 3, a PFC watchdog event, CNPs without ECN marks and a
// DCB drift. The series go to promtool test rules with the rules Rules
// derives from the spec, and each alert must fire exactly when it should.
func TestRulesPromtool(t *testing.T) {
	pt := promtool(t)
	s, tg := gnmiFabric(t, "srlinux", "ethernet-1/1")
	root := t.TempDir()
	fakeSysfs(t, root, map[string][]string{"rxe_h5": mlx5HW}, 0)
	write(t, filepath.Join(root, "class/infiniband/rxe_h5/ports/1/rate"), "40 Gb/sec (4X QDR)") // spec: 100G
	nics, _ := NICs(s, nil)
	hc := NewHostCollector(nics, root)
	hc.WatchingDCB()
	sc := NewSwitchCollector(s, builtin.Platforms())
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(hc, sc)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		Stream(ctx, s, sc, StreamOptions{Sample: 100 * time.Millisecond, Retry: 100 * time.Millisecond,
			Getenv: func(string) string { return tgPassword }})
		close(done)
	}()
	t.Cleanup(func() { cancel(); <-done })
	waitFor(t, "the stream", func() bool { return sc.Status()["leaf5"] == "" })

	rec := &recorder{series: map[string][]string{}}
	var rx, wd, cnp uint64
	lbl := map[string]string{"direction": "rx", "priority": "3", "leaf": "leaf5"}
	for step := 0; step < 10; step++ {
		storm := step >= 4
		if storm {
			rx += 30000 // 2000/s at a 15s scrape interval
			cnp += 1500
		} else {
			rx += 10
		}
		if step == 6 {
			wd++
		}
		if step == 4 {
			hc.SetDrift("h5", "eth1", 1)
		}
		v := fmt.Sprintf(`{"pfc-priority":[{"index":3,"pfc-pause-frames-received":"%d","pfc-pause-frames-generated":"0","deadlock-recovery-occurrences":"%d"}]}`, rx, wd)
		if err := tg.SetState("/srl_nokia-qos:qos/interfaces/interface[interface-id=ethernet-1/1]/pfc/statistics", []byte(v)); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(root, "class/infiniband/rxe_h5/ports/1/hw_counters/rp_cnp_handled"), strconv.FormatUint(cnp, 10))
		want := float64(rx)
		waitFor(t, "the target's counters", func() bool { v, _ := value(t, reg, "fabctl_switch_pfc_pause_frames_total", lbl); return v == want })
		rec.gather(t, reg)
	}

	rules := Rules(s, RuleOptions{For: 30 * time.Second})
	dir := t.TempDir()
	full, err := rules.YAML()
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "full.rules.yml"), string(full))
	if out, err := exec.Command(pt, "check", "rules", filepath.Join(dir, "full.rules.yml")).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s\n%s", err, out, full)
	}
	// promtool compares annotations too: test the expressions without them
	// (check rules above parsed the annotation templates).
	for i := range rules.Groups[0].Rules {
		rules.Groups[0].Rules[i].Annotations = nil
	}
	bare, _ := rules.YAML()
	write(t, filepath.Join(dir, "rules.yml"), string(bare))

	port := map[string]string{"fabric": "tele", "host": "h5", "nic": "eth1", "rail": "0", "leaf": "leaf5", "port": "ethernet-1/1"}
	with := func(sev string, extra ...string) map[string]string {
		m := map[string]string{"severity": sev}
		for k, v := range port {
			m[k] = v
		}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return m
	}
	type alert struct {
		ExpLabels map[string]string `yaml:"exp_labels"`
	}
	type alertTest struct {
		EvalTime  string  `yaml:"eval_time"`
		Alertname string  `yaml:"alertname"`
		ExpAlerts []alert `yaml:"exp_alerts"`
	}
	quiet, late := "50s", "2m15s"
	var tests []alertTest
	for _, a := range []struct {
		name   string
		labels map[string]string
	}{
		{"FabricPFCPauseStorm", with("critical", "priority", "3", "direction", "rx")},
		{"FabricPFCWatchdogFired", with("critical", "priority", "3")},
		{"FabricCNPWithoutECNMarks", with("warning")},
		{"FabricDCBDrift", with("critical")},
	} {
		tests = append(tests, alertTest{EvalTime: quiet, Alertname: a.name, ExpAlerts: []alert{}},
			alertTest{EvalTime: late, Alertname: a.name, ExpAlerts: []alert{{a.labels}}})
	}
	// The NIC trained at 40G against a 100G spec from the first scrape.
	tests = append(tests, alertTest{EvalTime: quiet, Alertname: "FabricPortBelowSpecSpeed", ExpAlerts: []alert{{with("warning")}}})
	doc := map[string]any{
		"rule_files":          []string{"rules.yml"},
		"evaluation_interval": "15s",
		"tests": []any{map[string]any{
			"interval":        "15s",
			"input_series":    rec.input(),
			"alert_rule_test": tests,
		}},
	}
	b, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "rules_test.yml"), string(b))
	if testutil.Update() {
		_ = os.MkdirAll("testdata", 0o755)
		write(t, "testdata/rules_test.yml", string(b))
	}
	cmd := exec.Command(pt, "test", "rules", "rules_test.yml")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool test rules: %v\n%s\nrules:\n%s", err, out, bare)
	} else {
		t.Logf("promtool test rules:\n%s", out)
	}
}
