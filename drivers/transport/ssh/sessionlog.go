package sshtransport

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/scrapli/scrapligo/driver/options"
	"github.com/scrapli/scrapligo/logging"
	"github.com/scrapli/scrapligo/util"
)

// The session log (`--debug`) is one transcript line per event, every
// line redacted:
//
//	15:04:05.000 leaf1 > show running-config          what fabctl typed
//	15:04:05.000 leaf1 < leaf1#show running-config    what the switch sent, line by line
//	15:04:05.000 leaf1 - info: connection opened successfully   scrapligo's own log
//
// Sent lines come from scrapligo's debug log ("channel write"), which
// already prints REDACTED for the password it types at an enable prompt;
// received lines come from scrapligo's channel log, buffered to whole
// lines so a secret split across two reads is still found. Redaction
// masks every secret value the connection resolved (passwords, enable
// password, key and passphrase, also in their Go-quoted form) and the
// value after secret/password/passphrase keywords in configuration
// lines a switch echoes (`username admin secret sha512 $6$...`).
type sessionLog struct {
	mu      sync.Mutex
	w       io.Writer
	device  string
	secrets []string
	partial []byte
	now     func() time.Time
}

func newSessionLog(w io.Writer, device string, secrets []string) *sessionLog {
	s := &sessionLog{w: w, device: device, now: time.Now}
	for _, x := range secrets {
		if x == "" {
			continue
		}
		s.secrets = append(s.secrets, x)
		if q := strconv.Quote(x); q[1:len(q)-1] != x {
			s.secrets = append(s.secrets, q[1:len(q)-1])
		}
	}
	return s
}

// options turn scrapligo's debug log and channel log on, both into s.
func (s *sessionLog) options() ([]util.Option, error) {
	l, err := logging.NewInstance(
		logging.WithLevel(logging.Debug),
		logging.WithFormatter(func(level, msg string) string { return level + "\x00" + msg }),
		logging.WithLogger(s.logEntry),
	)
	if err != nil {
		return nil, err
	}
	return []util.Option{options.WithLogger(l), options.WithChannelLog(s)}, nil
}

// secretWords matches a configuration keyword that a secret follows,
// an optional encryption type or hash name, and the value (quoted or
// one word); JSON "password": "..." too.
var secretWords = regexp.MustCompile(`(?i)(\b(?:secret|password|passphrase|passwd|(?:tacacs-server|radius-server)(?:\s+host\s+\S+)?\s+key)\b(?:\s+(?:[0-9]|sha256|sha512|md5|encrypted|plaintext|hashed))?\s+)("[^"]*"|[^\s'"]+)|("(?:password|secret|passphrase)"\s*:\s*)"[^"]*"`)

// redact masks every secret in s.
func (s *sessionLog) redact(text string) string {
	text = redact(text, s.secrets)
	return secretWords.ReplaceAllStringFunc(text, func(m string) string {
		sub := secretWords.FindStringSubmatch(m)
		if sub[3] != "" {
			return sub[3] + `"<redacted>"`
		}
		return sub[1] + "<redacted>"
	})
}

func (s *sessionLog) emit(dir, text string) {
	line := fmt.Sprintf("%s %s %s %s\n", s.now().Format("15:04:05.000"), s.device, dir, s.redact(text))
	_, _ = io.WriteString(s.w, line)
}

// logEntry receives scrapligo's log messages.
func (s *sessionLog) logEntry(args ...any) {
	if len(args) == 0 {
		return
	}
	level, msg, _ := strings.Cut(fmt.Sprint(args[0]), "\x00")
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case strings.HasPrefix(msg, "channel write "):
		in := strings.TrimPrefix(msg, "channel write ")
		if u, err := strconv.Unquote(in); err == nil {
			in = u
		}
		if in == "\n" || in == "" {
			return // the return after each input: no information
		}
		s.emit(">", strings.TrimRight(in, "\n"))
	case strings.HasPrefix(msg, "channel read "):
		// The channel log has the same bytes, split into lines.
	default:
		s.emit("-", level+": "+msg)
	}
}

// Write is scrapligo's channel log: the bytes read from the device.
func (s *sessionLog) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.partial = append(s.partial, b...)
	for {
		i := bytes.IndexByte(s.partial, '\n')
		if i < 0 {
			break
		}
		s.emit("<", string(bytes.TrimRight(s.partial[:i], "\r")))
		s.partial = s.partial[i+1:]
	}
	return len(b), nil
}

// flush writes a last unterminated line (a prompt) at the end of the
// session.
func (s *sessionLog) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.partial) > 0 {
		s.emit("<", string(s.partial))
		s.partial = nil
	}
}
