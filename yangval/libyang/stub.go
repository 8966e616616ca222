//go:build !cgo || !libyang

package libyang

import "github.com/fabctl/fabctl/yangval"

// Context is unusable in a build without libyang: every function
// returns ErrUnavailable.
type Context struct{}

// New returns ErrUnavailable.
func New(Config) (*Context, error) { return nil, ErrUnavailable }

// Load returns ErrUnavailable.
func Load(string, yangval.Profile) (*Context, error) { return nil, ErrUnavailable }

// Close does nothing.
func (c *Context) Close() {}

// Rewrites returns nil.
func (c *Context) Rewrites() []Applied { return nil }

// Features returns nil.
func (c *Context) Features() map[string][]string { return nil }

// ValidateJSON returns ErrUnavailable.
func (c *Context) ValidateJSON([]byte, Options) error { return ErrUnavailable }

// ValidateSet returns ErrUnavailable.
func (c *Context) ValidateSet([]byte, SetRequest, Options) error { return ErrUnavailable }

// ValidateConfigDB returns ErrUnavailable.
func (c *Context) ValidateConfigDB(ConfigDB, Options) error { return ErrUnavailable }

// TranslateConfigDB returns nil.
func (c *Context) TranslateConfigDB(ConfigDB) (map[string]any, Errors) { return nil, nil }

// Available reports whether this build has libyang.
const Available = false
