package eos

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/intent"
)

// TestReadOtherProfileQueues: a port bound to a qos profile fabctl does
// not own (AVD's intended configuration, no FABCTL profile) has its
// tx-queues read, as differing from FABCTL's, even when the intent names
// no class: what a switch configured by another tool runs is seen, not
// passed over.
func TestReadOtherProfileQueues(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "vendor", "eos", "avd-intended-qos.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	sw := &intent.Switch{Trust: "dscp", Ports: []intent.Port{{Name: "Ethernet1"}}}
	st, err := ReadRunningConfig(string(b), sw)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"tc/1/sched":     "strict (qos profile test: ets)",
		"tc/1/bandwidth": "not set (qos profile test: 50)",
		"tc/2/ecn/min":   "not set (qos profile test: 320000)",
	} {
		if st[path] != want {
			t.Errorf("%s = %q, want %q", path, st[path], want)
		}
	}
	for k := range st {
		if strings.HasPrefix(k, "tc/5/") {
			t.Errorf("%s read: tx-queue 5 is test_with_pfc's, a profile no managed port uses", k)
		}
	}
}
