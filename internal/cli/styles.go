package cli

import (
	"fmt"
	"io"

	"github.com/fabctl/fabctl/internal/iostreams"
)

// styles are the human-output styles (iostreams.Styles).
type styles = iostreams.Styles

// newStyles returns styles for w (iostreams.NewStyles).
func newStyles(w io.Writer, color bool) styles { return iostreams.NewStyles(w, color) }

// plural returns "1 switch", "2 switches".
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// pluralWord returns one for n == 1, else many ("is" / "are").
func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
