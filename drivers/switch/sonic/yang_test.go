package sonic

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabctl/fabctl/drivers"
	sshtransport "github.com/fabctl/fabctl/drivers/transport/ssh"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/sonicemu"
)

// newYANGRig is newRig with an emulator that validates every patch
// against the real SONiC YANG models.
func newYANGRig(t *testing.T) *rig {
	t.Helper()
	dir := testutil.Shared(t, "yang", "sonic")
	s, f := load(t, "testbed")
	sw := sonicSwitch(t, f, "leaf1")
	emu, err := sonicemu.Start(sonicemu.Options{Password: pw, Ports: 32, YANGDir: dir, BufferModel: "dynamic", Profile: &Descriptor.YANG.Profile})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emu.Close() })
	if !emu.YANG() {
		t.Fatal("emulator without YANG")
	}
	sw.Address = emu.Addr()
	kh := filepath.Join(t.TempDir(), "known_hosts")
	if err := emu.WriteKnownHosts(kh); err != nil {
		t.Fatal(err)
	}
	creds := &spec.Credentials{Name: "testbed-ssh", Username: "admin",
		Password: &spec.SecretRef{Kind: "env", Name: "FABCTL_TESTBED_PASSWORD"}, KnownHosts: kh}
	drv := NewWith(sshtransport.Options{ConnectTimeout: 3 * time.Second, CommandTimeout: 3 * time.Second,
		Getenv: func(k string) string {
			if k == "FABCTL_TESTBED_PASSWORD" {
				return pw
			}
			return ""
		}})
	return &rig{emu: emu, drv: drv, sw: sw, s: s, f: f, creds: creds,
		target: drivers.Target{Device: sw.Device, Intent: sw, Credentials: creds}}
}

// TestApplyPassesSONiCYANG: the full apply of examples/testbed leaf1 is
// accepted by an emulator validating against the SONiC YANG models, and
// reads back clean.
func TestApplyPassesSONiCYANG(t *testing.T) {
	r := newYANGRig(t)
	_, diff, steps := r.plan(t)
	if len(diff) == 0 || len(steps) == 0 {
		t.Fatal("empty switch planned no changes")
	}
	if _, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{}); err != nil {
		t.Fatalf("apply refused by the SONiC YANG models: %v", err)
	}
	if r.emu.Patches() == 0 {
		t.Fatal("no patch applied")
	}
	if _, diff, _ := r.plan(t); len(diff) != 0 {
		t.Fatalf("re-plan not empty: %+v", diff)
	}
	// Every table the driver wrote is one the models know and accept.
	if out := string(r.emu.RunningConfig()); !strings.Contains(out, "PORT_QOS_MAP") || !strings.Contains(out, "WRED_PROFILE") {
		t.Fatalf("applied CONFIG_DB lacks QoS tables:\n%s", out)
	}
}

// TestYANGOutOfRangeRefused: a patch producing PORT mtu 9322 (> 9216 in
// sonic-port.yang) is refused by the YANG-validating emulator, the driver
// reports GCU's refusal, and CONFIG_DB is unchanged. The driver itself
// refuses such an MTU (TestMTURange), so the step is edited here.
func TestYANGOutOfRangeRefused(t *testing.T) {
	r := newYANGRig(t).exactMTU()
	_, _, steps := r.plan(t)
	steps = withMTU(t, steps, "9322")
	before := r.emu.RunningConfig()
	_, err := r.drv.Apply(context.Background(), r.target, steps, drivers.ApplyOptions{})
	if err == nil || !strings.Contains(err.Error(), "Given patch will produce invalid config") ||
		!strings.Contains(err.Error(), "out of range 68..9216") {
		t.Fatalf("want the YANG range refusal, got %v", err)
	}
	if !bytes.Equal(before, r.emu.RunningConfig()) {
		t.Fatal("running config changed")
	}
	if len(r.emu.Checkpoints()) != 0 {
		t.Fatal("checkpoint left behind")
	}
	t.Log(err)
}
