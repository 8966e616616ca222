package local_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/testbed/cumulusemu"
	"github.com/fabctl/fabctl/testbed/eosemu"
	"github.com/fabctl/fabctl/testbed/gnmitarget"
	"github.com/fabctl/fabctl/testbed/nxosemu"
	"github.com/fabctl/fabctl/testbed/sonicemu"
	"github.com/fabctl/fabctl/testbed/sshemu"
)

// TestTransportsApplyClean plans, applies and plans again two linked
// switches of every platform (the SSH platforms' emulators, the gNMI
// targets validating every Set against the vendor's YANG models) in an
// iWARP fabric (no PFC priority on any port), a RoCEv2 and a RoCEv1 one
// (PCP trust, no ECN), and RoCEv2 with examples/ai-pod's classes (a
// strict CNP class), with PCP trust, and at the largest IP MTU every
// platform takes: the apply verifies and the second plan finds nothing
// to change. What it found: an iWARP fabric keeps the fabric's PFC
// watchdog settings with no port to watch, which SONiC holds only in
// watched ports' PFC_WD rows (verification failed on them; now not
// expressible there); on Cumulus, the step that turns RoCE mode on left
// the mode's ECN on TC3 in a RoCEv1 fabric (the diff against the switch
// before RoCE mode named no ECN setting; that step now sets every
// section the mode implies).
func TestTransportsApplyClean(t *testing.T) {
	t.Setenv("FABCTL_BENCH_PASSWORD", benchPassword)
	// Plans refused on purpose: none (an NX-OS switch that trusts pcp
	// binds FABCTL-QOS-COS on every port and has no DSCP policy).
	refused := map[string]string{}
	schemas := gnmiSchemas(t, true)
	for _, tr := range []string{"iwarp", "rocev2", "rocev1", "rocev2 classes", "rocev2 pcp", "rocev2 mtu"} {
		for _, p := range []string{"sonic", "eos", "nxos", "cumulus", "srlinux", "openconfig"} {
			var dir string
			var devices []reloader
			if gnmiFirstPort[p] != "" {
				var ts []*gnmitarget.Target
				dir, ts = gnmiBenchTargets(t, []string{p, p}, schemas)
				for _, x := range ts {
					devices = append(devices, x)
				}
			} else {
				var es []benchEmu
				dir, es = benchEmulators(t, []string{p, p}, 0)
				for _, x := range es {
					devices = append(devices, x.(reloader))
				}
			}
			applyClean(t, dir, tr, p, refused[tr+" "+p], devices)
		}
	}
	// SONiC switches whose GCU refuses the watchdog (sonic-utilities
	// generic_config_updater; the emulator runs its validators): one
	// without PFC_WD|GLOBAL (GCU cannot create it, and a rollback to it
	// would remove it), one whose HWSKU is in no GCU ASIC list. The plan
	// lists what GCU refuses as not expressible and the rest applies clean.
	dir, es := benchEmulators(t, []string{"sonic", "sonic"}, 0)
	es[0].(*sonicemu.Switch).Edit(func(db map[string]any) {
		db["PFC_WD"] = map[string]any{"Ethernet12": map[string]any{"action": "drop", "detection_time": "200", "restoration_time": "200"}}
	})
	es[1].(*sonicemu.Switch).Edit(func(db map[string]any) {
		db["DEVICE_METADATA"].(map[string]any)["localhost"].(map[string]any)["hwsku"] = "DellEMC-Z9864f-O64"
	})
	applyClean(t, dir, "rocev2", "sonic", "", []reloader{es[0].(reloader), es[1].(reloader)})
	// NX-OS switches whose host ports are layer 2 (`system default
	// switchport`): NX-OS refuses `mtu 9000` there (Cisco TechNote 118994);
	// the plan says it sets the system jumbo MTU instead.
	dir, es = benchEmulators(t, []string{"nxos", "nxos"}, 0)
	for _, e := range es {
		e.(*nxosemu.Switch).Edit(func(c *nxosemu.Config) { c.DefaultSwitchport = true })
	}
	applyClean(t, dir, "rocev2", "nxos", "", []reloader{es[0].(reloader), es[1].(reloader)})
	// EOS switches of the 7060X family (Tomahawk, Strata): their queues
	// are uc-tx-queue (the model from show version picks it; the switch
	// refuses Sand's tx-queue).
	dir, es = benchEmulators(t, []string{"eos@DCS-7060X6-64PE-F", "eos@DCS-7060X6-64PE-F"}, 0)
	applyClean(t, dir, "rocev2", "eos", "", []reloader{es[0].(reloader), es[1].(reloader)})
	// EOS switches whose built-in DSCP map sends every code point to the
	// intent's default class: show running-config hides those entries
	// after the apply, the driver reads them from show running-config all.
	dir, es = benchEmulators(t, []string{"eos", "eos"}, 0)
	for _, e := range es {
		e.(*eosemu.Switch).Edit(func(c *eosemu.Config) {
			c.DSCPDefault = map[int]int{}
			for d := 0; d < 64; d++ {
				c.DSCPDefault[d] = 0
			}
		})
	}
	applyClean(t, dir, "rocev2", "eos", "", []reloader{es[0].(reloader), es[1].(reloader)})
	// Cumulus switches with NVUE auto-save off (the loops above run it
	// on, the CL 5.9+ default): only fabctl's nv config save after the
	// verified apply persists the change, which the reload checks.
	dir, es = benchEmulators(t, []string{"cumulus", "cumulus"}, 0)
	for _, e := range es {
		e.(*cumulusemu.Switch).Edit(func(tree map[string]any) {
			cumulusemu.SetPath(tree, "system.config.auto-save.state", "disabled")
		})
	}
	applyClean(t, dir, "rocev2", "cumulus", "", []reloader{es[0].(reloader), es[1].(reloader)})
	// A run-level rollback on SONiC switches without PFC_WD|GLOBAL.
	rollbackSONiCWithoutGlobal(t)
}

