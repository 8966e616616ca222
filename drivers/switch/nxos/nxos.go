// Package nxos is fabctl's Cisco NX-OS (Nexus 9000) switch driver. It
// renders a switch intent into NX-OS CLI as Cisco's AI/ML RoCE blueprint
// does (paregupt/nx-os utils/roce_enable.py and the Cisco Nexus 9000
// Series NX-OS Quality of Service Configuration Guide, Release 10.x; see
// ../shared/reference/switches.md §2.4):
//
//	class-map type qos match-any FABCTL-TC3            one per qos-group other than the default
//	  match dscp 26                                    (DSCP ranges: "24-31,48")
//	policy-map type qos FABCTL-QOS
//	  class FABCTL-TC3
//	    set qos-group 3
//	policy-map type queuing FABCTL-QUEUING
//	  class type queuing c-out-8q-q3                   (qos-group 0 is c-out-8q-q-default)
//	    bandwidth remaining percent 50
//	    random-detect minimum-threshold 150 kbytes maximum-threshold 1500 kbytes drop-probability 100 weight 0 ecn
//	  class type queuing c-out-8q-q6
//	    priority level 1                               (strict: CNP)
//	policy-map type network-qos FABCTL-NQOS
//	  class type network-qos c-8q-nq3
//	    pause pfc-cos 3                                (no-drop)
//	    mtu 9216                                       (frame MTU of the class: see MTU in render.go)
//	system qos
//	  service-policy type queuing output FABCTL-QUEUING
//	  service-policy type network-qos FABCTL-NQOS
//	priority-flow-control watch-dog-interval on        (the watchdog's timers are not expressible)
//	interface Ethernet1/1
//	  priority-flow-control mode on
//	  priority-flow-control watch-dog-interval on
//	  mtu 9000                                         (the IP MTU)
//	  service-policy type qos input FABCTL-QOS
//
// Per port QoS shapes: PFC on or off and the watchdog are interface
// lines; a port trusting PCP gets the CoS classification policy
// (class-maps FABCTL-COS<n> `match cos n` -> qos-group n, policy
// FABCTL-QOS-COS) instead of FABCTL-QOS. Which priorities are no-drop is
// the system network-qos policy's: a port whose PFC set is neither that
// set nor empty is an error. The network-qos class mtu is read back: a
// class whose mtu is not 9216 shows in its tc/N/lossless value
// ("true (network-qos mtu 1500, fabctl sets 9216)") and is re-rendered.
//
// It reads `show running-config` back into normalised state and applies
// changes over SSH (scrapligo v1.4.3's built-in cisco_nxos platform, via
// drivers/transport/ssh) inside a checkpoint:
//
//	checkpoint fabctl-<id>
//	configure terminal
//	   <lines, with explicit exits between modes>
//	end
//	show running-config                  verify: every path the steps settle reads back as desired
//	rollback running-config checkpoint fabctl-<id>     on any error, then the running-config is
//	                                                   compared with the one read before the apply
//	no checkpoint fabctl-<id>                          after a rollback
//
// After a successful apply the checkpoint is kept on the switch for the
// rest of the run: Rollback restores it (`rollback running-config
// checkpoint`) and deletes it; Release deletes it when the run is over.
// Save (drivers.Saver) runs `copy running-config startup-config`; the
// engine calls it after verification, so a rollback never follows a save.
// NX-OS keeps at most 10 user checkpoints, so a run's caller should
// Release what it does not roll back.
//
// scrapligo tracks privilege levels by command, not by prompt:
// sshtransport.Conn.Send (SendCommand) finds the driver at privilege-exec and
// sends each line as typed, reading up to the next prompt, which the
// joined cisco_nxos patterns match in every configuration mode (the
// "(config-pmap-nqos-c)#" style prompts are within its 32-character
// suffix limit).
package nxos

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/switch/clicore"
	sshtransport "github.com/fabctl/fabctl/drivers/transport/ssh"
	"github.com/fabctl/fabctl/intent"
)

