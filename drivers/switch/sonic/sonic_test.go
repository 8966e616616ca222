package sonic

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fabctl/fabctl/drivers"
	sshtransport "github.com/fabctl/fabctl/drivers/transport/ssh"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/sonicemu"
	"github.com/fabctl/fabctl/testbed/sshemu"
)

const pw = switchtest.Password

func load(t testing.TB, dir string, vars ...string) (*spec.Spec, *intent.Fabric) {
	return switchtest.Load(t, filepath.Join("..", "..", "..", "examples", dir), vars...)
}

func sonicSwitch(t testing.TB, f *intent.Fabric, name string) *intent.Switch {
	return switchtest.Switch(t, f, name, Name)
}

type rig struct {
	emu    *sonicemu.Switch
	drv    *Driver
	target drivers.Target
	sw     *intent.Switch
	s      *spec.Spec
	f      *intent.Fabric
	creds  *spec.Credentials
}

func newRig(t *testing.T) *rig {
	t.Helper()
	s, f := load(t, "testbed")
	sw := sonicSwitch(t, f, "leaf1")
	emu, err := sonicemu.Start(sonicemu.Options{Password: switchtest.Password, Ports: 32, BufferModel: "dynamic"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emu.Close() })
	target, opts := switchtest.Connect(t, emu, sw, "admin")
	return &rig{emu: emu, drv: NewWith(opts), sw: sw, s: s, f: f, creds: target.Credentials, target: target}
}

// exactMTU makes the rig's ports want their MTU exactly, as a spec
// that sets mtu on the switch does (the testbed spec sets none, so its
// ports keep the emulator's larger 9100), for tests about PORT mtu.
func (r *rig) exactMTU() *rig {
	for i := range r.sw.Ports {
		r.sw.Ports[i].MTUFloor = false
	}
	return r
}

func (r *rig) plan(t *testing.T) (intent.State, []intent.AttrChange, []drivers.Change) {
	t.Helper()
	return switchtest.Plan(t, r.drv, r.target, r.sw.Flatten())
}

func TestPlanApplyIdempotentDrift(t *testing.T) {
	r := newRig(t)
	_, diff, steps := r.plan(t)
	if len(diff) == 0 || len(steps) == 0 {
		t.Fatal("empty switch planned no changes")
	}
	start := time.Now()
	res, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("apply of %d steps took %v (token %s)", len(steps), time.Since(start), res.Token)
	if got := r.emu.Checkpoints(); len(got) != 0 {
		t.Fatalf("checkpoint left behind: %v", got)
	}
	live, diff, _ := r.plan(t)
	if len(diff) != 0 {
		t.Fatalf("re-plan not empty: %+v", diff)
	}
	desired := r.sw.Flatten()
	for k, v := range desired {
		if !(intent.Field{}).Equal(v, live[k]) { // a port MTU floor (">=9000") holds any MTU at least that
			t.Fatalf("read back %s = %q, want %q", k, live[k], v)
		}
	}
	// Drift: someone edits CONFIG_DB by hand.
	r.emu.Edit(func(db map[string]any) {
		db["PORT_QOS_MAP"].(map[string]any)["Ethernet0"].(map[string]any)["pfc_enable"] = "3,4"
		db["WRED_PROFILE"].(map[string]any)["FABCTL_TC3_ECN"].(map[string]any)["green_min_threshold"] = "1048576"
	})
	_, diff, steps = r.plan(t)
	got := map[string]bool{}
	for _, c := range diff {
		got[c.Path] = true
	}
	if len(diff) != 2 || !got["port/Ethernet0/pfc"] || !got["tc/3/ecn/min"] {
		t.Fatalf("drift diff: %+v", diff)
	}
	if _, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, diff, _ := r.plan(t); len(diff) != 0 {
		t.Fatalf("drift not repaired: %+v", diff)
	}
}

