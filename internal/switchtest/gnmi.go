package switchtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/switch/gnmicore"
	gnmitransport "github.com/fabctl/fabctl/drivers/transport/gnmi"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/gnmic"
	"github.com/fabctl/fabctl/testbed/gnmitarget"
	"github.com/fabctl/fabctl/yangval"
)

var (
	schemaMu sync.Mutex
	schemas  = map[string]*yangval.Schema{}
)

// Schema loads a model set of ../shared/yang once per test binary.
func Schema(t testing.TB, set string) *yangval.Schema {
	t.Helper()
	dir := testutil.Shared(t, "yang", set)
	schemaMu.Lock()
	defer schemaMu.Unlock()
	if s := schemas[set]; s != nil {
		return s
	}
	s, err := yangval.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	schemas[set] = s
	return s
}

// GNMI is a gNMI target for one switch: real gRPC over TLS on loopback,
// username/password in metadata, every Set validated against the YANG
// models.
type GNMI struct {
	Target *gnmitarget.Target
	PKI    *gnmitarget.PKI
	// DT is the driver target: the switch with its address, credentials
	// holding the CA (and client certificate with mTLS) and a password
	// reference resolved by Options.Getenv.
	DT      drivers.Target
	Options gnmicore.Options
}

// StartGNMI starts a target for sw with the platform's libyang profile
// (cfg.Profile, required: the driver's Descriptor.YANG.Profile) and the
// model set it names (../shared/yang/<cfg.Profile.Set>). cfg supplies Initial,
// SetLatency, CommitConfirm; Interfaces default to the switch's ports;
// TLS, credentials and models are filled in. sw.Address is pointed at
// the target.
func StartGNMI(t testing.TB, sw *intent.Switch, cfg gnmitarget.Config, mtls bool) *GNMI {
	t.Helper()
	if cfg.Profile == nil {
		t.Fatal("StartGNMI: cfg.Profile is nil: pass the platform's Descriptor.YANG.Profile, so that the target validates with libyang as the device does")
	}
	cfg.Schema = Schema(t, cfg.Profile.Set)
	dir := t.TempDir()
	pki, err := gnmitarget.NewTestPKI(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg.TLS = pki.TLS(mtls)
	cfg.Username, cfg.Password = "admin", Password
	if cfg.Name == "" {
		cfg.Name = sw.Name
	}
	if cfg.Interfaces == nil {
		for _, p := range sw.Ports {
			cfg.Interfaces = append(cfg.Interfaces, p.Name)
		}
	}
	tg, err := gnmitarget.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	sw.Address = tg.Addr()
	creds := &spec.Credentials{Name: "test-gnmi", Username: "admin",
		Password: &spec.SecretRef{Kind: "env", Name: PasswordEnv}, CAFile: pki.CA}
	if mtls {
		creds.CertFile, creds.KeyFile = pki.ClientCert, pki.ClientKey
	}
	return &GNMI{Target: tg, PKI: pki,
		DT: drivers.Target{Device: sw.Device, Intent: sw, Credentials: creds},
		Options: gnmicore.Options{DialTimeout: 5 * time.Second, RPCTimeout: 5 * time.Second,
			Getenv: func(k string) string {
				if k == PasswordEnv {
					return Password
				}
				return ""
			}}}
}

// GNMICase describes one gNMI driver for RunGNMI.
type GNMICase struct {
	Flavor  string // gnmitarget.FlavorOpenConfig or FlavorSRLinux
	Initial []byte // the device's factory configuration (nil: only its ports)
	// YANG is the platform's libyang profile (Descriptor.YANG.Profile).
	YANG     *yangval.Profile
	Spec     string // spec path
	Switch   string // switch name in the spec
	Platform string
	// New builds the driver under test with the given gNMI options.
	New func(gnmicore.Options) drivers.Driver
	// Drift is a change someone makes on the device behind fabctl's
	// back (applied with a plain gNMI Set), and DriftPaths the state
	// paths the next plan must show changed, exactly.
	Drift      []gnmicore.Op
	DriftPaths []string
	// Invalid edits the intent into one the target's YANG models reject
	// (a value out of range), with InvalidMsg in the target's error.
	Invalid    func(*intent.Switch)
	InvalidMsg string
}

// gnmiRig is one target and the driver aimed at it.
type gnmiRig struct {
	g   *GNMI
	drv drivers.Driver
	s   *spec.Spec
	f   *intent.Fabric
	sw  *intent.Switch
}

func (c GNMICase) start(t *testing.T, cfg gnmitarget.Config) *gnmiRig {
	t.Helper()
	s, f := Load(t, c.Spec)
	sw := Switch(t, f, c.Switch, c.Platform)
	cfg.Flavor, cfg.Initial, cfg.Profile = c.Flavor, c.Initial, c.YANG
	g := StartGNMI(t, sw, cfg, false)
	return &gnmiRig{g: g, drv: c.New(g.Options), s: s, f: f, sw: sw}
}

func (r *gnmiRig) plan(t *testing.T) (intent.State, []intent.AttrChange, []drivers.Change) {
	t.Helper()
	return Plan(t, r.drv, r.g.DT, Desired(r.drv, r.sw))
}

func (r *gnmiRig) config(t *testing.T) []byte {
	t.Helper()
	b, err := r.g.Target.Config()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// applyAll plans from the device and applies the steps, failing the test
// on an error.
func (r *gnmiRig) applyAll(t *testing.T, opts drivers.ApplyOptions) drivers.Result {
	t.Helper()
	_, diff, steps := r.plan(t)
	if len(diff) == 0 || len(steps) != 1 {
		t.Fatalf("want one SetRequest step for a non-empty diff, got %d step(s) for %d change(s)", len(steps), len(diff))
	}
	res, err := r.drv.Apply(context.Background(), r.g.DT, steps, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// RunGNMI runs the gNMI driver scenarios against real targets over gRPC
// and TLS on loopback with YANG validation on: plan from empty, apply,
// read back, idempotent re-plan, drift, a rejected Set (injected and by
// the models), commit-confirm timeout and confirm, rollback, a connection
// lost after the Set took effect, authentication and TLS failures, and
// plan.Make + apply.Run end to end with the journal.
func RunGNMI(t *testing.T, c GNMICase) {
	t.Run("plan-apply-readback-idempotent", func(t *testing.T) {
		r := c.start(t, gnmitarget.Config{})
		before := r.config(t)
		start := time.Now()
		res := r.applyAll(t, drivers.ApplyOptions{})
		t.Logf("apply took %v (token %s)", time.Since(start), res.Token)
		if res.Pending || res.Token == "" {
			t.Fatalf("result %+v", res)
		}
		if bytes.Equal(before, r.config(t)) {
			t.Fatal("the target's configuration did not change")
		}
		if st := r.g.Target.Stats(); st.Set != 1 {
			t.Fatalf("%d Sets, want exactly one SetRequest per device", st.Set)
		}
		live, diff, steps := r.plan(t)
		if len(diff) != 0 || len(steps) != 0 {
			t.Fatalf("re-plan not empty: %+v", diff)
		}
		for k, v := range Desired(r.drv, r.sw) {
			if !(intent.Field{}).Equal(v, live[k]) { // a port MTU floor (">=9000") holds any MTU at least that
				t.Errorf("read back %s = %q, want %q", k, live[k], v)
			}
		}
	})

	t.Run("drift", func(t *testing.T) {
		r := c.start(t, gnmitarget.Config{})
		r.applyAll(t, drivers.ApplyOptions{})
		cl, _, err := gnmitransport.Dial(context.Background(), r.g.DT, r.g.Options)
		if err != nil {
			t.Fatal(err)
		}
		req, err := gnmicore.Request(c.Drift)
		if err != nil {
			t.Fatal(err)
		}
		if err := cl.Set(context.Background(), req); err != nil {
			t.Fatalf("drift Set: %v", err)
		}
		cl.Close()
		_, diff, _ := r.plan(t)
		var got []string
		for _, ch := range diff {
			got = append(got, ch.Path)
		}
		sort.Strings(got)
		want := append([]string(nil), c.DriftPaths...)
		sort.Strings(want)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("drift diff %v, want %v", got, want)
		}
		r.applyAll(t, drivers.ApplyOptions{})
		if _, diff, _ := r.plan(t); len(diff) != 0 {
			t.Fatalf("drift not repaired: %+v", diff)
		}
	})

	t.Run("removed-setting-deletes", func(t *testing.T) {
		r := c.start(t, gnmitarget.Config{})
		r.applyAll(t, drivers.ApplyOptions{})
		for i := range r.sw.TCs {
			r.sw.TCs[i].ECN = nil // ECN off: the profiles go
		}
		_, diff, steps := r.plan(t)
		if len(diff) == 0 || len(steps) != 1 {
			t.Fatalf("no plan for removed ECN: %+v", diff)
		}
		deletes := 0
		for _, line := range steps[0].Payload {
			if strings.HasPrefix(line, `{"op":"delete"`) {
				deletes++
			}
		}
		if deletes == 0 {
			t.Fatalf("no delete for the ECN profiles:\n%s", strings.Join(steps[0].Payload, "\n"))
		}
		if _, err := r.drv.Apply(context.Background(), r.g.DT, steps, drivers.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, diff, _ := r.plan(t); len(diff) != 0 {
			t.Fatalf("re-plan not empty: %+v", diff)
		}
		if strings.Contains(string(r.config(t)), "-ecn") {
			t.Fatalf("an ECN profile is left on the device:\n%s", r.config(t))
		}
	})

	t.Run("rejected-set-unchanged", func(t *testing.T) {
		r := c.start(t, gnmitarget.Config{})
		_, _, steps := r.plan(t)
		before := r.config(t)
		r.g.Target.Inject(gnmitarget.Fault{RPC: "Set", Kind: gnmitarget.FaultReject, Code: codes.FailedPrecondition, Message: "configuration locked by another session"})
		_, err := r.drv.Apply(context.Background(), r.g.DT, steps, drivers.ApplyOptions{})
		if err == nil || !strings.Contains(err.Error(), c.Switch+": gNMI Set /") || !strings.Contains(err.Error(), "FailedPrecondition") ||
			!strings.Contains(err.Error(), "rejected the SetRequest and is unchanged") {
			t.Fatalf("want a rejection naming device, RPC and path, got %v", err)
		}
		var pe *drivers.PartialError
		if errors.As(err, &pe) {
			t.Fatalf("a rejected Set reported partial: %v", err)
		}
		if !bytes.Equal(before, r.config(t)) {
			t.Fatal("the rejected Set changed the target")
		}
		t.Log(err)
	})

	t.Run("yang-rejected", func(t *testing.T) {
		r := c.start(t, gnmitarget.Config{})
		c.Invalid(r.sw)
		_, _, steps := r.plan(t)
		before := r.config(t)
		_, err := r.drv.Apply(context.Background(), r.g.DT, steps, drivers.ApplyOptions{})
		if err == nil || !strings.Contains(err.Error(), "InvalidArgument") || !strings.Contains(err.Error(), c.InvalidMsg) {
			t.Fatalf("want the models' refusal (%q), got %v", c.InvalidMsg, err)
		}
		if !bytes.Equal(before, r.config(t)) {
			t.Fatal("the refused Set changed the target")
		}
		t.Log(err)
	})

	t.Run("commit-confirm-timeout-reverts", func(t *testing.T) {
		r := c.start(t, gnmitarget.Config{CommitConfirm: true})
		before := r.config(t)
		res := r.applyAll(t, drivers.ApplyOptions{ConfirmTimeout: 700 * time.Millisecond})
		if !res.Pending {
			t.Fatal("the target advertises commit-confirmed but the apply is not pending")
		}
		if id, ok := r.g.Target.Pending(); !ok || id != res.Token {
			t.Fatalf("target pending %q %v, want %s", id, ok, res.Token)
		}
		if _, diff, _ := r.plan(t); len(diff) != 0 {
			t.Fatalf("pending commit does not read back: %+v", diff)
		}
		deadline := time.Now().Add(5 * time.Second)
		for !bytes.Equal(before, r.config(t)) {
			if time.Now().After(deadline) {
				t.Fatal("the unconfirmed commit was not reverted")
			}
			time.Sleep(50 * time.Millisecond)
		}
		if _, diff, _ := r.plan(t); len(diff) == 0 {
			t.Fatal("after the revert the plan has no changes")
		}
	})

	t.Run("commit-confirm-confirmed", func(t *testing.T) {
		r := c.start(t, gnmitarget.Config{CommitConfirm: true})
		res := r.applyAll(t, drivers.ApplyOptions{ConfirmTimeout: 500 * time.Millisecond})
		if err := r.drv.Confirm(context.Background(), r.g.DT, res); err != nil {
			t.Fatal(err)
		}
		time.Sleep(800 * time.Millisecond)
		if _, diff, _ := r.plan(t); len(diff) != 0 {
			t.Fatalf("confirmed commit reverted: %+v", diff)
		}
	})

	t.Run("rollback", func(t *testing.T) {
		for _, commit := range []bool{false, true} {
			r := c.start(t, gnmitarget.Config{CommitConfirm: commit})
			before := r.config(t)
			opts := drivers.ApplyOptions{}
			if commit {
				opts.ConfirmTimeout = time.Minute
			}
			res := r.applyAll(t, opts)
			if err := r.drv.Rollback(context.Background(), r.g.DT, res); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, r.config(t)) {
				t.Fatalf("commit-confirm %v: rollback did not restore the configuration", commit)
			}
		}
	})

	t.Run("connection-lost-after-set", func(t *testing.T) {
		r := c.start(t, gnmitarget.Config{})
		_, _, steps := r.plan(t)
		before := r.config(t)
		r.g.Target.Inject(gnmitarget.Fault{RPC: "Set", Kind: gnmitarget.FaultDrop, Applied: true})
		_, err := r.drv.Apply(context.Background(), r.g.DT, steps, drivers.ApplyOptions{})
		if err == nil || !strings.Contains(err.Error(), "had taken effect and was undone") {
			t.Fatalf("want the undo reported, got %v", err)
		}
		if !bytes.Equal(before, r.config(t)) {
			t.Fatal("the device was not restored")
		}
		t.Log(err)
	})

	t.Run("auth-and-tls", func(t *testing.T) {
		r := c.start(t, gnmitarget.Config{})
		bad := r.g.Options
		bad.Getenv = func(string) string { return "WRONG-secret-xyz" }
		_, err := c.New(bad).Read(context.Background(), r.g.DT)
		if err == nil || !strings.Contains(err.Error(), "authentication failed") || strings.Contains(err.Error(), "WRONG-secret-xyz") {
			t.Fatalf("want an authentication error without the password, got %v", err)
		}
		other, err := gnmitarget.NewTestPKI(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		dt := r.g.DT
		cr := *dt.Credentials
		cr.CAFile = other.CA
		dt.Credentials = &cr
		_, err = r.drv.Read(context.Background(), dt)
		if err == nil || !strings.Contains(err.Error(), "TLS verification failed") || !strings.Contains(err.Error(), other.CA) {
			t.Fatalf("want a TLS verification error naming the CA file, got %v", err)
		}
		dt.Insecure = true
		if _, err := r.drv.Read(context.Background(), dt); err != nil {
			t.Fatalf("--insecure read: %v", err)
		}
		// mTLS: a target that demands a client certificate.
		m := StartGNMI(t, r.sw, gnmitarget.Config{Flavor: c.Flavor, Initial: c.Initial, Profile: c.YANG}, true)
		if _, err := c.New(m.Options).Read(context.Background(), m.DT); err != nil {
			t.Fatalf("mTLS read: %v", err)
		}
		noCert := m.DT
		cr2 := *noCert.Credentials
		cr2.CertFile, cr2.KeyFile = "", ""
		noCert.Credentials = &cr2
		if _, err := c.New(m.Options).Read(context.Background(), noCert); err == nil {
			t.Fatal("a target requiring mTLS accepted a client without a certificate")
		}
	})

	t.Run("engine-end-to-end", func(t *testing.T) {
		r := c.start(t, gnmitarget.Config{CommitConfirm: true})
		e := NewEngine(t, r.drv, r.s, r.f, r.sw, r.g.DT.Credentials)
		e.EndToEnd(t)
	})

	t.Run("engine-commit-confirm", func(t *testing.T) {
		r := c.start(t, gnmitarget.Config{CommitConfirm: true})
		e := NewEngine(t, r.drv, r.s, r.f, r.sw, r.g.DT.Credentials)
		dp := e.Plan(t)
		u := plan.Unit{Device: e.SW.Device, Intent: e.SW}
		res, err := apply.Run(context.Background(), []apply.Device{{Plan: dp, Target: plan.Target(u, e.Opts)}}, e.Reg,
			apply.Options{ConfirmTimeout: 30 * time.Second})
		if err != nil || !res.OK() {
			t.Fatalf("apply: %v %+v", err, res.Devices[0])
		}
		if d := res.Devices[0]; d.Status != apply.StatusApplied || !d.Confirmed {
			t.Fatalf("want applied and confirmed after read-back, got %+v", d)
		}
		if id, ok := r.g.Target.Pending(); ok {
			t.Fatalf("commit %s still pending after the run", id)
		}
	})

	t.Run("engine-rejected-journal", func(t *testing.T) {
		r := c.start(t, gnmitarget.Config{})
		e := NewEngine(t, r.drv, r.s, r.f, r.sw, r.g.DT.Credentials)
		dp := e.Plan(t)
		before := r.config(t)
		r.g.Target.Inject(gnmitarget.Fault{RPC: "Set", Kind: gnmitarget.FaultReject, Code: codes.Aborted, Message: "commit aborted by the device"})
		var buf bytes.Buffer
		j := apply.NewJournal(&buf, "run-1", nil, []string{Password})
		u := plan.Unit{Device: e.SW.Device, Intent: e.SW}
		res, err := apply.Run(context.Background(), []apply.Device{{Plan: dp, Target: plan.Target(u, e.Opts)}}, e.Reg, apply.Options{Journal: j})
		j.Close()
		if err == nil && res.OK() {
			t.Fatal("apply succeeded against a rejecting target")
		}
		d := res.Devices[0]
		if d.Status != apply.StatusFailed || !d.Restored || d.Partial || !strings.Contains(d.Error, "Aborted") {
			t.Fatalf("device result %+v", d)
		}
		if !bytes.Equal(before, r.config(t)) {
			t.Fatal("the target changed")
		}
		var events []string
		for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			var e struct {
				Event, Device, Error string
			}
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("journal line %q: %v", line, err)
			}
			events = append(events, e.Event)
			if e.Event == apply.EventDeviceApplied || e.Event == apply.EventDeviceVerified {
				t.Fatalf("journal says %s for a rejected Set", e.Event)
			}
		}
		if !strings.Contains(strings.Join(events, " "), apply.EventDeviceFailed) || strings.Contains(buf.String(), Password) {
			t.Fatalf("journal: %s", buf.String())
		}
	})
}

// CheckRequestFile: the driver's rendered gnmi-setrequest.json, read the
// way `gnmic set --request-file` reads it (gnmic.SetRequest: gnmic itself
// is not served by the module proxy) and sent with fabctl's gNMI client
// to g, leaves the device as fabctl apply would: the next plan (plan.Make,
// as `fabctl plan`) shows no change.
func CheckRequestFile(t *testing.T, drv drivers.Driver, e *Engine, g *GNMI) {
	t.Helper()
	if dp := e.Plan(t); !dp.HasChanges() {
		t.Fatal("nothing to configure: the test would prove nothing")
	}
	files, err := drv.(drivers.Renderer).Render(g.DT)
	if err != nil || len(files) != 1 || files[0].Name != "gnmi-setrequest.json" {
		t.Fatalf("render: %v %+v", err, files)
	}
	req, err := gnmic.SetRequest(files[0].Data, "")
	if err != nil {
		t.Fatal(err)
	}
	cl, _, err := gnmitransport.Dial(context.Background(), g.DT, g.Options)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.Set(context.Background(), req); err != nil {
		t.Fatalf("the target refused the request file's Set: %v", err)
	}
	if dp := e.Plan(t); dp.Error != "" || dp.HasChanges() {
		t.Fatalf("plan after the request file: %s %+v", dp.Error, dp.Changes)
	}
}
