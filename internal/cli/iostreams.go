package cli

import (
	"bytes"
	"io"

	"github.com/fabctl/fabctl/internal/iostreams"
)

// IOStreams are a command's standard streams (internal/iostreams): the
// commands and their views (internal/cli/view) write through them.
type IOStreams = iostreams.IOStreams

// NewIOStreams wraps real streams (iostreams.New).
func NewIOStreams(in io.Reader, out, errOut io.Writer, env []string) *IOStreams {
	return iostreams.New(in, out, errOut, env)
}

// TestIOStreams returns streams backed by buffers (iostreams.Test).
func TestIOStreams() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	return iostreams.Test()
}

func terminalFd(w any) (int, bool) { return iostreams.TerminalFd(w) }

func lookupEnv(env []string, key string) (string, bool) { return iostreams.LookupEnv(env, key) }
