package apply

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/memory"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
)

// runFixture is a one-host fabric on the memory driver and the options
// of a run over it.
func runFixture(t *testing.T) (*memory.Store, RunOptions) {
	t.Helper()
	store := memory.NewStore()
	reg := drivers.NewRegistry()
	if err := reg.Register("host", func() drivers.Driver { return &memory.Driver{Store: store} }); err != nil {
		t.Fatal(err)
	}
	h := &intent.Host{Device: intent.Device{Kind: intent.KindHost, Name: "h1", Platform: "linux"},
		NICs: []intent.NIC{{Name: "eth1", MTU: 9000}}}
	return store, RunOptions{Spec: &spec.Spec{}, Fabric: &intent.Fabric{Name: "t", Hosts: []*intent.Host{h}},
		StateDir: t.TempDir(), Plan: plan.Options{Parallelism: 1}, Registry: reg, Parallelism: 1, OnFailure: Stop, Version: "test"}
}

func TestRunFabric(t *testing.T) {
	ctx := context.Background()
	store, o := runFixture(t)

	// Not confirmed: nothing applied, no journal.
	var shown, asked int
	o.Hooks = Hooks{
		Plan:    func(*plan.Plan, WavePlan) error { shown++; return nil },
		Confirm: func(context.Context, *plan.Plan) (bool, error) { asked++; return false, nil },
	}
	out, err := RunFabric(ctx, o)
	if err != nil || out.Status != RunCancelled || shown != 1 || asked != 1 || out.Journal != "" || len(store.Get("h1")) != 0 {
		t.Fatalf("cancelled: %+v %v (shown %d, asked %d)", out, err, shown, asked)
	}

	// Approved: applied, verified, journaled.
	o.Hooks.Confirm = nil
	var events int
	o.Hooks.Progress = func(ProgressEvent) { events++ }
	out, err = RunFabric(ctx, o)
	if err != nil || out.Status != RunApplied || out.Result == nil || out.Result.Counts.Applied != 1 || events == 0 || store.Get("h1")["nic/eth1/mtu"] != "9000" {
		t.Fatalf("applied: %+v %v", out, err)
	}
	if _, err := os.Stat(out.Journal); err != nil {
		t.Fatalf("journal: %v", err)
	}

	// Again: nothing to do.
	out, err = RunFabric(ctx, o)
	if err != nil || out.Status != RunNoChanges || out.Journal != "" {
		t.Fatalf("no changes: %+v %v", out, err)
	}

	// Another run holds the lock.
	lock, err := Acquire(ctx, o.StateDir, "t", LockOptions{Operation: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	out, err = RunFabric(ctx, o)
	var le *LockedError
	if out.Status != RunLocked || !errors.As(err, &le) || out.Lock == nil || out.Lock.Operation != "test" {
		t.Fatalf("locked: %+v %v", out, err)
	}
}

// A device that cannot be read refuses the whole run before anything is
// applied; a saved plan whose device moved is stale.
func TestRunFabricRefusedAndStale(t *testing.T) {
	ctx := context.Background()
	store, o := runFixture(t)
	store.FailRead["h1"] = errors.New("connection refused")
	out, err := RunFabric(ctx, o)
	var pe *PlanError
	if out.Status != RunRefused || !errors.As(err, &pe) || out.Plan == nil {
		t.Fatalf("refused: %+v %v", out, err)
	}
	delete(store.FailRead, "h1")

	p := plan.Make(ctx, o.Spec, o.Fabric, o.Registry, o.Plan)
	store.Set("h1", intent.State{"nic/eth1/mtu": "1500"}) // moved since the plan
	o.Saved, o.PlanFile = &plan.SavedPlan{Plan: p}, "plan.fab"
	o.Hooks.Plan = func(*plan.Plan, WavePlan) error { t.Fatal("a saved plan is not shown"); return nil }
	out, err = RunFabric(ctx, o)
	var se *StaleError
	if out.Status != RunStale || !errors.As(err, &se) || out.Result == nil || len(out.Result.Stale) != 1 {
		t.Fatalf("stale: %+v %v", out, err)
	}
}

// A saved plan for a device whose driver saves (drivers.Saver) applies:
// the planner's config/saved is not a difference between the plan and
// its spec.
func TestRunFabricSavedPlanOfSaver(t *testing.T) {
	ctx := context.Background()
	store, o := runFixture(t)
	reg := drivers.NewRegistry()
	if err := reg.Register("host", func() drivers.Driver { return &memory.SavingDriver{Driver: memory.Driver{Store: store}} }); err != nil {
		t.Fatal(err)
	}
	o.Registry = reg
	p := plan.Make(ctx, o.Spec, o.Fabric, o.Registry, o.Plan)
	if p.Devices[0].Desired[drivers.PathSaved] != "true" {
		t.Fatalf("desired: %v", p.Devices[0].Desired)
	}
	o.Saved, o.PlanFile = &plan.SavedPlan{Plan: p}, "plan.fab"
	out, err := RunFabric(ctx, o)
	if err != nil || out.Status != RunApplied || !out.Result.Devices[0].Saved {
		t.Fatalf("saved plan of a saving driver: %+v %v", out, err)
	}
}

// TestRunFabricHostDriverResolvesNoHostSecrets: when the hosts go through
// another driver than their own (--engine kubernetes), the journal's
// redactor does not resolve the credentials only hosts log in with: the
// run never reads the hosts' SSH secrets. With their own driver it does.
func TestRunFabricHostDriverResolvesNoHostSecrets(t *testing.T) {
	for _, hostDriver := range []string{"", "host"} {
		_, o := runFixture(t)
		o.Fabric.Hosts[0].Credentials = "hosts"
		o.Spec.Credentials = []*spec.Credentials{
			{Name: "hosts", Password: &spec.SecretRef{Kind: "env", Name: "HOST_PW"}},
			{Name: "other", Password: &spec.SecretRef{Kind: "env", Name: "OTHER_PW"}},
		}
		o.Plan.HostDriver = hostDriver
		asked := map[string]bool{}
		o.Getenv = func(k string) string { asked[k] = true; return "secret-" + k }
		out, err := RunFabric(context.Background(), o)
		if err != nil || out.Status != RunApplied || out.Journal == "" {
			t.Fatalf("host driver %q: %+v %v", hostDriver, out, err)
		}
		if want := hostDriver == ""; asked["HOST_PW"] != want || !asked["OTHER_PW"] {
			t.Errorf("host driver %q: resolved %v, want HOST_PW %v and OTHER_PW", hostDriver, asked, want)
		}
	}
}
