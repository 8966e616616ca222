package sshtransport

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/scrapli/scrapligo/driver/options"
	"github.com/scrapli/scrapligo/logging"
	"github.com/scrapli/scrapligo/util"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/internal/termsafe"
)

// scrapligoRedacted is what scrapligo's log says instead of input it was
// told to redact (channel.Write with redact set: a password at a prompt).
const scrapligoRedacted = "redacted"

// The session log (`--debug`) is one transcript line per event, every
// line redacted:
//
//	15:04:05.000 leaf1 > show running-config          what fabctl typed
//	15:04:05.000 leaf1 < leaf1#show running-config    what the switch sent, line by line
//	15:04:05.000 leaf1 - info: connection opened successfully   scrapligo's own log
//
// Sent lines come from scrapligo's debug log ("channel write"); received
// lines come from scrapligo's channel log, buffered to whole lines.
//
// Redaction is by position (drivers/redact.go): what fabctl typed is
// masked (a password typed at a prompt, which scrapligo logs as
// "redacted"; any secret value inside a typed line), and so is the
// device's echo of it: the rest of the line that was on the screen when
// fabctl typed, where a device echoes input. What the device printed
// elsewhere is not searched for secret values (a password equal to the
// user name in the prompt would be given away by where the masks fall);
// it gets the keyword masking of drivers.RedactSecretWords, so a
// configuration line a switch prints (`username admin secret sha512
// $6$...`) keeps no secret. Control characters in either direction are
// escaped, so the transcript on a terminal cannot move the cursor or
// retitle the window.
type sessionLog struct {
	mu      sync.Mutex
	w       io.Writer
	device  string
	secrets []string
	partial []byte
	// echo marks where in the line in progress fabctl typed something
	// that held a secret: the device's echo follows there.
	echo []echoMark
	now  func() time.Time
}

// echoMark is one typed input holding a secret: from is its position in
// the received line in progress; typed and masked are the input as sent
// and as logged ("" for a password typed at a prompt).
type echoMark struct {
	from          int
	typed, masked string
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

// typed masks what fabctl typed: every secret value in it, and secret
// keywords' values.
func (s *sessionLog) typed(text string) string {
	return drivers.RedactSecretWords(redact(text, s.secrets), "<redacted>")
}

// received masks a line the device sent: the echo of typed input (from
// the marks on this line), and secret keywords' values.
func (s *sessionLog) received(line string) string {
	for i := len(s.echo) - 1; i >= 0; i-- {
		m := s.echo[i]
		from := min(m.from, len(line))
		region := line[from:]
		if m.typed != "" && strings.Contains(region, m.typed) {
			region = strings.Replace(region, m.typed, m.masked, 1)
		} else {
			region = redact(region, s.secrets)
		}
		line = line[:from] + region
	}
	s.echo = s.echo[:0]
	return drivers.RedactSecretWords(line, "<redacted>")
}

func (s *sessionLog) emit(dir, text string) {
	line := fmt.Sprintf("%s %s %s %s\n", s.now().Format("15:04:05.000"), s.device, dir, termsafe.Escape(text))
	_, _ = io.WriteString(s.w, line)
}

// typedMessages are scrapligo log messages that quote what it is about
// to type.
var typedMessages = []string{"SendCommand requested, sending ", "SendCommands requested, sending ", "channel SendInput requested, sending input "}

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
		in = strings.TrimRight(in, "\n")
		if in == scrapligoRedacted {
			// A password typed at a prompt: masked, and so is its echo.
			s.echo = append(s.echo, echoMark{from: len(s.partial)})
			s.emit(">", "<redacted>")
			return
		}
		out := s.typed(in)
		if out != in {
			s.echo = append(s.echo, echoMark{from: len(s.partial), typed: in, masked: out})
		}
		s.emit(">", out)
	case strings.HasPrefix(msg, "channel read "):
		// The channel log has the same bytes, split into lines.
	default:
		for _, p := range typedMessages {
			if strings.HasPrefix(msg, p) {
				s.emit("-", level+": "+s.typed(msg))
				return
			}
		}
		s.emit("-", level+": "+drivers.RedactSecretWords(msg, "<redacted>"))
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
		s.emit("<", s.received(string(bytes.TrimRight(s.partial[:i], "\r"))))
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
		s.emit("<", s.received(string(s.partial)))
		s.partial = nil
	}
}
