package libyang

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/yangval"
)

// The models live outside the repository, in ../shared/yang beside it
// (shared/yang/README.md); they are read at run time, never copied.
var sharedYang = filepath.Join("..", "..", "..", "shared", "yang")

func ci() bool { return os.Getenv("CI") == "true" }

// need skips (or, under CI=true, fails) when libyang or the models are
// missing.
func need(t testing.TB) {
	t.Helper()
	if !Available {
		if ci() {
			t.Fatal("libyang is not in this build (libyang2-dev and pkg-config are required when CI=true)")
		}
		t.Skip("built without libyang (install libyang2-dev and pkg-config, build with cgo): skipping")
	}
	if _, err := os.Stat(sharedYang); err != nil {
		if ci() {
			t.Fatalf("YANG models %s not found (%v); they are required when CI=true", sharedYang, err)
		}
		t.Skipf("YANG models %s not found (%v): skipping; check out the shared data beside the repository", sharedYang, err)
	}
}

var (
	ctxMu    sync.Mutex
	ctxCache = map[string]*Context{}
)

// profiles are the platforms' libyang profiles by model set (their
// descriptors' YANG models).
func profiles() map[string]yangval.Profile {
	out := map[string]yangval.Profile{}
	for _, p := range builtin.Platforms() {
		if p.YANG.Set != "" {
			out[p.YANG.Set] = p.YANG.Profile
		}
	}
	return out
}

// profile returns the (shared, cached) context of a profile.
func profile(t testing.TB, name string) *Context {
	t.Helper()
	need(t)
	ctxMu.Lock()
	defer ctxMu.Unlock()
	if c := ctxCache[name]; c != nil {
		return c
	}
	c, err := Load(sharedYang, profiles()[name])
	if err != nil {
		t.Fatalf("Load(%s): %v", name, err)
	}
	ctxCache[name] = c
	return c
}

func srlFactory(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/srlinux-7220-d5-factory.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// asErrors returns err's Errors (nil for nil), failing on another error.
func asErrors(t testing.TB, err error) Errors {
	t.Helper()
	if err == nil {
		return nil
	}
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("error is not Errors: %v", err)
	}
	return es
}

// wantKind asserts err holds an Error of kind k whose message or
// constraint contains sub.
func wantKind(t testing.TB, err error, k Kind, sub string) {
	t.Helper()
	for _, e := range asErrors(t, err) {
		if e.Kind == k && (strings.Contains(e.Message, sub) || strings.Contains(e.Constraint, sub)) {
			return
		}
	}
	t.Errorf("want a %s error mentioning %q, got:\n%v", k, sub, err)
}

func summary(err error) string {
	if err == nil {
		return "valid"
	}
	var es Errors
	if !errors.As(err, &es) {
		return err.Error()
	}
	return fmt.Sprintf("%d problem(s)", len(es))
}
