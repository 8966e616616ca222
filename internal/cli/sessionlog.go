package cli

import (
	"context"
	"fmt"
	"sync"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/internal/safefile"
)

// sessionLogContext turns on the device session transcripts (SSH CLI
// sessions: what fabctl typed, what the switch answered, secrets
// redacted by the drivers) for commands that talk to devices: with
// --debug-file they are appended to that file (created 0600), with
// --debug they go to stderr, else nowhere. The returned func closes the
// file.
//
// The context also carries the drivers' events (drivers.Eventf: an agent
// copied to a host), printed on stderr as they happen, also with --json
// (whose document is on stdout).
func (f *Factory) sessionLogContext(ctx context.Context) (context.Context, func(), error) {
	var mu sync.Mutex
	ctx = drivers.WithEvents(ctx, func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(f.IOStreams.ErrOut, "note: %s\n", msg)
	})
	switch {
	case f.Global.DebugFile != "":
		fh, err := safefile.OpenAppend(f.Global.DebugFile, 0o600, safefile.DebugLog)
		if err != nil {
			return ctx, func() {}, fmt.Errorf("--debug-file: %w", err)
		}
		return drivers.WithSessionLog(ctx, fh), func() { fh.Close() }, nil
	case f.Global.Debug:
		return drivers.WithSessionLog(ctx, f.IOStreams.ErrOut), func() {}, nil
	}
	return ctx, func() {}, nil
}