// Name is the platform name.
const Name = "nxos"

// Platform is scrapligo v1.4.3's built-in NX-OS platform.
const Platform = "cisco_nxos"

// Driver is the NX-OS driver. One Driver serves one run.
type Driver struct {
	// SSH tunes connections (timeouts, known_hosts, secret lookup);
	// Platform is always cisco_nxos.
	SSH sshtransport.Options

	mu    sync.Mutex
	prior map[string]string // token -> normalised running-config before the apply
}

// New returns a driver with default SSH settings.
func New() drivers.Driver { return &Driver{} }

var (
	_ drivers.Driver   = (*Driver)(nil)
	_ drivers.Renderer = (*Driver)(nil)
	_ drivers.Limiter  = (*Driver)(nil)
	_ drivers.Saver    = (*Driver)(nil)
)

// Name is "nxos".
func (d *Driver) Name() string { return Name }

// Unexpressible: what fabctl cannot configure on NX-OS with a command a
// vendor source shows (docs/vendor-sources.md, NX-OS; testdata/vendor/nxos):
//
//   - buffer/headroom, port cable lengths: no NX-OS cable-length setting,
//     headroom is sized by the switch;
//   - pfcwd/poll, pfcwd/detect, pfcwd/restore: no Cisco text reached shows
//     the tuning commands (audit N12-N14, cisco-pfc-guide.txt), only
//     `priority-flow-control watch-dog-interval on`;
//   - a port without the watchdog on a switch whose watchdog is on: the
//     global line covers every port and no source shows a per-port `off`;
//   - port/*/pause: no NX-OS `flowcontrol` excerpt in the corpus.
func (d *Driver) Unexpressible(t drivers.Target, desired intent.State) map[string]string {
	out := map[string]string{}
	wdOn := desired["pfcwd/action"] != ""
	for k, v := range desired {
		switch {
		case k == "buffer/headroom":
			out[k] = "NX-OS sizes PFC headroom itself; fabctl renders no pause buffer-size for NX-OS"
		case strings.HasPrefix(k, "port/") && strings.HasSuffix(k, "/cable"):
			out[k] = "NX-OS has no cable-length setting (headroom is sized by the switch)"
		case k == "pfcwd/poll" || k == "pfcwd/detect" || k == "pfcwd/restore":
			out[k] = "no Cisco source shows the NX-OS watchdog tuning commands (watch-dog interval, shutdown-multiplier, auto-/fixed-restore multiplier); fabctl only turns the watchdog on (priority-flow-control watch-dog-interval on) and leaves NX-OS's own timers"
		case strings.HasPrefix(k, "port/") && strings.HasSuffix(k, "/pause"):
			out[k] = "no vendor source for NX-OS flowcontrol commands; fabctl does not manage link-level pause on NX-OS"
		case strings.HasPrefix(k, "port/") && strings.HasSuffix(k, "/pfcwd") && v == "false" && wdOn:
			out[k] = "the switch's priority-flow-control watch-dog-interval on covers every port; no vendor source shows a per-port off"
		}
	}
	return out
}

// Capabilities: checkpoints and rollback.
func (d *Driver) Capabilities() drivers.Capabilities {
	return drivers.Capabilities{Checkpoints: true, Rollback: true}
}

// Fields: ECN thresholds are rendered in whole kbytes.
func (d *Driver) Fields() []intent.Field {
	return []intent.Field{
		{Pattern: "tc/*/ecn/min", Tolerance: 0.05},
		{Pattern: "tc/*/ecn/max", Tolerance: 0.05},
		{Pattern: "port/*/mtu", Disruptive: "an MTU change on a routed port drops routing adjacencies (OSPF/BGP sessions whose peer MTU then differs) until both ends match"},
		{Pattern: "port/*/pfc", Disruptive: "changing PFC mode flaps the port's lossless queues (PFC renegotiation)"},
		{Pattern: "tc/*/lossless", Disruptive: "changing the network-qos no-drop classes re-carves the lossless buffers of every port"},
	}
}

