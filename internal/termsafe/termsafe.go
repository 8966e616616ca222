// Package termsafe keeps text that fabctl did not write itself (spec
// strings, plan fields, device output) from acting on the terminal it is
// printed on: control characters are shown as escapes instead of moving
// the cursor, clearing the screen, retitling the window, hiding text or
// reordering it.
//
// Escaped: C0 controls but newline and tab, DEL, C1 controls (U+0080 to
// U+009F, 8-bit CSI/OSC on terminals that honour them), the Unicode
// bidirectional formatting characters (U+061C, U+200E, U+200F, U+202A to
// U+202E, U+2066 to U+2069: the "Trojan Source" reordering, CVE-2021-42574)
// and bytes that are not UTF-8. C0 and DEL are written \xNN, the others
// \uNNNN (which a JSON string also reads as the same character), bytes
// that are not UTF-8 \xNN.
package termsafe

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// IsUnsafe reports whether r must be escaped.
func IsUnsafe(r rune) bool {
	switch {
	case r < 0x20:
		return r != '\n' && r != '\t'
	case r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// Needs reports whether s holds anything Escape would change.
func Needs(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 || IsUnsafe(r) {
			return true
		}
		i += n
	}
	return false
}

// Escape returns s with every unsafe character escaped (s itself when
// there is none).
func Escape(s string) string {
	if !Needs(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case IsUnsafe(r):
			b.WriteString(Rune(r))
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Rune is the escape of one unsafe rune (the rune itself when safe).
func Rune(r rune) string {
	switch {
	case !IsUnsafe(r):
		return string(r)
	case r < 0x80:
		return fmt.Sprintf(`\x%02x`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
}

// Writer escapes what is written through it (see Escape) and passes it
// on to W. With SGR set, ANSI "select graphic rendition" sequences
// (ESC [ digits/semicolons m: colour, bold, underline) pass unchanged,
// for a stream that carries fabctl's own styling on a colour terminal;
// SGR 8 (concealed text) is escaped even then. Any other escape
// sequence is escaped. A rune or SGR sequence split across two writes is
// held back until it is whole (at most a few bytes).
type Writer struct {
	W   io.Writer
	SGR bool

	pend []byte
	buf  []byte
}

// maxSGR bounds an SGR sequence the writer waits for.
const maxSGR = 32

// Write escapes p and writes it; it reports len(p) written when the
// underlying write succeeds.
func (w *Writer) Write(p []byte) (int, error) {
	in := p
	if len(w.pend) > 0 {
		in = append(w.pend, p...)
		w.pend = nil
	}
	out := w.buf[:0]
	for i := 0; i < len(in); {
		c := in[i]
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\t' {
			j := i + 1
			for j < len(in) && (in[j] >= 0x20 && in[j] < 0x7f || in[j] == '\n' || in[j] == '\t') {
				j++
			}
			out = append(out, in[i:j]...)
			i = j
			continue
		}
		if c == 0x1b && w.SGR {
			n, whole := sgrLen(in[i:])
			if n > 0 {
				out = append(out, in[i:i+n]...)
				i += n
				continue
			}
			if !whole { // could still become an SGR sequence
				w.pend = append([]byte(nil), in[i:]...)
				break
			}
		}
		if !utf8.FullRune(in[i:]) {
			w.pend = append([]byte(nil), in[i:]...)
			break
		}
		r, n := utf8.DecodeRune(in[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			out = append(out, fmt.Sprintf(`\x%02x`, c)...)
		case IsUnsafe(r):
			out = append(out, Rune(r)...)
		default:
			out = append(out, in[i:i+n]...)
		}
		i += n
	}
	w.buf = out
	if _, err := w.W.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what a Write held back (an incomplete rune or sequence at
// the end of the output), escaped.
func (w *Writer) Flush() error {
	if len(w.pend) == 0 {
		return nil
	}
	p := w.pend
	w.pend = nil
	_, err := io.WriteString(w.W, Escape(string(p)))
	return err
}

// sgrLen is the length of the SGR sequence at the start of b (ESC '['
// parameters 'm'), 0 when there is none; whole is false when b ends
// before it could be decided.
func sgrLen(b []byte) (n int, whole bool) {
	if len(b) < 2 {
		return 0, false
	}
	if b[1] != '[' {
		return 0, true
	}
	param, start := 0, 2
	for i := 2; i < len(b) && i < maxSGR; i++ {
		c := b[i]
		switch {
		case c >= '0' && c <= '9':
			param = param*10 + int(c-'0')
			if param > 255 {
				return 0, true
			}
		case c == ';' || c == 'm':
			if param == 8 && i > start { // conceal
				return 0, true
			}
			if c == 'm' {
				return i + 1, true
			}
			param, start = 0, i+1
		default:
			return 0, true
		}
	}
	if len(b) >= maxSGR {
		return 0, true
	}
	return 0, false
}
