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
// FABCTL-QOS-COS) instead of FABCTL-QOS; a switch that trusts pcp binds
// FABCTL-QOS-COS on every port and has no FABCTL-QOS (a port trusting
// dscp there is refused). A port bound to a classification policy
// fabctl does not own is read as the trust its classes make and, when
// fabctl writes it, moved to fabctl's policy (foreign.go). Which priorities are no-drop is
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
// engine calls it after verification. A rollback can follow a save: under
// --on-failure rollback the engine rolls back devices it already saved
// (apply.rollbackOne), restoring the checkpoint, which a save leaves in
// place (a save acts on the startup-config only: save.txt (2)), then
// saves again (TestRollbackAfterSave).
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
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/switch/clicore"
	sshtransport "github.com/fabctl/fabctl/drivers/transport/ssh"
	"github.com/fabctl/fabctl/intent"
)

// Name is the platform name.
const Name = "nxos"

// Platform is scrapligo v1.4.3's built-in NX-OS platform.
const Platform = "cisco_nxos"

// Driver is the NX-OS driver: the SSH CLI core (clicore.Core) with
// NX-OS's grammar (grammar, in hooks.go). One Driver serves one run.
type Driver struct{ clicore.Core }

// New returns a driver with default SSH settings.
func New() drivers.Driver { return NewWith(sshtransport.Options{}) }

// NewWith returns a driver whose connections use o (timeouts,
// known_hosts, secret lookup).
func NewWith(o sshtransport.Options) *Driver {
	return &Driver{clicore.Core{SSH: o, Facts: facts, P: grammar{}}}
}

// facts: checkpoints and rollback; the checkpoint is the rollback point,
// so Rollback needs no recorded configuration (it compares with one when
// this run recorded it).
// noCheck: NX-OS's non-committing path is Session Manager (configure
// session, verify, abort), which "supports only access control list (ACL)
// and quality of service (QoS) features" (Cisco Nexus 9000 Series NX-OS
// System Management Configuration Guide, Release 10.5(x), Configuring
// Session Manager, Guidelines and Limitations); fabctl's NX-OS change
// list also sets interface MTU and PFC (cisco-mtu-l2.txt,
// cisco-pfc-guide.txt), and the corpus has no vendor text of verify's
// output or refusals to parse.
const noCheck = "NX-OS Session Manager (configure session, verify, abort) supports only ACL and QoS features (Cisco Nexus 9000 NX-OS System Management Configuration Guide 10.5(x)), and the change also sets interface MTU and PFC; apply runs inside a checkpoint and rolls back a refused line"

var facts = clicore.Facts{Name: Name, Scrapli: Platform, SaveCommand: saveCmd, SaveStep: saveCmd,
	NoCheck:      "fabctl does not run an NX-OS configuration session's verify yet: the device is not asked before apply, which restores its checkpoint on a refused line",
	Capabilities: drivers.Capabilities{Checkpoints: true, Rollback: true}, Fields: fields}

var (
	_ drivers.Driver   = (*Driver)(nil)
	_ drivers.Renderer = (*Driver)(nil)
	_ drivers.Limiter  = (*Driver)(nil)
	_ drivers.Saver    = (*Driver)(nil)
)

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
//   - port/*/pause: no NX-OS `flowcontrol` excerpt in the corpus;
//   - on a Nexus 9800 (Cisco Silicon One), everything but the interface
//     MTU: siliconone.go.
func (d *Driver) Unexpressible(t drivers.Target, desired intent.State) map[string]string {
	out := unexpressible(desired)
	for k, v := range l2Unexpressible(t.Live, desired) {
		out[k] = v
	}
	sw, _ := t.Intent.(*intent.Switch)
	for k, v := range silicOneUnexpressible(t.Live, sw, desired) {
		out[k] = v
	}
	return out
}

func unexpressible(desired intent.State) map[string]string {
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

// fields: ECN thresholds are rendered in whole kbytes.
var fields = []intent.Field{
	{Pattern: "tc/*/ecn/min", Tolerance: 0.05},
	{Pattern: "tc/*/ecn/max", Tolerance: 0.05},
	{Pattern: "port/*/mtu", Disruptive: "an MTU change on a routed port drops routing adjacencies (OSPF/BGP sessions whose peer MTU then differs) until both ends match"},
	{Pattern: "port/*/pfc", Disruptive: "changing PFC mode flaps the port's lossless queues (PFC renegotiation)"},
	{Pattern: "tc/*/lossless", Disruptive: "changing the network-qos no-drop classes re-carves the lossless buffers of every port", DisruptiveOnTrue: true},
}

func switchIntent(t drivers.Target) (*intent.Switch, error) { return drivers.SwitchIntent(t, Name) }

const (
	showRunning = "show running-config"
	// showStartup and saveCmd: testdata/vendor/nxos/show-startup-config.txt
	// and save.txt (cisco.nxos nxos_config save_when/diff_against, napalm).
	showStartup = "show startup-config"
	saveCmd     = "copy running-config startup-config"
)

// runningConfig reads and normalises the running-config.
func runningConfig(s *clicore.Session) (string, error) {
	out, err := s.Send(showRunning)
	if err != nil {
		return "", err
	}
	if !strings.Contains(out, "!Command: show running-config") || !strings.Contains(out, "\ninterface ") {
		return "", fmt.Errorf("%s: %s: output lacks the command header or interfaces (truncated?)", s.Device(), showRunning)
	}
	return Normalize(out), nil
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

// Render writes the managed configuration as NX-OS CLI.
func (d *Driver) Render(t drivers.Target) ([]drivers.RenderedFile, error) {
	sw, err := switchIntent(t)
	if err != nil {
		return nil, err
	}
	if m := modelOf(t.Live, sw); SiliconOne(m) {
		return nil, fmt.Errorf("%s: nothing rendered: %s", sw.Name, silicOneReason(m))
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
func expressible(sw *intent.Switch) intent.State {
	st := sw.Flatten()
	for k := range unexpressible(st) {
		delete(st, k)
	}
	return st
}

// Release deletes the checkpoint a successful apply kept, once the run
// no longer needs to roll back.
func (d *Driver) Release(ctx context.Context, t drivers.Target, r drivers.Result) error {
	if r.Token == "" {
		return nil
	}
	s, err := d.Dial(ctx, t)
	if err != nil {
		return err
	}
	defer s.Close()
	if _, err := s.Send("no checkpoint " + r.Token); err != nil {
		return &stepError{Device: t.Device.Name, Step: "no checkpoint " + r.Token, Err: err}
	}
	d.Forget(r.Token)
	return nil
}
