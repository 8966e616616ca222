package drivers

import (
	"context"
	"io"
	"sync"
)

// A session log is the device-level transcript (`--debug`): what fabctl
// typed on each SSH CLI session and what the device answered. It travels
// in the context so every driver call of a run (Read, Apply, Rollback,
// Release) logs to the same place without a driver option per command.
// Drivers redact secrets before writing; the writer only serialises.

type sessionLogKey struct{}

// WithSessionLog returns a context whose device sessions write their
// transcript to w. Writes from concurrent sessions are serialised, one
// whole line per Write.
func WithSessionLog(ctx context.Context, w io.Writer) context.Context {
	if w == nil {
		return ctx
	}
	return context.WithValue(ctx, sessionLogKey{}, &lockedWriter{w: w})
}

// SessionLog returns the context's session log, or nil when sessions are
// not logged.
func SessionLog(ctx context.Context) io.Writer {
	if ctx == nil {
		return nil
	}
	w, _ := ctx.Value(sessionLogKey{}).(io.Writer)
	return w
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
