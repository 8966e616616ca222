package cli

import (
	"fmt"
	"time"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/builtin"
)

// Factory carries what commands need from the outside world. main builds
// the real one (NewFactory); tests build theirs with TestIOStreams and a
// controlled environment.
type Factory struct {
	IOStreams *IOStreams
	// Env is the process environment as "K=V" entries. Commands read the
	// environment only through it (FAB_VAR_*, NO_COLOR, CI), never os.Getenv.
	Env []string
	// Global holds the root's persistent flags; filled in before any
	// command's RunE runs.
	Global GlobalOptions
	// Drivers returns the driver registry plan/apply use: builtin.Registry()
	// in a real process, a registry of in-memory drivers in tests.
	Drivers func() *drivers.Registry
	// Now is the clock (journals and locks record times); tests fix it.
	Now func() time.Time
	// SkipSecretCheck turns off plan's and apply's up-front resolution of
	// the credentials' secrets (checkSecrets): only for tests whose
	// in-memory drivers log in nowhere.
	SkipSecretCheck bool
}

// GlobalOptions are the flags every command accepts.
type GlobalOptions struct {
	JSON    bool // --json: machine-readable output on stdout
	NoColor bool // --no-color
	Debug   bool // --debug: debug logging on stderr, stack traces on internal errors
	// DebugFile (--debug-file) receives the device session transcripts
	// instead of stderr; it implies --debug for them.
	DebugFile string
}

// NewFactory returns the factory for a real process.
func NewFactory(ios *IOStreams, env []string) *Factory {
	return &Factory{IOStreams: ios, Env: env, Drivers: builtin.Registry, Now: time.Now}
}

// Getenv returns the value of an environment variable from f.Env.
func (f *Factory) Getenv(key string) string {
	v, _ := lookupEnv(f.Env, key)
	return v
}

// Debugf logs to stderr when --debug is on.
func (f *Factory) Debugf(format string, args ...any) {
	if !f.Global.Debug {
		return
	}
	fmt.Fprintf(f.IOStreams.ErrOut, "debug: "+format+"\n", args...)
}
