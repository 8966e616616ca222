// Package iostreams is a command's standard streams and what fabctl
// knows about the terminal behind them (cli/cli's pkg/iostreams): the CLI
// and its views write through it, tests swap in buffers.
package iostreams

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"golang.org/x/term"

	"github.com/fabctl/fabctl/internal/termsafe"
)

// IOStreams are a command's standard streams plus what fabctl knows about
// the terminal behind them. Commands never touch os.Stdout and friends:
// tests swap in buffers (see TestIOStreams) and decide what is a TTY.
//
// Out and ErrOut escape control and bidirectional characters
// (internal/termsafe): whatever a command prints, from a spec label, a
// plan field or a device's answer, cannot move the cursor, clear the
// screen, retitle the window or reorder text. fabctl's own colour
// (SGR) passes on a stream where ColorEnabled; the progress views' cursor
// movement goes through EraseErrLines; file content a command copies to
// stdout (fmt of stdin) goes through DataOut.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	rawOut, rawErr io.Writer
	outEsc, errEsc *termsafe.Writer

	stdoutTTY bool
	stderrTTY bool
	width     int  // terminal width of stdout; 0 when not a terminal
	noColor   bool // NO_COLOR is set or --no-color was given
}

// NewIOStreams wraps real streams, detecting whether stdout and stderr are
// terminals. env is the process environment (COLUMNS). NO_COLOR is applied
// by the root command from the Factory's environment.
func New(in io.Reader, out, errOut io.Writer, env []string) *IOStreams {
	s := newStreams(in, out, errOut)
	if fd, ok := TerminalFd(out); ok {
		s.stdoutTTY = true
		if w, _, err := term.GetSize(fd); err == nil && w > 0 {
			s.width = w
		}
	}
	_, s.stderrTTY = TerminalFd(errOut)
	if v, ok := LookupEnv(env, "COLUMNS"); ok {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			s.width = n
		}
	}
	s.sync()
	return s
}

func newStreams(in io.Reader, out, errOut io.Writer) *IOStreams {
	s := &IOStreams{In: in, rawOut: out, rawErr: errOut,
		outEsc: &termsafe.Writer{W: out}, errEsc: &termsafe.Writer{W: errOut}}
	s.Out, s.ErrOut = s.outEsc, s.errEsc
	return s
}

// sync lets fabctl's colour through the escaping writers where styling
// is on.
func (s *IOStreams) sync() {
	s.outEsc.SGR = s.ColorEnabled()
	s.errEsc.SGR = s.ErrColorEnabled()
}

// Flush writes what the escaping writers hold back (a character split
// across writes at the very end of the output).
func (s *IOStreams) Flush() {
	_ = s.outEsc.Flush()
	_ = s.errEsc.Flush()
}

// DataOut is stdout for file content a command copies there (fmt of
// stdin): as is when stdout is not a terminal (a pipe or file gets the
// exact bytes), escaped like Out on a terminal.
func (s *IOStreams) DataOut() io.Writer {
	if s.stdoutTTY {
		return s.Out
	}
	return s.rawOut
}

// EraseErrLines moves the cursor up n lines on stderr and clears from
// there (a progress view redrawing itself; stderr is a terminal).
func (s *IOStreams) EraseErrLines(n int) {
	if n > 0 {
		fmt.Fprintf(s.rawErr, "\x1b[%dA\x1b[J", n)
	}
}

// Test returns streams backed by buffers, neither a TTY, and the
// buffers for stdin, stdout and stderr.
func Test() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return newStreams(in, out, errOut), in, out, errOut
}

// TerminalFd is the file descriptor of w when it is a terminal.
func TerminalFd(w any) (int, bool) {
	f, ok := w.(*os.File)
	if !ok {
		return 0, false
	}
	fd := int(f.Fd())
	return fd, term.IsTerminal(fd)
}

// IsStdoutTTY reports whether stdout is a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.stdoutTTY }

// IsStderrTTY reports whether stderr is a terminal.
func (s *IOStreams) IsStderrTTY() bool { return s.stderrTTY }

// SetStdoutTTY overrides TTY detection (tests).
func (s *IOStreams) SetStdoutTTY(v bool) { s.stdoutTTY = v; s.sync() }

// SetStderrTTY overrides TTY detection (tests).
func (s *IOStreams) SetStderrTTY(v bool) { s.stderrTTY = v; s.sync() }

// SetNoColor disables color (NO_COLOR, --no-color).
func (s *IOStreams) SetNoColor(v bool) { s.noColor = v; s.sync() }

// SetWidth sets the terminal width (tests, COLUMNS).
func (s *IOStreams) SetWidth(w int) { s.width = w }

// ColorEnabled reports whether stdout output may carry ANSI styling: only
// on a terminal, and never with NO_COLOR or --no-color.
func (s *IOStreams) ColorEnabled() bool { return s.stdoutTTY && !s.noColor }

// ErrColorEnabled is ColorEnabled for stderr.
func (s *IOStreams) ErrColorEnabled() bool { return s.stderrTTY && !s.noColor }

// TerminalWidth is the width to wrap human output at; 0 means do not wrap
// (stdout is not a terminal and COLUMNS is unset).
func (s *IOStreams) TerminalWidth() int { return s.width }

// renderer returns a lipgloss renderer for w that emits ANSI styling only
// when color is true; otherwise every style renders as plain text.
func renderer(w io.Writer, color bool) *lipgloss.Renderer {
	r := lipgloss.NewRenderer(w)
	if color {
		// Basic ANSI colors follow the user's terminal theme.
		r.SetColorProfile(termenv.ANSI)
	} else {
		r.SetColorProfile(termenv.Ascii)
	}
	r.SetHasDarkBackground(true) // never query the terminal
	return r
}

// LookupEnv finds key in an environment of "K=V" entries.
func LookupEnv(env []string, key string) (string, bool) {
	// Later entries win, as with os.Environ and exec.Cmd.Env.
	val, found := "", false
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			val, found = v, true
		}
	}
	return val, found
}

// Styles are the human-output styles, bound to one writer. When color is
// off (not a terminal, NO_COLOR, --no-color) they render plain text.
type Styles struct {
	OK, Fail, Warn, Faint, Bold, Added, Removed, Hunk lipgloss.Style
}

// NewStyles returns styles for w; color says whether w may get ANSI
// escapes (IOStreams.ColorEnabled for stdout, ErrColorEnabled for stderr).
func NewStyles(w io.Writer, color bool) Styles {
	r := renderer(w, color)
	return Styles{
		OK:      r.NewStyle().Foreground(lipgloss.Color("2")).Bold(true),
		Fail:    r.NewStyle().Foreground(lipgloss.Color("1")).Bold(true),
		Warn:    r.NewStyle().Foreground(lipgloss.Color("3")).Bold(true),
		Faint:   r.NewStyle().Faint(true),
		Bold:    r.NewStyle().Bold(true),
		Added:   r.NewStyle().Foreground(lipgloss.Color("2")),
		Removed: r.NewStyle().Foreground(lipgloss.Color("1")),
		Hunk:    r.NewStyle().Foreground(lipgloss.Color("6")),
	}
}
