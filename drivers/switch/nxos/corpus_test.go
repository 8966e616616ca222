package nxos

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
)

// corpusBody is a corpus file without its source header ("#" lines, or
// the leading "!" lines of a .cfg) and, for files holding several
// excerpts, up to the first "# ----" separator.
func corpusBody(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(corpusDir, name))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	header := true
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "# ----") {
			break
		}
		if strings.HasPrefix(l, "#") || header && strings.HasPrefix(l, "! ") {
			continue
		}
		header = false
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

func stateText(st intent.State) string {
	var lines []string
	for k, v := range st {
		lines = append(lines, k+" = "+v)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

// TestReadCorpusGolden: the reader turns the corpus's real NX-OS output
// and real-switch configuration into state (goldens reviewed by hand):
//   - show-running-config-header.txt: NX-OS 10.3(1) `show running-config`
//     (cisco.nxos lab capture): empty interfaces read as MTU 1500, PFC off,
//     no watchdog, no input policy; no fabctl classification;
//   - microsoft-azure-local-n9k.cfg: Microsoft's QoS tested on a Nexus
//     93180YC-FX 10.3.x, in running-config layout: the queuing and
//     network-qos policies attached to system qos are read whatever their
//     names (tc/3 no-drop, 50 % and WRED+ECN 300/300 kbytes; the classes
//     with `bandwidth remaining percent 0` are unused queues, not traffic
//     classes; c-out-8q-q7 `bandwidth percent 1` is a class fabctl cannot
//     read as ETS or strict).
func TestReadCorpusGolden(t *testing.T) {
	sw := &intent.Switch{Trust: "dscp", TCs: []intent.TC{{TC: 0}, {TC: 3, Lossless: true}, {TC: 7}},
		Ports: []intent.Port{{Name: "Ethernet1/1"}, {Name: "Ethernet1/2"}}}
	for _, c := range []struct{ file, golden string }{
		{"show-running-config-header.txt", "corpus-show-running-config-header.golden"},
		{"microsoft-azure-local-n9k.cfg", "corpus-microsoft-azure-local-n9k.golden"},
	} {
		t.Run(c.file, func(t *testing.T) {
			st, err := ReadRunningConfig(corpusBody(t, c.file), sw)
			if err != nil {
				t.Fatal(err)
			}
			testutil.Golden(t, filepath.Join("testdata", c.golden), []byte(stateText(st)))
		})
	}
}

// TestConfigBodyCorpus: the startup/running comparison ignores exactly
// the header lines real NX-OS output carries (show-startup-config.txt:
// "!Command:", "!Time:", "!Startup config saved at:";
// show-running-config-header.txt: "!Running configuration last done at:").
func TestConfigBodyCorpus(t *testing.T) {
	start := corpusBody(t, "show-startup-config.txt")
	if !strings.HasPrefix(start, "!Command: show startup-config\n!Time: ") {
		t.Fatalf("corpus excerpt changed: %q", start[:40])
	}
	body := ConfigBody(start)
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "!") {
			t.Fatalf("header line kept: %q", l)
		}
	}
	if !strings.HasPrefix(body, "version 7.3(1)D1(1)\n") {
		t.Fatalf("body: %q", body)
	}
	run := corpusBody(t, "show-running-config-header.txt")
	if b := ConfigBody(run); !strings.HasPrefix(b, "version 10.3(1) Bios:version\n") {
		t.Fatalf("body: %q", b)
	}
	// Same configuration, different headers: equal.
	a := "!Command: show running-config\n!Running configuration last done at: Mon Feb 12 07:11:33 2024\n!Time: Mon Feb 12 07:11:34 2024\n\nversion 10.3(1)\ninterface Ethernet1/1\n  mtu 9216\n"
	b := "!Command: show startup-config\n!Time: Mon Feb 12 08:00:00 2024\n!Startup config saved at: Mon Feb 12 07:20:00 2024\n\nversion 10.3(1)\ninterface Ethernet1/1\n  mtu 9216\n"
	if ConfigBody(a) != ConfigBody(b) {
		t.Fatal("same configuration compares unequal")
	}
	if ConfigBody(a) == ConfigBody(strings.Replace(b, "9216", "9000", 1)) {
		t.Fatal("different configuration compares equal")
	}
}