// TestRejectedPatchRollsBack: the switch's own GCU refuses the patch (not
// an injected text): the switch was given an image older than the branch
// GCU's PFCWD scenario names for its ASIC (td2, 20181100;
// field_operation_validators.py l.163-168) after the plan was made, so the
// apply meets the refusal, then rolls back.
func TestRejectedPatchRollsBack(t *testing.T) {
	r := rigWith(t, sonicemu.Options{Ports: 32, BufferModel: "dynamic", BuildVersion: "SONiC.20230531.12"})
	live, _, steps := r.plan(t)
	r.emu.SetBuildVersion("SONiC.20180330.12")
	before := r.emu.RunningConfig()
	tg := r.target
	tg.Live = live
	_, err := r.drv.Apply(context.Background(), tg, steps, drivers.ApplyOptions{})
	if err == nil || !strings.Contains(err.Error(), "config apply-patch") || !strings.Contains(err.Error(), "rolled back") ||
		!strings.Contains(err.Error(), "rdma_config_update_validator returned False") {
		t.Fatalf("want rolled-back apply-patch error, got %v", err)
	}
	var pe *drivers.PartialError
	if errors.As(err, &pe) {
		t.Fatalf("restored apply reported partial: %v", err)
	}
	if !bytes.Equal(before, r.emu.RunningConfig()) {
		t.Fatal("running config changed")
	}
	if len(r.emu.Checkpoints()) != 0 {
		t.Fatal("checkpoint left behind")
	}
	t.Log(err)
}

// withMTU rewrites the steps' PORT mtu operations to mtu (a value the
// driver would refuse to render), to test the switch's own refusal.
func withMTU(t *testing.T, steps []drivers.Change, mtu string) []drivers.Change {
	t.Helper()
	n := 0
	for i := range steps {
		for j, l := range steps[i].Payload {
			if strings.Contains(l, `/mtu"`) {
				steps[i].Payload[j] = regexp.MustCompile(`"value":"\d+"`).ReplaceAllString(l, `"value":"`+mtu+`"`)
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("no PORT mtu operation in the steps")
	}
	return steps
}

// TestMTURange: PORT mtu is the IP MTU, 68..9216 (sonic-port.yang:
// testdata/vendor/sonic/orchagent-port-mtu.txt:14-15): the driver refuses
// to render 9300 instead of sending it.
func TestMTURange(t *testing.T) {
	r := newRig(t)
	r.sw.Ports[0].MTU = 9300
	if _, err := Desired(r.sw); err == nil || !strings.Contains(err.Error(), "68..9216") {
		t.Fatalf("want range error, got %v", err)
	}
	r.sw.Ports[0].MTU = 9216
	if _, err := Desired(r.sw); err != nil {
		t.Fatal(err)
	}
}

func TestYANGInvalidPatchRefused(t *testing.T) {
	r := newRig(t).exactMTU()
	_, _, steps := r.plan(t)
	steps = withMTU(t, steps, "9322") // > 9216
	before := r.emu.RunningConfig()
	_, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{})
	if err == nil || !strings.Contains(err.Error(), "Given patch will produce invalid config") {
		t.Fatalf("want GCU refusal, got %v", err)
	}
	if !bytes.Equal(before, r.emu.RunningConfig()) {
		t.Fatal("running config changed")
	}
}

func TestDroppedConnectionMidApply(t *testing.T) {
	for _, kind := range []sshemu.FaultKind{sshemu.DropBefore, sshemu.DropAfter} {
		r := newRig(t)
		_, _, steps := r.plan(t)
		before := r.emu.RunningConfig()
		r.emu.Inject(sshemu.Fault{Match: regexp.MustCompile(`config apply-patch`), Kind: kind, Times: 1})
		_, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{})
		if err == nil || !strings.Contains(err.Error(), "leaf1: config apply-patch: ") || !strings.Contains(err.Error(), "connection lost") {
			t.Fatalf("kind %d: want error naming the step, got %v", kind, err)
		}
		if !bytes.Equal(before, r.emu.RunningConfig()) {
			t.Fatalf("kind %d: not restored", kind)
		}
		t.Log(err)
	}
	// The switch goes away for good: partial, naming the checkpoint.
	r := newRig(t)
	_, _, steps := r.plan(t)
	r.emu.Inject(sshemu.Fault{Match: regexp.MustCompile(`config apply-patch`), Kind: sshemu.DropAfter, Times: 1})
	r.emu.Inject(sshemu.Fault{Match: regexp.MustCompile(`config rollback`), Kind: sshemu.DropBefore})
	_, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{})
	var pe *drivers.PartialError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "config rollback fabctl-") {
		t.Fatalf("want PartialError, got %v", err)
	}
	t.Log(err)
}

