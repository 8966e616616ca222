package gnmitarget

import (
	"path/filepath"
	"testing"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"
)

// corpus loads testdata/violations/<set>.json.
func corpus(t testing.TB, set string) *Corpus {
	t.Helper()
	c, err := LoadCorpus(filepath.Join("testdata", "violations", set+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func request(t testing.TB, ops []Op) *gpb.SetRequest {
	t.Helper()
	r, err := SetRequest(ops)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestYANGViolations: each class of schema violation in the corpus is
// refused by the target with InvalidArgument naming the path and the
// reason, and leaves the configuration byte-identical.
func TestYANGViolations(t *testing.T) {
	for _, fl := range []struct{ flavor, set string }{{FlavorOpenConfig, "openconfig"}, {FlavorSRLinux, "srlinux"}} {
		t.Run(fl.flavor, func(t *testing.T) {
			c := corpus(t, fl.set)
			tg, cl := start(t, Config{Flavor: fl.flavor, Schema: schema(t, fl.set), Interfaces: c.Interfaces})
			if _, err := cl.Set(ctxT(t), request(t, c.Base)); err != nil {
				t.Fatalf("valid %s configuration refused: %v", fl.flavor, err)
			}
			before := config(t, tg)
			if len(c.Violations) < 6 {
				t.Fatalf("corpus has %d violations", len(c.Violations))
			}
			for _, v := range c.Violations {
				t.Run(v.Name, func(t *testing.T) {
					_, err := cl.Set(ctxT(t), request(t, v.Ops))
					wantCode(t, err, codes.InvalidArgument, v.Path, v.Reason)
					if config(t, tg) != before {
						t.Errorf("refused Set changed the configuration")
					}
				})
			}
		})
	}
}

// TestDeletePaths: deletes must name schema nodes and cannot remove keys.
func TestDeletePaths(t *testing.T) {
	_, c := start(t, Config{Schema: schema(t, "openconfig"), Interfaces: ocIfs})
	for _, tc := range []struct{ path, reason string }{
		{"/qos/queuez", `did you mean "queues"`},
		{"/qos/queues/queue[name=Q3]/name", "list key cannot be deleted"},
		{"/qos/queues/queue[nam=Q3]", `"nam" is not a key`},
		{"/interfaces/interface[name=Ethernet0]/state", "config false"},
	} {
		_, err := c.Set(ctxT(t), &gpb.SetRequest{Delete: []*gpb.Path{p(t, tc.path)}})
		wantCode(t, err, codes.InvalidArgument, tc.reason)
	}
	// a whole list (no keys at the end of the path) may be deleted
	if _, err := c.Set(ctxT(t), &gpb.SetRequest{Delete: []*gpb.Path{p(t, "/qos/queues/queue")}}); err != nil {
		t.Error(err)
	}
}