func switchIntent(t drivers.Target) (*intent.Switch, error) { return drivers.SwitchIntent(t, Name) }

func (d *Driver) dial(ctx context.Context, t drivers.Target) (*sshtransport.Conn, error) {
	o := d.SSH
	o.Platform = Platform
	return sshtransport.Dial(ctx, t, o)
}

const (
	showRunning = "show running-config"
	// showStartup and saveCmd: testdata/vendor/nxos/show-startup-config.txt
	// and save.txt (cisco.nxos nxos_config save_when/diff_against, napalm).
	showStartup = "show startup-config"
	saveCmd     = "copy running-config startup-config"
)

// runningConfig reads and normalises the running-config.
func runningConfig(c *sshtransport.Conn) (string, error) {
	out, err := c.Send(showRunning)
	if err != nil {
		return "", err
	}
	if !strings.Contains(out, "!Command: show running-config") || !strings.Contains(out, "\ninterface ") {
		return "", fmt.Errorf("%s: %s: output lacks the command header or interfaces (truncated?)", c.Device(), showRunning)
	}
	return Normalize(out), nil
}

// Read returns the managed settings of the running-config and
// config/saved: whether the startup-config holds the running one.
func (d *Driver) Read(ctx context.Context, t drivers.Target) (intent.State, error) {
	sw, err := switchIntent(t)
	if err != nil {
		return nil, err
	}
	c, err := d.dial(ctx, t)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	out, err := runningConfig(c)
	if err != nil {
		return nil, err
	}
	st, err := ReadRunningConfig(out, sw)
	if err != nil {
		return nil, err
	}
	start, err := c.Send(showStartup)
	if err != nil {
		return nil, err
	}
	if !strings.Contains(start, "!Command: "+showStartup) {
		return nil, fmt.Errorf("%s: %s: output lacks the command header (truncated?)", c.Device(), showStartup)
	}
	st[drivers.PathSaved] = strconv.FormatBool(ConfigBody(start) == ConfigBody(out))
	return st, nil
}

