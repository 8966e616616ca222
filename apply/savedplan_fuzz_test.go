package apply

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/memory"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
)

const fuzzSpec = `
fabric "t" {}
credentials "lab" {
  username    = "admin"
  password    = env("FAB_PW")
  known_hosts = "known_hosts"
}
switch "leaf1" {
  platform    = "sonic"
  address     = "192.0.2.1"
  credentials = "lab"
}
switch "spine1" {
  platform    = "eos"
  address     = "192.0.2.2"
  credentials = "lab"
}
host "h1" {
  address = "192.0.2.10"
  nic "eth1" {
    device    = "mlx5_0"
    addresses = ["10.0.0.1/31"]
  }
}
link {
  endpoints    = ["leaf1:Ethernet0", "h1:eth1"]
  speed        = "100G"
  cable_length = "3m"
}
link {
  endpoints    = ["leaf1:Ethernet1", "spine1:Ethernet1"]
  speed        = "400G"
  cable_length = "10m"
}
`

// targetRecorder records every target a driver is asked to reach, with the
// registry name it was built under.
type targetRecorder struct {
	drivers.Driver
	name string
	mu   *sync.Mutex
	got  *[]reached
}

type reached struct {
	driver string
	t      drivers.Target
}

func (r targetRecorder) note(t drivers.Target) {
	r.mu.Lock()
	*r.got = append(*r.got, reached{r.name, t})
	r.mu.Unlock()
}

func (r targetRecorder) Read(ctx context.Context, t drivers.Target) (intent.State, error) {
	r.note(t)
	return r.Driver.Read(ctx, t)
}

func (r targetRecorder) Apply(ctx context.Context, t drivers.Target, ch []drivers.Change, o drivers.ApplyOptions) (drivers.Result, error) {
	r.note(t)
	return r.Driver.Apply(ctx, t, ch, o)
}

func fuzzRegistry(store *memory.Store, mu *sync.Mutex, got *[]reached) *drivers.Registry {
	reg := drivers.NewRegistry()
	names := []string{"host"}
	for _, p := range testutil.Platforms() {
		names = append(names, p.Name)
	}
	for _, n := range names {
		n := n
		_ = reg.Register(n, func() drivers.Driver {
			return targetRecorder{Driver: &memory.Driver{Store: store}, name: n, mu: mu, got: got}
		})
	}
	return reg
}

