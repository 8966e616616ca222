package termsafe

import (
	"bytes"
	"regexp"
	"testing"
	"unicode/utf8"
)

// sgrOut is an SGR sequence as the writer may pass it on a colour
// terminal.
var sgrOut = regexp.MustCompile(`^\x1b\[[0-9;]*m`)

// FuzzWriter: whatever bytes reach the terminal, in whatever pieces,
// what the Writer passes on is valid UTF-8 with no unsafe character
// (IsUnsafe), ESC only at the start of an SGR sequence and only with
// SGR set; without SGR it is exactly Escape of the input, and the
// pieces do not change the result.
func FuzzWriter(f *testing.F) {
	for _, s := range []string{"ok\n", "\x1b[31mred\x1b[0m", "\x1b[2J\x1b]0;title\x07", "\x1b[8mhidden", "caf\xc3\xa9 \xe2\x80\xae", "\xc2\x9b31m", "\xff\xfe", "a\x1b[1;3"} {
		f.Add([]byte(s), byte(3), true)
		f.Add([]byte(s), byte(1), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, step byte, sgr bool) {
		var one, pieces bytes.Buffer
		w1 := &Writer{W: &one, SGR: sgr}
		if _, err := w1.Write(data); err != nil {
			t.Fatal(err)
		}
		_ = w1.Flush()
		w2 := &Writer{W: &pieces, SGR: sgr}
		n := int(step%7) + 1
		for i := 0; i < len(data); i += n {
			if _, err := w2.Write(data[i:min(i+n, len(data))]); err != nil {
				t.Fatal(err)
			}
		}
		_ = w2.Flush()
		out := one.Bytes()
		if !bytes.Equal(out, pieces.Bytes()) {
			t.Fatalf("in pieces of %d: %q, at once: %q", n, pieces.Bytes(), out)
		}
		if !sgr && string(out) != Escape(string(data)) {
			t.Fatalf("%q: %q, Escape gives %q", data, out, Escape(string(data)))
		}
		if !utf8.Valid(out) {
			t.Fatalf("%q: output not UTF-8: %q", data, out)
		}
		for i := 0; i < len(out); {
			if out[i] == 0x1b {
				m := sgrOut.Find(out[i:])
				if !sgr || m == nil {
					t.Fatalf("%q: ESC passed at %d: %q", data, i, out)
				}
				if bytes.Contains(append(append([]byte(";"), m[2:len(m)-1]...), ';'), []byte(";8;")) {
					t.Fatalf("%q: SGR 8 (concealed) passed: %q", data, out)
				}
				i += len(m)
				continue
			}
			r, size := utf8.DecodeRune(out[i:])
			if IsUnsafe(r) {
				t.Fatalf("%q: unsafe %U passed: %q", data, r, out)
			}
			i += size
		}
	})
}
