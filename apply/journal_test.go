package apply

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// The hand-written encoder matches encoding/json byte for byte.
func TestEntryEncoding(t *testing.T) {
	yes, no := true, false
	ms := int64(1234)
	zero := int64(0)
	t0 := time.Date(2026, 8, 5, 10, 0, 0, 123456789, time.UTC)
	entries := []Entry{
		{Time: t0, RunID: "r", Event: EventRunStart, FormatVersion: "1.0", Fabric: "pod <1> & \"x\"", FabctlVersion: "v1",
			SpecHash: "abc", PlanHash: "def", PlanFile: "p.fab", Parallelism: 16, OnFailure: "stop", Order: "switches-first",
			OrderReason: "why\n\ttab", ConfirmTime: "5m0s", Devices: 10},
		{Time: t0, RunID: "r", Event: EventDeviceApplied, Device: "switch.leaf1", Token: "leaf1#1", Pending: true},
		{Time: t0, RunID: "r", Event: EventDeviceVerified, Device: "switch.leaf1", Confirmed: true, DurationMS: &zero},
		{Time: t0, RunID: "r", Event: EventDeviceFailed, Device: "host.h1", Error: "bad \x01 byte \xff and é ✓", Restored: &no,
			Partial: true, Remaining: []intent.AttrChange{{Path: "nic/eth0/mtu", Action: intent.Update, Before: "1500", After: "9000"}}, DurationMS: &ms},
		{Time: t0, RunID: "r", Event: EventDeviceFailed, Device: "host.h2", Restored: &yes},
		{Time: t0, RunID: "r", Event: EventStale, Device: "switch.x", Fingerprint: "ff", Reason: "moved", Wave: 2, Changes: 3},
		{Time: t0, RunID: "r", Event: EventRunStart, FormatVersion: "1.0", Fabric: "kt", Devices: 6, Engine: "kubernetes", MaxUnavailable: "10%", Canary: 1},
		{Time: t0, RunID: "r", Event: EventDeviceStart, Device: "host.h1", Wave: 2, Changes: 1, Revision: "r2", PreviousRevision: "r1", Batch: 1},
		{Time: t0, RunID: "r", Event: EventDeviceVerified, Device: "host.h1", Revision: "r2", Generation: 7, ObservedGeneration: 7, Reason: "Applied", DurationMS: &ms},
		{Time: time.Date(2026, 8, 5, 10, 0, 0, 0, time.UTC), RunID: "r", Event: EventRunEnd, Status: "failed", Counts: &Counts{Applied: 1, Failed: 2}},
	}
	for _, e := range entries {
		want, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.appendJSON(nil); !bytes.Equal(got, want) {
			t.Errorf("encoding differs\n got  %s\n want %s", got, want)
		}
	}
}

func TestJournalFile(t *testing.T) {
	dir := t.TempDir()
	path := JournalPath(dir, "pod/1", "20260805T100000Z-abcd0123")
	if want := filepath.Join(dir, "journal", "pod_1-20260805T100000Z-abcd0123.jsonl"); path != want {
		t.Errorf("path %s, want %s", path, want)
	}
	j, err := CreateJournal(path, "run", fixedClock(), []string{"topsecret", "abc"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1000; i++ {
		j.Write(Entry{Event: EventDeviceStart, Device: "switch.s"})
	}
	j.Write(Entry{Event: EventDeviceFailed, Device: "switch.s", Error: "login topsecret failed; abc as a token, abcdef inside a word"})
	if err := j.Flush(); err != nil {
		t.Fatal(err)
	}
	// Flushed: every line is in the file before Close.
	b, _ := os.ReadFile(path)
	if n := bytes.Count(b, []byte("\n")); n != 1001 {
		t.Errorf("%d lines after Flush", n)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
	b, _ = os.ReadFile(path)
	es := parseJournal(t, b)
	last := es[len(es)-1]
	if last.Error != "login *** failed; *** as a token, abcdef inside a word" || last.RunID != "run" || !last.Time.Equal(fixedClock()()) {
		t.Errorf("%+v", last)
	}
	if strings.Contains(string(b), "topsecret") {
		t.Error("secret in the journal")
	}
	j.Write(Entry{Event: EventRunEnd}) // after Close: dropped, no panic
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestJournalWriteError(t *testing.T) {
	j := NewJournal(failWriter{}, "r", nil, nil)
	j.Write(Entry{Event: EventRunStart})
	j.Write(Entry{Event: EventRunEnd})
	if err := j.Flush(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("flush: %v", err)
	}
	if err := j.Close(); err == nil {
		t.Error("close: no error")
	}
	var nilJ *Journal
	nilJ.Write(Entry{})
	if nilJ.Flush() != nil || nilJ.Close() != nil || nilJ.Path() != "" {
		t.Error("nil journal")
	}
}

func TestSecretValues(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	os.WriteFile(keyFile, []byte("-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END KEY-----\n"), 0o600)
	creds := []*spec.Credentials{
		{Name: "a", Password: &spec.SecretRef{Kind: "env", Name: "PW"}, Token: &spec.SecretRef{Kind: "env", Name: "UNSET"}},
		{Name: "b", PrivateKey: &spec.SecretRef{Kind: "file", Name: keyFile}, Passphrase: &spec.SecretRef{Kind: "file", Name: filepath.Join(dir, "missing")}},
		nil,
	}
	got := SecretValues(creds, func(k string) string { return map[string]string{"PW": "hunter22"}[k] })
	// The key is masked whole and line by line; its PEM armour is not
	// secret (spec.Masks, one rule for every secret).
	for _, want := range []string{"hunter22", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END KEY-----"} {
		found := false
		for _, g := range got {
			found = found || g == want
		}
		if !found {
			t.Errorf("%q not among %q", want, got)
		}
	}
}
