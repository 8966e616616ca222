package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzLoad feeds random and mutated specs to the loader: no input may
// panic or hang, and every error must come with a diagnostic. Seeds: the
// corpus in testdata/fuzz/FuzzLoad, every example spec and the base spec
// of the unit tests.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(base), false)
	f.Add([]byte(strings.Replace(base, "  credentials = \"sw\"\n", "  credentials = \"sw\"\n  unmanaged = { \"port/*/trust\" = \"site QoS\", \"tc/3\" = \"x\" }\n", 1)), false)
	f.Add([]byte(`{"fabric": {"x": {"transport": "iwarp"}}, "link": [{"endpoints": ["a:b", "c:d"]}]}`), true)
	examples, _ := filepath.Glob(filepath.Join("..", "examples", "*", "*.fab.hcl"))
	for _, e := range examples {
		if b, err := os.ReadFile(e); err == nil {
			f.Add(b, false)
		}
	}
	f.Fuzz(func(t *testing.T, src []byte, asJSON bool) {
		name := "fuzz.fab.hcl"
		if asJSON {
			name += ".json"
		}
		done := make(chan struct{})
		var diags int
		go func() {
			defer close(done)
			s, d := LoadFiles([]File{{Name: name, Data: src}}, LoadOptions{Platforms: testPlatforms})
			diags = len(d)
			if s == nil {
				t.Errorf("nil spec")
			}
			if !d.HasErrors() && s.Fabric == nil {
				t.Errorf("spec without fabric loaded without an error")
			}
			// Rendering diagnostics must not panic either.
			_ = ToJSON(d, s.Files)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("LoadFiles hung on %d bytes", len(src))
		}
		_ = diags
	})
}

// FuzzUnits checks the unit parsers never panic and round-trip sizes.
func FuzzUnits(f *testing.F) {
	for _, s := range []string{"150KB", "1.5MB", "64MiB", "400G", "3m", "200ms", "90%", "24-31", "0,8,63", "", "1e400", "9999999999999999999G", "-3m", ".5s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if b, err := ParseBytes(s); err == nil {
			if b < 0 {
				t.Errorf("negative size %d from %q", b, s)
			}
			if b2, err := ParseBytes(b.String()); err == nil && b >= 1000 && absDiff(int64(b2), int64(b)) > int64(b)/1000+1 {
				t.Errorf("size %q -> %d -> %q -> %d", s, b, b.String(), b2)
			}
		}
		_, _ = ParseBitRate(s)
		_, _ = ParseLength(s)
		if d, err := ParseDuration(s); err == nil && d < 0 {
			t.Errorf("negative duration from %q", s)
		}
		_, _ = ParsePercent(s)
		if v, err := ParseIntRanges(s, 0, 63); err == nil {
			for _, x := range v {
				if x < 0 || x > 63 {
					t.Errorf("%q gave %d outside 0..63", s, x)
				}
			}
		}
	})
}

func absDiff(a, b int64) int64 {
	if a > b {
		return a - b
	}
	return b - a
}