func TestHostKeyMismatchAndWrongPassword(t *testing.T) {
	r := newRig(t)
	other, _ := sonicemu.Start(sonicemu.Options{Password: pw})
	defer other.Close()
	bad := filepath.Join(t.TempDir(), "kh")
	os.WriteFile(bad, []byte(strings.Replace(other.KnownHostsLine(), other.Addr(), r.emu.Addr(), 1)+"\n"), 0o600)
	tg := r.target
	c := *r.creds
	c.KnownHosts = bad
	tg.Credentials = &c
	_, err := r.drv.Read(context.Background(), tg)
	if err == nil || !strings.Contains(err.Error(), "host key verification failed") {
		t.Fatalf("want host key refusal, got %v", err)
	}
	d := NewWith(sshtransport.Options{Getenv: func(string) string { return "WRONG-secret-xyz" }})
	_, err = d.Read(context.Background(), r.target)
	if err == nil || !strings.Contains(err.Error(), "authentication failed") || strings.Contains(err.Error(), "WRONG-secret-xyz") {
		t.Fatalf("want auth error without the password, got %v", err)
	}
	t.Log(err)
}

// TestEngineEndToEnd runs plan.Make and apply.Run with a registry holding
// this driver, against the emulator.
func TestEngineEndToEnd(t *testing.T) {
	r := newRig(t)
	switchtest.NewEngine(t, r.drv, r.s, r.f, r.sw, r.creds).EndToEnd(t)
}

// TestWatchdogWithoutWatchedPorts: a fabric whose switch ports carry no
// PFC priority (iWARP, a lossy class plan) keeps the fabric's watchdog
// settings, but SONiC holds detection, restoration and action only in a
// watched port's PFC_WD row: they are listed as not expressible, and a
// plan of what remains applies and reads back clean (before, the
// verification after apply failed on the three settings, missing).
func TestWatchdogWithoutWatchedPorts(t *testing.T) {
	r := newRig(t)
	sw := *r.sw
	sw.Ports = append([]intent.Port(nil), sw.Ports...)
	for i := range sw.Ports {
		sw.Ports[i].PFC, sw.Ports[i].Watchdog = nil, false
	}
	if !sw.Watchdog.Enabled {
		t.Fatal("the testbed's watchdog is off: the case needs it on")
	}
	r.sw = &sw
	r.target.Intent = &sw
	un := r.drv.Unexpressible(r.target, sw.Flatten())
	desired := sw.Flatten()
	for _, k := range []string{"pfcwd/detect", "pfcwd/restore", "pfcwd/action"} {
		if un[k] == "" {
			t.Errorf("%s not listed as not expressible with no watched port", k)
		}
		delete(desired, k)
	}
	if un["pfcwd/poll"] != "" {
		t.Errorf("pfcwd/poll (PFC_WD|GLOBAL) listed as not expressible: %s", un["pfcwd/poll"])
	}
	_, _, steps := switchtest.Plan(t, r.drv, r.target, desired)
	if _, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, diff, _ := switchtest.Plan(t, r.drv, r.target, desired); len(diff) != 0 {
		t.Fatalf("re-plan after apply: %+v", diff)
	}
	// With watched ports the three are SONiC's to hold.
	orig := newRig(t)
	if un := orig.drv.Unexpressible(orig.target, orig.sw.Flatten()); un["pfcwd/detect"] != "" {
		t.Errorf("pfcwd/detect not expressible on the testbed leaf, whose ports are watched: %s", un["pfcwd/detect"])
	}
}
