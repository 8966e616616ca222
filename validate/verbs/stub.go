//go:build !verbs

package verbs

import (
	"fmt"
	"net/netip"
	"time"
)

// Built reports whether this binary has the verbs engine.
const Built = false

// errNotBuilt is the one explanation of a fabctl without the engine.
var errNotBuilt = fmt.Errorf("%w: this fabctl was built without verbs support (build with -tags verbs and rdma-core)", ErrUnavailable)

// Available reports whether the verbs engine can run here.
func Available() error { return errNotBuilt }

// unavailableEngine is the engine of a build without the verbs tag: it
// refuses every test with errNotBuilt.
type unavailableEngine struct{}

func (unavailableEngine) Available() error { return errNotBuilt }

func (unavailableEngine) Open(Local, Test, bool) (side, error)   { return nil, errNotBuilt }
func (unavailableEngine) Listen(Local, Test) (cmListener, error) { return nil, errNotBuilt }
func (unavailableEngine) Dial(Local, netip.AddrPort, Test, time.Duration) (side, error) {
	return nil, errNotBuilt
}

var defaultEngine engine = unavailableEngine{}