// checkedOnDevice are the platforms whose driver checks a change on the
// device without committing it (plan --check-on-device).
var checkedOnDevice = map[string]bool{"eos": true, "sonic": true}

// TestTransportsCheckCatchesRefusal: on each platform with a device
// check, two switches where the second refuses a line of its change
// (the NOS's own refusal text, as the conformance suite injects it):
// plan --check-on-device refuses that switch with the device's words and
// accepts the other, and both running configurations are byte-identical
// afterwards: the refusal is caught before any device changed. apply's
// pre-flight (RunOptions.CheckOnDevice) refuses the run the same way,
// and applies once the switch takes the change.
func TestTransportsCheckCatchesRefusal(t *testing.T) {
	t.Setenv("FABCTL_BENCH_PASSWORD", benchPassword)
	for _, c := range []struct {
		platform, match, refusal, words string
	}{
		// EOS's parse error (scrapligo arista_eos failed-when-contains; eosemu.invalid).
		{"eos", `^mtu `, "   ^\n% Invalid input detected at '^' marker.\n", "% Invalid input detected at '^' marker."},
		// GCU's field-validator refusal (sonic-utilities gu_common.py validate_field_operation).
		{"sonic", `^sudo config apply-patch `, "Failed to apply patch due to: Modification of PFC_WD table is illegal- validating function generic_config_updater.field_operation_validators.rdma_config_update_validator returned False\nUsage: config apply-patch [OPTIONS] PATCH_FILE_PATH\nTry 'config apply-patch -h' for help.\n\nError: Modification of PFC_WD table is illegal\n", "Modification of PFC_WD table is illegal"},
	} {
		t.Run(c.platform, func(t *testing.T) {
			dir, es := benchEmulators(t, []string{c.platform, c.platform}, 0)
			type ssh interface {
				RunningConfig() []byte
				Inject(sshemu.Fault)
			}
			var before [][]byte
			for _, e := range es {
				before = append(before, e.(ssh).RunningConfig())
			}
			es[1].(ssh).Inject(sshemu.Fault{Match: regexp.MustCompile(c.match), Kind: sshemu.Reject, Output: c.refusal})
			s, f, reg, opts := loadSpec(t, dir, 2)
			opts.CheckOnDevice = true
			pl := plan.Make(context.Background(), s, f, reg, opts)
			if r := pl.Refused(); len(r) != 1 || r[0].Name != "sw01" {
				t.Fatalf("refused: %v", r)
			}
			for _, d := range pl.Devices {
				v := d.Check
				switch {
				case v == nil:
					t.Errorf("%s: no device check", d.Address)
				case d.Name == "sw00" && (v.Status != drivers.CheckAccepted || !v.Unchanged):
					t.Errorf("sw00: %+v", v)
				case d.Name == "sw01" && (v.Status != drivers.CheckRefused || !v.Unchanged || !strings.Contains(v.Message, c.words)):
					t.Errorf("sw01: %+v", v)
				}
			}
			for i, e := range es {
				if !bytes.Equal(before[i], e.(ssh).RunningConfig()) {
					t.Errorf("sw%02d's running configuration changed", i)
				}
			}
			// apply --check-on-device: the pre-flight refuses the run
			// before the first wave, nothing applied on either switch;
			// once the switch takes the change, the run applies.
			opts.CheckOnDevice = false
			ro := apply.RunOptions{Spec: s, Fabric: f, StateDir: t.TempDir(), Plan: opts, Registry: reg, Parallelism: 2, CheckOnDevice: true}
			o, err := apply.RunFabric(context.Background(), ro)
			var re *apply.DeviceRefusedError
			if o.Status != apply.RunRefused || !errors.As(err, &re) || len(re.Devices) != 1 || !strings.Contains(err.Error(), c.words) {
				t.Fatalf("apply with the pre-flight: %s %v", o.Status, err)
			}
			for i, e := range es {
				if !bytes.Equal(before[i], e.(ssh).RunningConfig()) {
					t.Errorf("sw%02d's running configuration changed by a refused run", i)
				}
			}
			es[1].(interface{ ClearFaults() }).ClearFaults()
			if o, err := apply.RunFabric(context.Background(), ro); o.Status != apply.RunApplied {
				t.Fatalf("apply after a clean pre-flight: %s %v", o.Status, err)
			}
		})
	}
}

