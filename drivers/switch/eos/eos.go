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
// Rollback runs a second session (fabctl-<id>-rb) that restores the
// QoS and interface configuration of the running-config recorded before
// the apply: top-level `qos ...` and `priority-flow-control ...` lines
// that are new are negated (negate: the documented cleared form) and the
// prior ones re-entered;
// `qos profile` sections that differ are removed and re-entered from the
// prior text; interface sections get `no` for new lines and the prior
// lines back. Other configuration is not touched. The session is
// committed only when its diff is non-empty, and the running-config is
// compared byte for byte with the recorded one afterwards.
package eos

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
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
		}
	}
	return out
}

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
// apply, and the DSCP map the switch ran then (from `show running-config
// all`, which prints the code points at their defaults too).
type prior struct {
	run  string
	dscp *[64]int // -1: no value printed; nil: not read
}

// readPrior reads what a rollback restores.
func readPrior(s *clicore.Session) (prior, error) {
	run, err := running(s)
	if err != nil {
		return prior{}, err
	}
	all, err := s.Send(showRunningAll)
	if err != nil {
		return prior{}, err
	}
	t := parseRunning(ParseConfig(all)).table
	return prior{run: run, dscp: &t}, nil
}

// restore brings the managed sections of the running-config back to
// pre in session name, and checks the result byte for byte.
func restore(c *clicore.Session, p prior, name string) error {
	pre := p.run
	cur, err := running(c)
	if err != nil {
		return err
	}
	if cur == pre {
		return nil
	}
	script := RestoreScriptDSCP(ParseConfig(pre), ParseConfig(cur), p.dscp)
	if _, err := c.Send("configure session " + name); err != nil {
		return err
	}
	for _, l := range script {
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

// managed says whether a top-level line is one fabctl restores.
func managed(line string) bool {
	return strings.HasPrefix(line, "qos ") || strings.HasPrefix(line, "priority-flow-control ") || strings.HasPrefix(line, "interface ")
}

// negate is the documented form that clears a configuration line (its
// indentation kept): the form `show running-config all` prints for the
// cleared setting (pyeapi-running-config-all.txt) where the corpus has it,
// else `no` and the command without its value (pyeapi-commands.txt:17).
// A `no X` line is cleared by re-entering X's default where that is
// documented (`no priority` → `priority strict`).
func negate(line string) string {
	ind := line[:len(line)-len(strings.TrimLeft(line, " "))]
	l := strings.TrimSpace(line)
	f := strings.Fields(l)
	if len(f) == 0 {
		return line
	}
	var out string
	switch {
	case l == "no priority":
		out = "priority strict" // the tx-queue default (pyeapi-running-config-all.txt:38)
	case l == "priority strict":
		out = "priority strict" // already the default; re-entering it is harmless
	case f[0] == "no":
		out = strings.Join(f[1:], " ")
	case f[0] == "mtu" || f[0] == "service-profile" || f[0] == "description":
		out = "no " + f[0]
	case len(f) == 3 && f[0] == "flowcontrol":
		out = "no flowcontrol " + f[1]
	case len(f) == 2 && f[0] == "bandwidth" && f[1] == "percent" || len(f) == 3 && f[0] == "bandwidth" && f[1] == "percent":
		out = "no bandwidth percent"
	case len(f) >= 2 && f[0] == "random-detect" && f[1] == "ecn":
		out = "no random-detect ecn minimum-threshold"
	case l == "priority-flow-control on":
		out = "no priority-flow-control"
	case len(f) == 4 && f[0] == "priority-flow-control" && f[1] == "priority":
		out = "no priority-flow-control priority " + f[2]
	case len(f) == 6 && strings.HasPrefix(l, "priority-flow-control pause watchdog default "):
		out = "no " + strings.Join(f[:5], " ")
	case len(f) == 5 && strings.HasPrefix(l, "priority-flow-control pause watchdog action "):
		out = "no priority-flow-control pause watchdog action"
	case len(f) == 2 && f[0] == "qos" && f[1] == "trust" || len(f) == 3 && f[0] == "qos" && f[1] == "trust":
		out = "no qos trust"
	default:
		out = "no " + l
	}
	return ind + out
}

// isDSCPMap says whether f is a `qos map dscp <ints> to traffic-class N` line.
func isDSCPMap(f []string) bool {
	return len(f) >= 6 && f[0] == "qos" && f[1] == "map" && f[2] == "dscp" && f[len(f)-2] == "traffic-class" && f[len(f)-3] == "to"
}

// dscpBack sets the code points of a `qos map dscp` line (f) back to the
// classes preDSCP holds, one set line per class; code points without a
// prior value are negated (`no` + the line, pyeapi-commands.txt:17).
func dscpBack(f []string, preDSCP *[64]int) []string {
	byTC := map[int][]int{}
	var none []string
	for _, s := range f[3 : len(f)-3] {
		d, err := strconv.Atoi(s)
		if err != nil || d < 0 || d > 63 {
			continue
		}
		if tc := preDSCP[d]; tc >= 0 {
			byTC[tc] = append(byTC[tc], d)
		} else {
			none = append(none, s)
		}
	}
	out := dscpMapLines(byTC)
	if len(none) > 0 {
		out = append(out, "no qos map dscp "+strings.Join(none, " ")+" "+strings.Join(f[len(f)-3:], " "))
	}
	return out
}

func sameTree(a, b *Node) bool {
	if a.Line != b.Line || len(a.Children) != len(b.Children) {
		return false
	}
	for i := range a.Children {
		if !sameTree(a.Children[i], b.Children[i]) {
			return false
		}
	}
	return true
}

// RestoreScript is the CLI that turns cur's managed sections into pre's:
// new top-level lines negated, sections that differ re-entered (qos
// profiles removed and rebuilt, interfaces line by line), missing lines
// re-entered.
func RestoreScript(pre, cur []*Node) []string { return RestoreScriptDSCP(pre, cur, nil) }

// RestoreScriptDSCP is RestoreScript knowing the DSCP map the switch ran
// before (preDSCP, from `show running-config all`; nil: not read): a
// code point a new `qos map dscp` line moved is set back to the class it
// had with the documented set form (avd-qos-profile.cfg:51), which
// returns a built-in value to the built-in map (EOS then no longer
// prints it); only a code point the switch printed no value for gets the
// derived `no` form.
func RestoreScriptDSCP(pre, cur []*Node, preDSCP *[64]int) []string {
	var out []string
	var add []*Node
	for _, n := range cur {
		if !managed(n.Line) || len(n.Children) > 0 || strings.HasPrefix(n.Line, "interface ") || strings.HasPrefix(n.Line, "qos profile ") {
			continue
		}
		if find(pre, n.Line) == nil {
			if f := strings.Fields(n.Line); preDSCP != nil && isDSCPMap(f) {
				out = append(out, dscpBack(f, preDSCP)...)
				continue
			}
			out = append(out, negate(n.Line))
		}
	}
	for _, n := range cur {
		if strings.HasPrefix(n.Line, "qos profile ") && find(pre, n.Line) == nil {
			out = append(out, "no "+n.Line)
		}
	}
	for _, n := range pre {
		if !managed(n.Line) {
			continue
		}
		c := find(cur, n.Line)
		switch {
		case strings.HasPrefix(n.Line, "interface "):
			if c == nil || sameTree(n, c) {
				continue
			}
			var body []string
			for _, ch := range c.Children {
				if find(n.Children, ch.Line) == nil {
					body = append(body, negate(ch.Line))
				}
			}
			for _, ch := range n.Children {
				if find(c.Children, ch.Line) == nil {
					body = append(body, flatten([]*Node{ch})...)
				}
			}
			out = append(out, n.Line)
			out = append(out, body...)
			out = append(out, "exit")
		case strings.HasPrefix(n.Line, "qos profile "):
			if c != nil && sameTree(n, c) {
				continue
			}
			if c != nil {
				out = append(out, "no "+n.Line)
			}
			add = append(add, n)
		default:
			if c == nil {
				add = append(add, n)
			}
		}
	}
	return append(out, flatten(add)...)
}