// fuzzSeeds are saved plans of fuzzSpec: the genuine one and forgeries
// (an address changed with and without the spec hash, a driver changed,
// a state directory and spec directory changed).
func fuzzSeeds(t testing.TB) [][]byte {
	files := []spec.File{{Name: "fabric/t.fab.hcl", Data: []byte(fuzzSpec)}}
	s, diags := spec.LoadFiles(files, spec.LoadOptions{Platforms: testutil.Platforms()})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	f := intent.Compile(s)
	var mu sync.Mutex
	var got []reached
	reg := fuzzRegistry(memory.NewStore(), &mu, &got)
	p := plan.Make(context.Background(), s, f, reg, plan.Options{Credentials: s.CredentialsByName})
	genuine := &plan.SavedPlan{FabctlVersion: "fuzz", SpecPath: "/fuzz/fabric", SpecDir: "/fuzz/fabric",
		Sources: files, Plan: p}
	enc := func(edit func(sp *plan.SavedPlan)) []byte {
		b, err := genuine.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if edit == nil {
			return b
		}
		var sp plan.SavedPlan
		if err := json.Unmarshal(b, &sp); err != nil {
			t.Fatal(err)
		}
		edit(&sp)
		b, err = sp.Encode()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	evil := func(sp *plan.SavedPlan) {
		sp.Sources[0].Data = []byte(strings.Replace(strings.Replace(fuzzSpec, `"192.0.2.1"`, `"203.0.113.66"`, 1),
			`env("FAB_PW")`, `file("/etc/shadow")`, 1))
	}
	return [][]byte{
		enc(nil),
		enc(evil),
		enc(func(sp *plan.SavedPlan) { evil(sp); sp.Plan.SpecHash = plan.SourceHash(sp.Sources) }),
		enc(func(sp *plan.SavedPlan) { sp.Plan.Device("leaf1").Driver = "eos" }),
		enc(func(sp *plan.SavedPlan) { sp.StateDir = "/elsewhere"; sp.SpecDir = "relative" }),
		enc(func(sp *plan.SavedPlan) { sp.Plan.Devices = append(sp.Plan.Devices, sp.Plan.Devices[0]) }),
	}
}

// FuzzSavedPlanApply decodes arbitrary saved plans and, for each one
// apply would accept, runs apply's re-derivation (RunFabric with the
// plan, drivers that record every target they are asked to reach). The
// promise: no input panics or hangs; a plan whose sources do not hash to
// its spec hash is refused; and every device apply reaches is a device
// of the plan's own (bound) spec, with that spec's address and
// credentials, through the driver the spec derives: nothing in the plan
// outside its embedded spec chooses where fabctl connects.
func FuzzSavedPlanApply(f *testing.F) {
	for _, b := range fuzzSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sp, err := plan.DecodeKey(data, "fuzz.fab", plan.Keys{})
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an empty error")
			}
			return
		}
		if plan.SourceHash(sp.Sources) != sp.Plan.SpecHash {
			t.Fatal("a plan whose sources do not hash to its spec hash was accepted")
		}
		s, diags := spec.LoadFiles(sp.SpecFiles(), sp.LoadOptions(testutil.Platforms()))
		if diags.HasErrors() || s == nil || s.Fabric == nil {
			return // the CLI refuses a spec with errors before apply
		}
		for _, f := range sp.SpecFiles() {
			if !strings.HasPrefix(f.Name, sp.Dir()+"/") {
				t.Fatalf("spec file %s is not in the plan's spec directory %s", f.Name, sp.Dir())
			}
		}
		fab := intent.Compile(s)
		var mu sync.Mutex
		var got []reached
		store := memory.NewStore()
		reg := fuzzRegistry(store, &mu, &got)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, _ = RunFabric(ctx, RunOptions{Spec: s, Fabric: fab, Saved: sp, PlanFile: "fuzz.fab", StateDir: t.TempDir(),
			Plan: plan.Options{Credentials: s.CredentialsByName, Parallelism: 2}, Registry: reg, Parallelism: 2,
			OnFailure: Stop, Version: "fuzz", Getenv: func(string) string { return "" }})
		units := map[string]plan.Unit{}
		for _, u := range plan.Units(fab) {
			units[u.Device.Addr()] = u
		}
		mu.Lock()
		defer mu.Unlock()
		for _, r := range got {
			u, ok := units[r.t.Device.Addr()]
			if !ok || u.Device != r.t.Device {
				t.Fatalf("apply reached %+v, which the plan's spec does not declare", r.t.Device)
			}
			if r.driver != drivers.For(u.Device) {
				t.Fatalf("apply reached %s through driver %q; its spec derives %q", u.Device.Addr(), r.driver, drivers.For(u.Device))
			}
			if want := s.CredentialsByName(u.Device.Credentials); u.Device.Credentials != "" && r.t.Credentials != want {
				t.Fatalf("apply reached %s with credentials that are not its spec's", u.Device.Addr())
			}
		}
	})
}

// The fuzz target's property is not vacuous: the genuine seed reaches
// every device, through the drivers its spec derives; the forged driver
// seed reaches none.
func TestSavedPlanApplySeeds(t *testing.T) {
	seeds := fuzzSeeds(t)
	for i, want := range map[int]int{0: 3, 3: 0} {
		sp, err := plan.DecodeKey(seeds[i], "seed", plan.Keys{})
		if err != nil {
			t.Fatal(err)
		}
		s, _ := spec.LoadFiles(sp.SpecFiles(), sp.LoadOptions(testutil.Platforms()))
		var mu sync.Mutex
		var got []reached
		out, err := RunFabric(context.Background(), RunOptions{Spec: s, Fabric: intent.Compile(s), Saved: sp, StateDir: t.TempDir(),
			Plan: plan.Options{Credentials: s.CredentialsByName}, Registry: fuzzRegistry(memory.NewStore(), &mu, &got), Parallelism: 1, OnFailure: Stop, Version: "fuzz"})
		devs := map[string]bool{}
		for _, r := range got {
			devs[r.t.Device.Addr()] = true
		}
		if len(devs) != want {
			t.Errorf("seed %d: reached %d devices (%v), want %d; %v %v", i, len(devs), devs, want, out.Status, err)
		}
		if i == 3 && (err == nil || !strings.Contains(err.Error(), "driver")) {
			t.Errorf("seed 3 (forged driver): %v", err)
		}
	}
	for _, i := range []int{1, 4, 5} {
		if _, err := plan.DecodeKey(seeds[i], "seed", plan.Keys{}); err == nil {
			t.Errorf("seed %d (forged) decoded", i)
		}
	}
}
