// Package eos is fabctl's Arista EOS switch driver. It renders a switch
// intent into EOS CLI in the forms the vendor corpus documents
// (testdata/vendor/eos/shapes.txt names each form's source):
//
//	qos map dscp 0 1 2 ... to traffic-class 0      (all 64 code points: no default table is sourced)
//	qos profile FABCTL
//	   qos trust dscp
//	   tx-queue 3
//	      no priority                               (strict TCs: priority strict)
//	      bandwidth percent 50
//	      random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes max-mark-probability 100
//	   priority-flow-control on
//	   priority-flow-control priority 3 no-drop
//	   priority-flow-control pause watchdog
//	interface Ethernet1
//	   mtu 9000                                     (EOS's mtu is the IP MTU: no L2 overhead)
//	   service-profile FABCTL
//	priority-flow-control pause watchdog default timeout 0.2
//	priority-flow-control pause watchdog default recovery-time 0.4
//	priority-flow-control pause watchdog default polling-interval 0.1
//	priority-flow-control pause watchdog override action drop
//
// Ports whose trust, PFC priorities or watchdog differ from the switch's
// defaults (a lossy storage port, a fabric-facing port without watchdog,
// a port trusting CoS) get one more qos profile per distinct shape, with
// the same tx-queues, named by how it differs (FABCTL-NOPFC,
// FABCTL-PFC3-NOWD, FABCTL-COS-PFC3; see ProfileName). A profile no
// managed port uses any more is left on the switch.
//
// The driver reads `show running-config` back into normalised state
// (tx-queues of every profile a managed port uses are compared with
// FABCTL's), and applies
// changes in a named configuration session over SSH (scrapligo v1.4.3's
// built-in arista_eos platform, via drivers/transport/ssh):
//
//	configure session fabctl-<id>
//	   <lines, with explicit exits between modes>
//	show session-config diffs
//	commit                   (with ApplyOptions.ConfirmTimeout > 0: `end`, then
//	                          `configure session fabctl-<id> commit timer HH:MM:SS`;
//	                          Confirm sends `configure session fabctl-<id> commit`)
//	abort                    (on any error before the commit)
//
// The engine then saves (drivers.Saver): `copy running-config
// startup-config`; Read reports config/saved from `show startup-config`
// compared with `show running-config`.
//
// The session prompt grows with the mode (leaf(config-s-fabctl-<id>-qos-profile-FABCTL-txq-3)#);
// the session name is kept short so it stays within the 63 characters
// the arista_eos prompt patterns allow (scrapli/scrapli_cfg#51). scrapligo
// tracks privilege levels by command, not by prompt: sshtransport.Conn.Send
// (SendCommand) finds the driver at privilege-exec and sends each line as
// typed, reading up to the next prompt, which the joined arista_eos
// patterns match in every configuration mode.
//
// Rollback runs a second session (fabctl-<id>-rb) that replaces the
// running-config with the one recorded before the apply: `rollback
// clean-config` empties the session's candidate and the recorded lines
// are typed again (NAPALM's and arista.eos' replace), so no removal form
// is needed. The session is committed and the running-config is compared
// byte for byte with the recorded one afterwards.
package eos

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/switch/clicore"
	sshtransport "github.com/fabctl/fabctl/drivers/transport/ssh"
	"github.com/fabctl/fabctl/intent"
)

// Name is the platform name.
const Name = "eos"

// Platform is scrapligo v1.4.3's built-in EOS platform.
const Platform = "arista_eos"

// Driver is the EOS driver: the SSH CLI core (clicore.Core) with EOS's
// grammar (grammar, in hooks.go). One Driver serves one run: it remembers
// each applied transaction's prior running-config for Rollback.
type Driver struct{ clicore.Core }

// New returns a driver with default SSH settings.
func New() drivers.Driver { return NewWith(sshtransport.Options{}) }

// NewWith returns a driver whose connections use o (timeouts,
// known_hosts, secret lookup).
func NewWith(o sshtransport.Options) *Driver {
	return &Driver{clicore.Core{SSH: o, Facts: facts, P: grammar{}}}
}

// facts: configuration sessions with commit timers, and rollback from
// the running-config recorded before the apply.
var facts = clicore.Facts{Name: Name, Scrapli: Platform, SaveCommand: saveCommand, SaveStep: saveCommand, PriorKind: "config",
	Capabilities: drivers.Capabilities{Sessions: true, CommitConfirm: true, Rollback: true}, Fields: fields}

var (
	_ drivers.Driver   = (*Driver)(nil)
	_ drivers.Renderer = (*Driver)(nil)
	_ drivers.Saver    = (*Driver)(nil)
)

var _ drivers.Limiter = (*Driver)(nil)

// headroomReason: older EOS sizes PFC headroom itself; recent EOS has
// configurable PFC headroom through PFC profiles (audit E26: Arista TOI
// "PFC FADT", 2025), but no vendor command text for them is in the corpus
// (testdata/vendor/eos/), so no EOS version gets a rendered headroom.
const headroomReason = "EOS before PFC profiles sizes PFC headroom itself; the PFC-profile headroom commands of recent EOS (Arista TOI, 2025) have no vendor-sourced command text yet"

// Unexpressible: EOS has no cable-length setting and fabctl renders no
// per-PG headroom on EOS (headroomReason), so plans list them instead of
// planning changes that could never converge.
func (d *Driver) Unexpressible(t drivers.Target, desired intent.State) map[string]string {
	out := map[string]string{}
	sw, _ := t.Intent.(*intent.Switch)
	_, model, ok, known := liveFamily(t.Live, sw)
	for k := range desired {
		switch {
		case known && !ok && queuePath(k):
			out[k] = unknownModelReason(model)
		case k == "buffer/headroom":
			out[k] = headroomReason
		case strings.HasPrefix(k, "port/") && strings.HasSuffix(k, "/cable"):
			out[k] = "EOS has no cable-length setting (headroom is sized by the switch)"
		case strings.HasPrefix(k, "port/") && strings.HasSuffix(k, "/pfcwd") && desired[k] == "false" && t.Live[k] == "true":
			out[k] = profileWatchdogOffReason
		}
	}
	// The global watchdog the intent turns off: its lines would have to
	// be removed, and no source shows their `no` forms.
	if sw != nil && !sw.Watchdog.Enabled {
		for _, k := range []string{"pfcwd/detect", "pfcwd/restore", "pfcwd/poll", "pfcwd/action"} {
			if _, on := t.Live[k]; on {
				out[k] = watchdogOffReason
			}
		}
	}
	return out
}

// The removal forms no vendor source shows (docs/vendor-sources.md, EOS
// removal forms): AVD expresses a watchdog that is off by leaving its
// lines out (avd-pfc-schema.txt:28-32) and never renders their `no`
// forms; only pyeapi's generic `no <command>` rule (pyeapi-commands.txt:17)
// would derive them. fabctl does not send a derived form: the switch
// keeps its watchdog, and the plan says so.
const (
	profileWatchdogOffReason = "turning the PFC watchdog off in an EOS qos profile needs `no priority-flow-control pause watchdog`, which no vendor source shows (AVD leaves the line out; pyeapi's generic `no` rule only): remove it on the switch, fabctl then reads it off"
	watchdogOffReason        = "removing EOS's global PFC watchdog lines needs `no priority-flow-control pause watchdog default timeout|recovery-time|polling-interval` and `no ... override action drop`, which no vendor source shows (AVD leaves them out; pyeapi's generic `no` rule only): remove them on the switch"
)

// fields: ECN thresholds are rendered in whole kbytes.
var fields = []intent.Field{
	{Pattern: "tc/*/ecn/min", Tolerance: 0.05},
	{Pattern: "tc/*/ecn/max", Tolerance: 0.05},
	{Pattern: "port/*/mtu", Disruptive: "an IP MTU change on a routed port drops routing adjacencies (OSPF) whose peer MTU then differs, until both ends match"},
	{Pattern: "port/*/pfc", Disruptive: "changing the no-drop priorities re-carves the lossless buffers of every port using the qos profile"},
	{Pattern: "tc/*/lossless", Disruptive: "changing the no-drop priorities re-carves the lossless buffers of every port using the qos profile", DisruptiveOnTrue: true},
}

func switchIntent(t drivers.Target) (*intent.Switch, error) { return drivers.SwitchIntent(t, Name) }

// The read and save commands (testdata/vendor/eos/shapes.txt):
// `show running-config` (napalm-show-running-config.txt, pyeapi
// get_config), `show startup-config` (napalm get_config,
// napalm-show-startup-config.txt; pyeapi-commands.txt:24) and the save
// `copy running-config startup-config` (save.txt:12: Arista's AVD docs and
// basic configurations; NAPALM uses the equivalent `write memory`).
const (
	showRunning = "show running-config"
	// showRunningAll prints defaults too (pyeapi-commands.txt:14, 26).
	showRunningAll = "show running-config all"
	showStartup    = "show startup-config"
	saveCommand    = "copy running-config startup-config"
)

func running(s *clicore.Session) (string, error) {
	out, err := s.Send(showRunning)
	if err != nil {
		return "", err
	}
	if !strings.Contains(out, "end") {
		return "", fmt.Errorf("%s: %s: output has no final \"end\" line (truncated?)", s.Device(), showRunning)
	}
	return out, nil
}

// SameConfig compares a startup-config with a running-config as EOS
// prints them: the "! "-comment header differs by design (`! Command:
// show startup-config`, `! Startup-config last modified at ...`:
// napalm-show-startup-config.txt:11-13), the configuration lines after it
// must be equal.
func SameConfig(startup, running string) bool {
	body := func(s string) string {
		var b strings.Builder
		for _, l := range strings.Split(strings.ReplaceAll(s, "\r", ""), "\n") {
			if strings.HasPrefix(l, "! ") || strings.TrimSpace(l) == "" {
				continue
			}
			b.WriteString(strings.TrimRight(l, " ") + "\n")
		}
		return b.String()
	}
	return strings.Contains(startup, "end") && body(startup) == body(running)
}

