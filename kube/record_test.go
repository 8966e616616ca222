package kube

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/plan"
)

// TestRunLog: a rollout's host events become the SSH engine's journal
// events (with the revision and generations) and keep the applied
// record: verified hosts enter it, rolled-back hosts get their previous
// entry back. The e2e (testbed/kubetb) checks the same against a real
// apiserver.
func TestRunLog(t *testing.T) {
	dir := t.TempDir()
	old := &plan.Applied{FormatVersion: plan.FormatVersion, Fabric: "f", Devices: map[string]intent.State{"host.b": {"nic/e/mtu": "1500"}}}
	if err := old.Save(dir); err != nil {
		t.Fatal(err)
	}
	rec, err := apply.OpenRecorder(dir, "f")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	j := apply.NewJournal(&buf, "run1", func() time.Time { return time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC) }, nil)
	lg := &runLog{j: j, rec: rec, wave: 2,
		addr:    map[string]string{"a": "host.a", "b": "host.b", "c": "host.c"},
		desired: map[string]intent.State{"a": {"nic/e/mtu": "9000"}, "b": {"nic/e/mtu": "9000"}, "c": {"nic/e/mtu": "9000"}},
		changes: map[string]int{"a": 1, "b": 1, "c": 1}}
	if err := lg.starting(Release{Name: "a", Revision: "r2", Old: &HostSpec{Revision: "r1"}}, 1); err != nil {
		t.Fatal(err)
	}
	lg.event(RolloutEvent{Host: "a", Phase: "released", Outcome: HostOutcome{Name: "a", Revision: "r2", Generation: 4, Batch: 1}})
	lg.event(RolloutEvent{Host: "a", Phase: "applied", Outcome: HostOutcome{Name: "a", Status: apply.StatusApplied, Revision: "r2", Generation: 4, ObservedGeneration: 4, Reason: ReasonApplied, Duration: 1500 * time.Millisecond}})
	lg.event(RolloutEvent{Host: "b", Phase: "applied", Outcome: HostOutcome{Name: "b", Status: apply.StatusApplied, Revision: "r2", Generation: 7, ObservedGeneration: 7, Reason: ReasonApplied}})
	lg.event(RolloutEvent{Host: "c", Phase: "failed", Message: "no report", Outcome: HostOutcome{Name: "c", Status: apply.StatusFailed, Revision: "r2", Generation: 2, Reason: ReasonTimeout, Message: "no report"}})
	lg.event(RolloutEvent{Host: "b", Phase: "rolled_back", Outcome: HostOutcome{Name: "b", Status: apply.StatusRolledBack, Revision: "r1", Generation: 8, ObservedGeneration: 8, Reason: ReasonApplied}})
	res := &apply.Result{Devices: []*apply.DeviceResult{{Address: "host.d", Kind: intent.KindHost, Name: "d", Status: apply.StatusNotAttempted, Wave: 2, Reason: "budget"}}}
	res.Counts = apply.CountResults(res.Devices)
	lg.end(res, true, apply.RunFailed, &apply.JournalError{Err: nil})
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}

	var got []apply.Entry
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var e apply.Entry
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		got = append(got, e)
	}
	check := func(i int, ev, dev string, ok bool, what string) {
		t.Helper()
		if i >= len(got) || got[i].Event != ev || got[i].Device != dev || !ok {
			t.Errorf("line %d: %+v, want %s %s (%s)", i, got[min(i, len(got)-1)], ev, dev, what)
		}
	}
	check(0, apply.EventDeviceStart, "host.a", got[0].Revision == "r2" && got[0].PreviousRevision == "r1" && got[0].Wave == 2 && got[0].Batch == 1 && got[0].Changes == 1, "revisions, wave, batch")
	check(1, apply.EventDeviceApplied, "host.a", got[1].Generation == 4 && got[1].Revision == "r2", "generation published")
	check(2, apply.EventDeviceVerified, "host.a", got[2].ObservedGeneration == 4 && got[2].Reason == ReasonApplied && got[2].DurationMS != nil && *got[2].DurationMS == 1500, "observed generation")
	check(3, apply.EventDeviceVerified, "host.b", got[3].ObservedGeneration == 7, "")
	check(4, apply.EventDeviceFailed, "host.c", got[4].Restored != nil && !*got[4].Restored && got[4].Reason == ReasonTimeout && got[4].Error == "no report", "a host that never reported is not restored")
	check(5, apply.EventRolledBack, "host.b", got[5].Revision == "r1" && got[5].ObservedGeneration == 8, "previous revision")
	check(6, apply.EventSkipped, "host.d", got[6].Reason == "budget" && got[6].Wave == 2, "")
	check(7, apply.EventRunEnd, "", got[7].Status == "failed" && got[7].Counts != nil && got[7].Counts.NotAttempted == 1, "")

	a, err := plan.LoadApplied(dir, "f")
	if err != nil {
		t.Fatal(err)
	}
	if a.Devices["host.a"]["nic/e/mtu"] != "9000" {
		t.Errorf("host.a verified: record %v", a.Devices["host.a"])
	}
	if a.Devices["host.b"]["nic/e/mtu"] != "1500" {
		t.Errorf("host.b rolled back: record %v, want its entry before the run", a.Devices["host.b"])
	}
	if _, ok := a.Devices["host.c"]; ok {
		t.Errorf("host.c failed but is in the record: %v", a.Devices["host.c"])
	}
}

// A host whose journal start cannot be written is not published.
func TestRunLogStartFails(t *testing.T) {
	j := apply.NewJournal(failWriter{}, "run1", nil, nil)
	defer j.Close()
	lg := &runLog{j: j, addr: map[string]string{"a": "host.a"}}
	err := lg.starting(Release{Name: "a", Revision: "r"}, 1)
	var je *apply.JournalError
	if !errors.As(err, &je) {
		t.Fatalf("starting with an unwritable journal: %v, want a JournalError", err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }
