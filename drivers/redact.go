package drivers

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// RedactSecrets replaces every whole-token occurrence of a secret in s
// by mark. An occurrence is a whole token when the characters around it
// are not letters, digits or '_' (or it is at either end of s): so
// `admin:pw@host`, `password pw` and `"pw"` are masked, while the letters
// of a short password inside ordinary words are left alone (masking them
// garbles the message and the marks' positions give the password away).
// This is the one redactor of driver errors, command lines, transcripts
// and journals.
func RedactSecrets(s string, secrets []string, mark string) string {
	for _, x := range secrets {
		if x == "" || !strings.Contains(s, x) {
			continue
		}
		var b strings.Builder
		rest := s
		for {
			i := strings.Index(rest, x)
			if i < 0 {
				b.WriteString(rest)
				break
			}
			j := i + len(x)
			before, _ := utf8.DecodeLastRuneInString(rest[:i])
			if i == 0 && b.Len() > 0 {
				before, _ = utf8.DecodeLastRuneInString(b.String())
			}
			after, _ := utf8.DecodeRuneInString(rest[j:])
			if (i == 0 && b.Len() == 0 || !isWord(before)) && (j == len(rest) || !isWord(after)) {
				b.WriteString(rest[:i])
				b.WriteString(mark)
				rest = rest[j:]
				continue
			}
			// Not a token: keep the first byte and look again after it.
			_, n := utf8.DecodeRuneInString(rest[i:])
			b.WriteString(rest[:i+n])
			rest = rest[i+n:]
		}
		s = b.String()
	}
	return s
}

func isWord(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}
