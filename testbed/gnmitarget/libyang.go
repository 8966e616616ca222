package gnmitarget

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fabctl/fabctl/yangval/libyang"
)

// A device validates the configuration a Set leaves, as a whole, with its
// models and its platform's features: every must, when, if-feature,
// leafref, mandatory, range and pattern. The target does the same with
// libyang (yangval/libyang) when this build has it and the target has
// models: the whole candidate tree, before it is committed. goyang
// (yangval) still checks each operation first (paths, config, key
// agreement): libyang sees only the resulting tree, so it cannot say
// which operation of a request is at fault, and a target without libyang
// (CGO_ENABLED=0, the nolibyang tag) falls back to goyang alone, which
// evaluates no must, when or if-feature (LibYANG reports which).

var (
	lyMu    sync.Mutex
	lyCache = map[string]*lyEntry{}
)

type lyEntry struct {
	ctx *libyang.Context
	err error
}

// libyangFor returns the libyang context of the target's models: cfg.
// LibYANG, else cfg.Profile loaded (once per process) from the model
// directory of YANGDir or Schema, when its folder is the profile's model
// set. nil when there is none (no models, no profile, no libyang).
func libyangFor(cfg Config, dir string) (*libyang.Context, error) {
	if cfg.LibYANG != nil {
		return cfg.LibYANG, nil
	}
	if cfg.NoLibYANG || dir == "" || !libyang.Available || cfg.Profile == nil {
		return nil, nil
	}
	p := *cfg.Profile
	if filepath.Base(filepath.Clean(dir)) != p.Set {
		return nil, nil
	}
	root := filepath.Dir(filepath.Clean(dir))
	key := root + "\x00" + p.Name
	lyMu.Lock()
	defer lyMu.Unlock()
	e := lyCache[key]
	if e == nil {
		c, err := libyang.Load(root, p)
		e = &lyEntry{ctx: c, err: err}
		lyCache[key] = e
	}
	if e.err != nil {
		return nil, fmt.Errorf("libyang %s models in %s: %w", p.Name, dir, e.err)
	}
	return e.ctx, nil
}

// LibYANG reports whether the target validates with libyang (must, when,
// if-feature evaluated) or with goyang alone.
func (t *Target) LibYANG() bool { return t.ly != nil }

// validateLibYANG validates a whole configuration tree with libyang.
func (t *Target) validateLibYANG(tree map[string]any) error {
	if t.ly == nil {
		return nil
	}
	b, err := marshalTree(tree)
	if err != nil {
		return status.Errorf(codes.Internal, "encode the configuration: %v", err)
	}
	err = t.ly.ValidateJSON(b, libyang.Options{MaxErrors: 20})
	if err == nil {
		return nil
	}
	var es libyang.Errors
	if !errors.As(err, &es) {
		return status.Errorf(codes.Internal, "libyang: %v", err)
	}
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return status.Errorf(codes.InvalidArgument, "the resulting configuration is not valid (libyang, %s models): %s", t.cfg.Flavor, strings.Join(parts, "; "))
}
