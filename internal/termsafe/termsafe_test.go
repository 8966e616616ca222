package termsafe

import (
	"bytes"
	"strings"
	"testing"
)

func TestEscape(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text\twith tab\n", "plain text\twith tab\n"},
		{"\x1b]0;owned\x07", `\x1b]0;owned\x07`},
		{"a\rb\bc\x00d\x7f", `a\x0db\x08c\x00d\x7f`},
		{"swp1\u202egnp.exe", `swp1\u202egnp.exe`},
		{"\u0085\u009b2J", `\u0085\u009b2J`},
		{"bad \xff byte", `bad \xff byte`},
		{"naïve ✔", "naïve ✔"},
	} {
		if got := Escape(c.in); got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
		if Needs(c.in) != (c.in != c.want) {
			t.Errorf("Needs(%q) = %v", c.in, Needs(c.in))
		}
	}
}

// The writer escapes whatever is written through it, also a rune or a
// sequence split across writes; with SGR it keeps colour sequences but
// not others, nor SGR 8 (concealed).
func TestWriter(t *testing.T) {
	for _, c := range []struct {
		sgr    bool
		writes []string
		want   string
	}{
		{false, []string{"ok \x1b[31mred\x1b[0m\n"}, `ok \x1b[31mred\x1b[0m` + "\n"},
		{true, []string{"ok \x1b[1;31mred\x1b[0m\n"}, "ok \x1b[1;31mred\x1b[0m\n"},
		{true, []string{"\x1b[2J\x1b]0;t\x07\x1b[8mhidden\x1b[0;8m"}, `\x1b[2J\x1b]0;t\x07\x1b[8mhidden\x1b[0;8m`},
		{true, []string{"a\x1b", "[3", "2mb"}, "a\x1b[32mb"},
		{false, []string{"caf\xc3", "\xa9 \xe2\x80", "\xae"}, `café \u202e`},
		{false, []string{"end\xc3"}, `end\xc3`},
	} {
		var b bytes.Buffer
		w := &Writer{W: &b, SGR: c.sgr}
		for _, s := range c.writes {
			if n, err := w.Write([]byte(s)); err != nil || n != len(s) {
				t.Fatalf("Write(%q) = %d, %v", s, n, err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if got := b.String(); got != c.want {
			t.Errorf("%q (sgr %v): got %q, want %q", strings.Join(c.writes, "|"), c.sgr, got, c.want)
		}
	}
}