// ConfigBody is a show running-config / show startup-config output
// without its "!" header and comment lines and blank lines: what NX-OS
// would boot. The two are compared the way vendor-adjacent tools do it:
// napalm's NX-OS get_config drops "!Command:", "!Time:" and "Startup
// config saved at:" lines, cisco.nxos nxos_config (save_when: modified)
// compares both outputs as configurations with comment lines ignored
// (testdata/vendor/nxos/show-startup-config.txt).
func ConfigBody(text string) string {
	var out []string
	for _, l := range strings.Split(strings.ReplaceAll(text, "\r", ""), "\n") {
		l = strings.TrimRight(l, " \t")
		if l == "" || strings.HasPrefix(strings.TrimSpace(l), "!") {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// SaveSteps is the NX-OS save (testdata/vendor/nxos/save.txt).
func (d *Driver) SaveSteps() []string { return []string{saveCmd} }

// Save copies the running-config to the startup-config. NX-OS reports
// success with "Copy complete" (cisco.nxos cliconf, napalm nxos_ssh
// _copy_run_start: save.txt); anything else, such as "Configuration
// update aborted: ...", is the switch refusing, returned as the error.
// The apply engine saves only after the transaction is verified, so the
// checkpoint rollback (Apply's fail, Rollback) always runs before any
// save: a save never persists a configuration fabctl may still revert.
func (d *Driver) Save(ctx context.Context, t drivers.Target) error {
	c, err := d.dial(ctx, t)
	if err != nil {
		return err
	}
	defer c.Close()
	out, err := c.Send(saveCmd)
	if err != nil {
		return &stepError{Device: t.Device.Name, Step: saveCmd, Err: err}
	}
	if !strings.Contains(out, "Copy complete") {
		return &stepError{Device: t.Device.Name, Step: saveCmd, Err: fmt.Errorf("the switch did not save: %s", strings.TrimSpace(out))}
	}
	return nil
}

// Changes turns a diff into steps carrying NX-OS CLI lines.
func (d *Driver) Changes(t drivers.Target, diff []intent.AttrChange, desired intent.State) ([]drivers.Change, error) {
	sw, err := switchIntent(t)
	if err != nil {
		return nil, err
	}
	return changes(sw, diff, desired, d.Fields())
}

// Render writes the managed configuration as NX-OS CLI.
func (d *Driver) Render(t drivers.Target) ([]drivers.RenderedFile, error) {
	sw, err := switchIntent(t)
	if err != nil {
		return nil, err
	}
	p, err := Build(sw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sw.Name, err)
	}
	return []drivers.RenderedFile{{Name: "nxos.cfg", Data: []byte(p.Config())}}, nil
}

func newToken() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "fabctl-" + hex.EncodeToString(b)
}

// stepError names the step of the transaction that failed.
type stepError = clicore.StepError

var isConnLoss = clicore.IsConnLoss

// expressible is the desired state without what Unexpressible lists.
func (d *Driver) expressible(t drivers.Target, sw *intent.Switch) intent.State {
	st := sw.Flatten()
	for k := range d.Unexpressible(t, st) {
		delete(st, k)
	}
	return st
}

// Apply applies the steps inside a checkpoint (see the package documentation).
func (d *Driver) Apply(ctx context.Context, t drivers.Target, steps []drivers.Change, opts drivers.ApplyOptions) (drivers.Result, error) {
	name := t.Device.Name
	sw, err := switchIntent(t)
	if err != nil {
		return drivers.Result{}, err
	}
	var lines []string
	var paths []string
	for _, s := range steps {
		lines = append(lines, s.Payload...)
		paths = append(paths, s.Paths...)
	}
	script := Script(lines)
	if len(script) == 0 {
		return drivers.Result{}, nil
	}
	c, err := d.dial(ctx, t)
	if err != nil {
		return drivers.Result{}, err
	}
	defer func() { c.Close() }()
	pre, err := runningConfig(c)
	if err != nil {
		return drivers.Result{}, &stepError{Device: name, Step: "read running-config before apply", Err: err}
	}
	token := newToken()
	inConfig := false

	// fail rolls the switch back to the checkpoint and says which state
	// it is in.
	fail := func(step string, cause error) (drivers.Result, error) {
		se := &stepError{Device: name, Step: step, Err: cause}
		if isConnLoss(cause) {
			c.Close()
			nc, err := d.dial(ctx, t)
			if err != nil {
				return drivers.Result{}, &drivers.PartialError{Device: name, Err: fmt.Errorf("%v; reconnecting failed: %v; checkpoint %s is on the switch: restore it with `rollback running-config checkpoint %s`", se, err, token, token)}
			}
			c = nc
		} else if inConfig {
			_, _ = c.Send("end")
		}
		if _, err := c.Send("rollback running-config checkpoint " + token); err != nil {
			return drivers.Result{}, &drivers.PartialError{Device: name, Err: fmt.Errorf("%v; rollback to checkpoint %s failed: %v", se, token, err)}
		}
		now, err := runningConfig(c)
		if err != nil {
			return drivers.Result{}, &drivers.PartialError{Device: name, Err: fmt.Errorf("%v; rolled back to checkpoint %s but reading the running-config failed: %v", se, token, err)}
		}
		if now != pre {
			return drivers.Result{}, &drivers.PartialError{Device: name, Err: fmt.Errorf("%v; after the rollback to checkpoint %s the running-config still differs from before the apply", se, token)}
		}
		note := ""
		if _, err := c.Send("no checkpoint " + token); err != nil {
			note = fmt.Sprintf(" (deleting checkpoint %s failed: %v)", token, err)
		}
		return drivers.Result{}, fmt.Errorf("%v; rolled back to checkpoint %s, the running-config is as before%s", se, token, note)
	}

	if _, err := c.Send("checkpoint " + token); err != nil {
		se := &stepError{Device: name, Step: "checkpoint " + token, Err: err}
		if isConnLoss(err) {
			// The checkpoint may exist; nothing else was sent.
			if nc, derr := d.dial(ctx, t); derr == nil {
				_, _ = nc.Send("no checkpoint " + token)
				nc.Close()
			}
		}
		return drivers.Result{}, fmt.Errorf("%v; no configuration was sent, the running-config is unchanged", se)
	}
	if _, err := c.Send("configure terminal"); err != nil {
		return fail("configure terminal (checkpoint "+token+")", err)
	}
	inConfig = true
	for i, l := range script {
		where := fmt.Sprintf("%s (line %d of %d, checkpoint %s)", l, i+1, len(script), token)
		if err := ctx.Err(); err != nil {
			return fail(where, err)
		}
		if _, err := c.Send(l); err != nil {
			return fail(where, err)
		}
	}
	if _, err := c.Send("end"); err != nil {
		return fail("end", err)
	}
	inConfig = false
	post, err := runningConfig(c)
	if err != nil {
		return fail("read running-config after apply", err)
	}
	live, err := ReadRunningConfig(post, sw)
	if err != nil {
		return fail("verify", err)
	}
	desired := d.expressible(t, sw)
	want, have := intent.State{}, intent.State{}
	for _, p := range paths {
		if v, ok := desired[p]; ok {
			want[p] = v
		}
		if v, ok := live[p]; ok {
			have[p] = v
		}
	}
	var b []string
	for _, c := range intent.Diff(want, have, d.Fields()) {
		b = append(b, fmt.Sprintf("%s is %q, want %q", c.Path, c.Before, c.After))
	}
	for p, v := range have {
		if _, ok := want[p]; !ok {
			b = append(b, fmt.Sprintf("%s is still %q, want it gone", p, v))
		}
	}
	if len(b) > 0 {
		return fail("verify", fmt.Errorf("the switch accepted the lines but reads back differently: %s", strings.Join(b, "; ")))
	}
	d.mu.Lock()
	if d.prior == nil {
		d.prior = map[string]string{}
	}
	d.prior[token] = pre
	d.mu.Unlock()
	return drivers.Result{Token: token}, nil
}

// Confirm: NX-OS has no commit-confirm; there is never a pending commit.
func (d *Driver) Confirm(context.Context, drivers.Target, drivers.Result) error { return nil }

// Rollback restores the checkpoint taken before the apply and deletes it.
func (d *Driver) Rollback(ctx context.Context, t drivers.Target, r drivers.Result) error {
	if r.Token == "" {
		return nil
	}
	c, err := d.dial(ctx, t)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Send("rollback running-config checkpoint " + r.Token); err != nil {
		return &stepError{Device: t.Device.Name, Step: "rollback running-config checkpoint " + r.Token, Err: err}
	}
	d.mu.Lock()
	pre, ok := d.prior[r.Token]
	d.mu.Unlock()
	if ok {
		now, err := runningConfig(c)
		if err != nil {
			return &stepError{Device: t.Device.Name, Step: "read running-config after rollback", Err: err}
		}
		if now != pre {
			return fmt.Errorf("%s: after rollback to checkpoint %s the running-config differs from before the apply", t.Device.Name, r.Token)
		}
	}
	if _, err := c.Send("no checkpoint " + r.Token); err != nil {
		return &stepError{Device: t.Device.Name, Step: "no checkpoint " + r.Token, Err: err}
	}
	d.mu.Lock()
	delete(d.prior, r.Token)
	d.mu.Unlock()
	return nil
}

// Release deletes the checkpoint a successful apply kept, once the run
// no longer needs to roll back.
func (d *Driver) Release(ctx context.Context, t drivers.Target, r drivers.Result) error {
	if r.Token == "" {
		return nil
	}
	c, err := d.dial(ctx, t)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Send("no checkpoint " + r.Token); err != nil {
		return &stepError{Device: t.Device.Name, Step: "no checkpoint " + r.Token, Err: err}
	}
	d.mu.Lock()
	delete(d.prior, r.Token)
	d.mu.Unlock()
	return nil
}
