package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestVerbsCommand(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		code   ExitCode
		stderr string
	}{
		{"bad size", []string{"verbs", "client", "198.18.0.1", "-s", "huge"}, ExitUsage, "invalid --size"},
		{"bad op", []string{"verbs", "client", "198.18.0.1", "--op", "atomic"}, ExitUsage, "unknown operation"},
		{"both counts", []string{"verbs", "client", "198.18.0.1", "-n", "5", "-D", "3"}, ExitUsage, "not both"},
		{"bad backend", []string{"verbs", "server", "--backend", "qperf"}, ExitUsage, "invalid --backend"},
		{"bad addr", []string{"verbs", "client", "198.18.0.1", "--addr", "fa"}, ExitUsage, "want an IP address"},
		{"no server", []string{"verbs", "client"}, ExitUsage, "accepts 1 arg"},
		// No RDMA here (or no verbs in this build): the test cannot run,
		// which is exit 5 and never a pass.
		{"unavailable", []string{"verbs", "client", "198.18.0.1", "--op", "send", "--mode", "lat"}, ExitNothingTested, "traffic test unavailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _, _, stderr := testFactory()
			if code := runCLI(f, tc.args...); code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, stderr)
			}
			if !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stderr %q, want %q", stderr, tc.stderr)
			}
		})
	}
	f, _, stdout, _ := testFactory()
	if code := runCLI(f, "verbs", "client", "198.18.0.1", "--json"); code != ExitNothingTested {
		t.Fatalf("json: exit %d", code)
	}
	var doc verbsJSON
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil || doc.OK || !doc.Unavailable || !strings.Contains(doc.Error, "unavailable") {
		t.Errorf("json %+v %v\n%s", doc, err, stdout)
	}
}

func TestSplitHostPortDefault(t *testing.T) {
	for _, tc := range []struct {
		in   string
		host string
		port int
		bad  bool
	}{
		{"", "", 18615, false}, {"198.18.0.1", "198.18.0.1", 18615, false}, {"198.18.0.1:9", "198.18.0.1", 9, false},
		{":7000", "", 7000, false}, {"fe80::1", "fe80::1", 18615, false}, {"[fe80::1]:5", "fe80::1", 5, false},
		{"h:0", "", 0, true}, {"h:x", "", 0, true},
	} {
		h, p, err := splitHostPortDefault(tc.in, 18615)
		if (err != nil) != tc.bad || (!tc.bad && (h != tc.host || p != tc.port)) {
			t.Errorf("%q: %q %d %v", tc.in, h, p, err)
		}
	}
}
