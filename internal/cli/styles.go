package cli

import (
	"fmt"
	"io"

	"github.com/charmbracelet/lipgloss"
)

// styles are the human-output styles, bound to one writer. When color is
// off (not a terminal, NO_COLOR, --no-color) they render plain text.
type styles struct {
	OK, Fail, Warn, Faint, Bold, Added, Removed, Hunk lipgloss.Style
}

// newStyles returns styles for w; color says whether w may get ANSI
// escapes (IOStreams.ColorEnabled for stdout, ErrColorEnabled for stderr).
func newStyles(w io.Writer, color bool) styles {
	r := renderer(w, color)
	return styles{
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

// plural returns "1 switch", "2 switches".
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
