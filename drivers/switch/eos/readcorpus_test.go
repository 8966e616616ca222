package eos

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
)

// corpusBody is a corpus file without its "#" source header.
func corpusBody(t testing.TB, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(corpusDir, name))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, l := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(l, "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// TestReadVendorCorpus: the reader parses the corpus's vendor running-
// configs (Arista AVD generator output, real vEOS `show running-config
// all`) into fabctl state; the golden file is the expected state.
func TestReadVendorCorpus(t *testing.T) {
	sw := &intent.Switch{Trust: "dscp", Ports: []intent.Port{{Name: "Ethernet1"}, {Name: "Ethernet3"}, {Name: "Ethernet5"}, {Name: "Ethernet8"}}}
	for q := 0; q < 8; q++ {
		sw.TCs = append(sw.TCs, intent.TC{TC: q})
	}
	var out strings.Builder
	for _, name := range []string{"avd-qos-profile.cfg", "avd-interfaces.cfg", "pyeapi-running-config-all.txt", "napalm-show-running-config.txt"} {
		st, err := ReadRunningConfig(corpusBody(t, name), sw)
		if err != nil {
			t.Fatal(err)
		}
		keys := make([]string, 0, len(st))
		for k := range st {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out.WriteString("== " + name + "\n")
		for _, k := range keys {
			out.WriteString(k + " = " + st[k] + "\n")
		}
	}
	testutil.Golden(t, filepath.Join("testdata", "corpus-read.golden"), []byte(out.String()))
}

// TestSavedCompareCorpus: NAPALM's real startup-config header differs from
// a running-config's ("! Command: show startup-config", "! Startup-config
// last modified at ..."); config/saved ignores the "! " header.
func TestSavedCompareCorpus(t *testing.T) {
	start := corpusBody(t, "napalm-show-startup-config.txt")
	run := strings.Replace(strings.Replace(start, "! Command: show startup-config", "! Command: show running-config", 1),
		"! Startup-config last modified at  Sun Sep 11 18:35:01 2016 by root\n", "", 1)
	if !SameConfig(start, run) {
		t.Fatal("same configuration behind different headers reads as unsaved")
	}
	if SameConfig(start, strings.Replace(run, "end", "interface Ethernet1\n   mtu 9000\n!\nend", 1)) {
		t.Fatal("a running change reads as saved")
	}
	_ = drivers.PathSaved
}