// aiPodClasses are examples/ai-pod's traffic classes (its class blocks,
// read from the example): RDMA lossless on priority 3 with ECN, CNP
// strict on 6, the rest on 0.
func aiPodClasses(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "examples", "ai-pod", "fabric.fab.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	i, j := strings.Index(src, "\nclass \"roce\""), strings.Index(src, "\ncredentials ")
	if i < 0 || j < i {
		t.Fatal("examples/ai-pod/fabric.fab.hcl: no class blocks before its credentials")
	}
	return src[i:j]
}

// reloader is an emulated device that can reboot: its running
// configuration becomes its startup configuration.
type reloader interface{ Reload() }

// applyClean plans the spec in dir with its transport made tr, applies
// it and plans again: every device verifies and the second plan has
// nothing to change; then every device reloads (reboots from its startup
// configuration) and a third plan has nothing to change either: the
// applied configuration was saved (OpenConfig, which defines no save:
// the plan says persistence is the operator's). refused: the plan error every device
// must have instead ("" none).
func applyClean(t *testing.T, dir, tr, p, refused string, devices []reloader) {
	t.Helper()
	fp := filepath.Join(dir, "bench.fab.hcl")
	b, err := os.ReadFile(fp)
	if err != nil {
		t.Fatal(err)
	}
	hcl := string(b)
	switch name, variant, _ := strings.Cut(tr, " "); variant {
	case "classes": // examples/ai-pod's classes
		hcl, tr = hcl+aiPodClasses(t), name
	case "pcp": // RoCEv2 classified by PCP
		hcl, tr = strings.Replace(hcl, "  mtu       = 9000\n", "  mtu       = 9000\n  trust     = \"pcp\"\n", 1), name
	case "mtu": // the largest IP MTU every platform takes (NX-OS's 9194)
		hcl, tr = strings.Replace(hcl, "  mtu       = 9000\n", "  mtu       = 9194\n", 1), name
	}
	if err := os.WriteFile(fp, []byte(strings.Replace(hcl, `transport = "rocev2"`, `transport = "`+tr+`"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	s, f, reg, opts := loadSpec(t, dir, 4)
	// The first plan asks the devices too (plan --check-on-device): the
	// platforms with a non-committing check accept it and read back
	// unchanged, the others say why they were not asked.
	copts := opts
	copts.CheckOnDevice = true
	pl := plan.Make(context.Background(), s, f, reg, copts)
	if refused == "" {
		checkLinksRead(t, tr, p, pl)
	}
	var devs []apply.Device
	for _, u := range plan.Units(f) {
		dp := pl.Device(u.Device.Addr())
		if v := dp.Check; dp.Error == "" && dp.HasChanges() {
			want := drivers.CheckNotChecked
			if checkedOnDevice[p] {
				want = drivers.CheckAccepted
			}
			if v == nil || v.Status != want || v.Status == drivers.CheckAccepted && !v.Unchanged || v.Status == drivers.CheckNotChecked && v.Message == "" {
				t.Errorf("%s %s: device check of %s: %+v, want %s", tr, p, dp.Address, v, want)
			}
		}
		if refused != "" {
			if !strings.Contains(dp.Error, refused) || !strings.Contains(dp.Error, fmt.Sprintf("(switch %q at %s:", dp.Name, fp)) {
				t.Errorf("%s %s plan of %s: error %q, want it refused (%q) naming where the switch is declared", tr, p, dp.Address, dp.Error, refused)
			}
			continue
		}
		if dp.Error != "" {
			t.Errorf("%s %s plan: %s", tr, p, dp.Error)
			continue
		}
		devs = append(devs, apply.Device{Plan: dp, Target: plan.Target(u, opts)})
	}
	if len(devs) == 0 {
		return
	}
	res, err := apply.Run(context.Background(), devs, reg, apply.Options{Parallelism: 4})
	if err != nil {
		for _, d := range res.Devices {
			t.Errorf("%s %s: %s %s", tr, p, d.Status, d.Error)
		}
		return
	}
	for _, when := range []string{"after the apply", "after a reload"} {
		if when == "after a reload" {
			if p == "openconfig" {
				// OpenConfig defines no save: the plan says persistence is
				// the operator's, and the target's startup never changes.
				for _, d := range pl.Devices {
					if !slices.ContainsFunc(d.Findings, func(f drivers.Finding) bool { return f.Path == drivers.PathSaved }) {
						t.Errorf("%s %s: the plan of %s does not say that persistence is the operator's", tr, p, d.Address)
					}
				}
				return
			}
			for _, d := range devices {
				d.Reload()
			}
		}
		pl = plan.Make(context.Background(), s, f, reg, opts)
		for _, d := range pl.Devices {
			if d.Error != "" || d.HasChanges() {
				t.Errorf("%s %s plan %s of %s: %s %+v", tr, p, when, d.Address, d.Error, d.Changes)
			}
		}
	}
}

// linkReaders are the platforms whose drivers read link truth from the
// bench emulators' cabling (the spec's links as drawn).
var linkReaders = map[string]bool{"eos": true, "nxos": true, "cumulus": true}

// checkLinksRead: on a platform that reads link truth, the bench's
// clean cabling reads with no link finding and every link end read.
func checkLinksRead(t *testing.T, tr, p string, pl *plan.Plan) {
	t.Helper()
	if !linkReaders[p] || pl.Links == nil {
		return
	}
	if len(pl.Links.Findings) != 0 || len(pl.Links.NotRead) != 0 || pl.Links.Ends != 2*pl.Links.Links {
		t.Errorf("%s %s: link truth of the clean bench: %d of %d ends read, findings %+v, not read %+v",
			tr, p, pl.Links.Ends, 2*pl.Links.Links, pl.Links.Findings, pl.Links.NotRead)
	}
}
