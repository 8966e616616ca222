package drivers

import (
	"context"
	"fmt"
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

// Events are what a driver did besides the plan's steps that the user
// should hear about as it happens (the host driver copying its agent to a
// host over SSH). Like the session log they travel in the context; the
// CLI prints them on stderr, so --json output on stdout stays one
// document.

type eventsKey struct{}

// WithEvents returns a context whose drivers report events to fn (called
// from concurrent device goroutines: fn must be safe for that).
func WithEvents(ctx context.Context, fn func(msg string)) context.Context {
	if fn == nil {
		return ctx
	}
	return context.WithValue(ctx, eventsKey{}, fn)
}

// Eventf reports an event to the context's sink, if any.
func Eventf(ctx context.Context, format string, args ...any) {
	if ctx == nil {
		return
	}
	if fn, ok := ctx.Value(eventsKey{}).(func(string)); ok {
		fn(fmt.Sprintf(format, args...))
	}
}
