package drivers

import (
	"regexp"
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

// Redaction by position. fabctl knows where it sent a secret: the value
// it typed at a password prompt, a secret inside a line it typed. Only
// those places (and the device's echo of them, where the device prints
// them back) are masked with RedactSecrets. What a device printed on its
// own is never searched for the secret's value: a password equal to a
// word the device prints (the user name in a prompt, a hostname) would
// be given away by where the masks fall. Device text gets
// RedactSecretWords instead, which masks the value after a secret
// keyword whatever it is, so a configuration the device prints (show
// running-config, a CONFIG_DB dump) keeps no secret.

// secretWords matches a configuration keyword that a secret follows
// (an optional ':' or '=', an optional encryption type or hash name),
// and the value (quoted or one word); JSON "password": "..." too.
var secretWords = regexp.MustCompile(`(?i)(\b(?:secret|password|passphrase|passwd|(?:tacacs-server|radius-server)(?:\s+host\s+\S+)?\s+key)\b(?:\s*[:=])?(?:\s+(?:[0-9]|sha256|sha512|md5|encrypted|plaintext|hashed)\b)?\s*)("[^"]*"|'[^']*'|[^\s'":=][^\s'"]*)|("(?:password|secret|passphrase)"\s*:\s*)"[^"]*"`)

// RedactSecretWords masks the value after every secret keyword in text a
// device printed (`username admin secret sha512 $6$...`, `"password":
// "..."`, `password: ...`), whatever the value is. It never looks for a
// known secret's value (see the comment above).
func RedactSecretWords(text, mark string) string {
	if !secretWordHint(text) {
		return text
	}
	return secretWords.ReplaceAllStringFunc(text, func(m string) string {
		sub := secretWords.FindStringSubmatch(m)
		if sub[3] != "" {
			return sub[3] + `"` + mark + `"`
		}
		if strings.EqualFold(sub[2], "for") {
			return m // "[sudo] password for admin:": a prompt, no value
		}
		return sub[1] + mark
	})
}

// secretWordHint is a cheap test before the regexp: most device lines
// hold no keyword.
func secretWordHint(s string) bool {
	for i := 0; i+3 <= len(s); i++ {
		switch s[i] | 0x20 {
		case 's', 'p', 'k':
			w := strings.ToLower(s[i:min(i+10, len(s))])
			if strings.HasPrefix(w, "secret") || strings.HasPrefix(w, "pass") || strings.HasPrefix(w, "key") {
				return true
			}
		}
	}
	return false
}