// noDiffs says whether `show session-config diffs` output shows no change:
// EOS prints a unified diff whose first two lines are the `--- ` / `+++ `
// header (pyeapi-session-config-diffs.txt:11-12); NAPALM drops them
// before testing for emptiness (napalm-config-session.txt:12), and so does
// fabctl (audit E23).
func noDiffs(out string) bool {
	for _, l := range strings.Split(strings.ReplaceAll(out, "\r", ""), "\n") {
		if strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ") || strings.TrimSpace(l) == "" {
			continue
		}
		return false
	}
	return true
}

// Render writes the managed configuration as EOS CLI.
func (d *Driver) Render(t drivers.Target) ([]drivers.RenderedFile, error) {
	sw, err := switchIntent(t)
	if err != nil {
		return nil, err
	}
	// A render uses the chip family of the model the switch reported, or
	// of the spec's model; without either, Sand's tx-queue (Build). A
	// model in no table is refused rather than guessed.
	queue := QueueSand
	if fam, model, ok, known := liveFamily(t.Live, sw); known {
		if !ok {
			return nil, fmt.Errorf("%s: %s", sw.Name, unknownModelReason(model))
		}
		queue = fam.Queue
	}
	p, err := BuildFor(sw, queue)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sw.Name, err)
	}
	return []drivers.RenderedFile{{Name: "eos.cfg", Data: []byte(p.Config())}}, nil
}

func newToken() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "fabctl-" + hex.EncodeToString(b)
}

// stepError names the step of the transaction that failed.
type stepError = clicore.StepError

var isConnLoss = clicore.IsConnLoss

// timer renders a confirm timeout as HH:MM:SS (at least one second).
func timer(d time.Duration) string {
	s := int((d + time.Second - 1) / time.Second)
	if s < 1 {
		s = 1
	}
	if s > 23*3600+59*60+59 {
		s = 23*3600 + 59*60 + 59
	}
	return fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60)
}

// prior is what a rollback restores: the running-config before the
// apply.
type prior struct {
	run string
}

// readPrior reads what a rollback restores.
func readPrior(s *clicore.Session) (prior, error) {
	run, err := running(s)
	if err != nil {
		return prior{}, err
	}
	return prior{run: run}, nil
}

// cleanConfig empties a configuration session's candidate, so that the
// lines typed after it replace the running-config as a whole when the
// session commits: NAPALM's replace (napalm eos.py _load_config, l.417-419:
// `configure session <S>`, `rollback clean-config`, the configuration's
// lines without its `!` comments), the way arista.eos' cliconf replaces a
// configuration (plugins/cliconf/eos.py l.142, l.218;
// testdata/vendor/eos/napalm-config-session.txt).
const cleanConfig = "rollback clean-config"

// restore brings the running-config back to p in session name: the
// session's candidate is emptied (rollback clean-config) and the recorded
// running-config re-entered line by line, then committed; the result is
// checked byte for byte. No removal form is typed: a setting the apply
// added is gone because the replaced configuration does not hold it (the
// `no` forms of the watchdog lines, of `qos profile` and of
// `service-profile` have no vendor source, docs/vendor-sources.md).
func restore(c *clicore.Session, p prior, name string) error {
	pre := p.run
	cur, err := running(c)
	if err != nil {
		return err
	}
	if cur == pre {
		return nil
	}
	if _, err := c.Send("configure session " + name); err != nil {
		return err
	}
	for _, l := range append([]string{cleanConfig}, RestoreScript(ParseConfig(pre))...) {
		if _, err := c.Send(l); err != nil {
			_, _ = c.Send("abort")
			return err
		}
	}
	if _, err := c.Send("commit"); err != nil {
		_, _ = c.Send("abort")
		return err
	}
	now, err := running(c)
	if err != nil {
		return err
	}
	if now != pre {
		return errors.New("after the restore session the running-config still differs from before the apply")
	}
	return nil
}

// RestoreScript is the CLI that re-enters a recorded running-config after
// `rollback clean-config`: every line without the `!` comments and the
// closing `end` (as NAPALM's _load_config drops them), a sub-mode's lines
// followed by `exit` (pyeapi-commands.txt:23).
func RestoreScript(pre []*Node) []string {
	var out []string
	for _, n := range pre {
		out = append(out, n.Line)
		if len(n.Children) > 0 || entersMode(n.Line) {
			out = append(out, RestoreScript(n.Children)...)
			out = append(out, "exit")
		}
	}
	return out
}

// entersMode says whether a line opens a configuration mode even with
// nothing under it (an interface or a qos profile left at its defaults):
// it is left with `exit` like any other.
func entersMode(line string) bool {
	f := strings.Fields(line)
	return len(f) == 2 && (f[0] == "interface" || f[0] == "tx-queue" || f[0] == "uc-tx-queue") || len(f) == 3 && f[0] == "qos" && f[1] == "profile"
}
