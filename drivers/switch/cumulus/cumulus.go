// Package cumulus is fabctl's NVIDIA Cumulus Linux (NVUE) switch driver,
// pinned to Cumulus Linux 5.14 (the version of the vendor corpus
// testdata/vendor/cumulus/, whose files name the CumulusNetworks/docs
// commits they quote; NVUE's wording changes between 5.x releases, e.g.
// enable/disable vs enabled/disabled). Every command it sends is listed in
// testdata/vendor/cumulus/shapes.txt with its source; shapes_test.go
// fails on any other. It renders a switch intent as the documented `nv set
// qos roce` baseline plus explicit overrides, one attribute and one value
// per `nv set` as every NVIDIA example writes it (qos-guide-514.txt):
//
//	nv set qos roce                                                    (lossless mode, when a TC is lossless)
//	nv set qos mapping default-global trust l3
//	nv set qos mapping default-global dscp <d> switch-priority <tc>     (all 64 code points)
//	nv set qos egress-queue-mapping default-global switch-priority N traffic-class T (T = N for the intent's classes, else the best-effort class)
//	nv set qos pfc default-global switch-priority 3 ; ... tx enable ; ... rx enable ; ... cable-length <m>
//	nv set qos congestion-control default-global traffic-class 3 min-threshold 150000 ; ... max-threshold ... ; ... probability 100 ; ... ecn enable
//	nv set qos egress-scheduler default-global traffic-class 3 mode dwrr ; ... bw-percent 50   (mode strict for CNP)
//	nv set qos pfc-watchdog polling-interval 100 ; nv set qos pfc-watchdog robustness 2   (detect = polling x robustness)
//	nv set interface swp1 link mtu 9000                                 (Linux netdev MTU = IP MTU, no L2 overhead)
//	nv set interface swp1 qos pfc-watchdog
//
// Ports whose PFC priorities or trust differ from the switch's use PFC
// and mapping profiles of their own (fabctl-nopfc with tx and rx
// disabled; fabctl-trust-l2 for a port trusting PCP); the others return to
// default-global (nv unset interface swpN qos pfc|mapping). Each PFC
// profile carries the longest cable of its ports as its cable-length.
//
// It reads the applied revision with `nv config show -o json` (a list
// [{"header"}, {"set"}]: ReadConfigJSON) and whether it is saved with `nv
// config diff applied startup`, and applies a change list as one NVUE
// revision over SSH (scrapligo v1.4.3, a platform definition derived from
// its cumulus_linux one):
//
//	nv config revision                (the applied revision: the rollback point and Result.Token)
//	nv config detach                  (park a stale pending revision; it keeps its number)
//	nv set / nv unset ...             (stage)
//	nv config diff                    (empty: detach, nothing to do)
//	nv config apply --assume-yes      (NVUE validates the whole revision: all or nothing)
//	nv config show -o json            (verify the changed settings)
//
// and the engine then saves with `nv config save` (drivers.Saver; with
// NVUE's auto-save enabled the apply has saved already, before the
// verify, and the save is a no-op: the plan warns, Findings). On a failure before the apply ran the pending revision is
// detached and the applied configuration compared with the one read
// before; when the apply went through (a verify mismatch, or a connection
// dropped after `nv config apply`), the recorded revision is re-applied
// with `nv config apply <rev> --assume-yes`. Rollback does the same for a
// finished apply. NVUE's own `nv config apply --confirm <time>` is not
// used: NVIDIA's material does not show the command that confirms it.
package cumulus

import (
	"encoding/json"
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
const Name = "cumulus"

// Platform is scrapligo v1.4.3's cumulus_linux definition (prompt
// user@host:vrf:path$) with NVUE's own error texts added to
// failed-when-contains: NVUE prints "Error: ..." and "Invalid Command",
// which the built-in list ("ERROR:") misses. nv runs as the cumulus user
// (nvset/nvapply groups), so no sudo level is needed.
var Platform = clicore.ShellPlatform("cumulus_nvue", `(?im)^\S+@\S+:\S+:\S+\$\s*$`,
	"Error:", "ERROR:", "Invalid Command", "command not found", "Permission denied")

// Driver is the Cumulus driver: the SSH CLI core (clicore.Core) with
// NVUE's grammar (grammar, in hooks.go). One Driver serves one run: it
// remembers each applied transaction's prior configuration for Rollback.
type Driver struct{ clicore.Core }

// New returns a driver with default SSH settings.
func New() drivers.Driver { return NewWith(sshtransport.Options{}) }

// NewWith returns a driver whose connections use o (timeouts,
// known_hosts, secret lookup).
func NewWith(o sshtransport.Options) *Driver {
	return &Driver{clicore.Core{SSH: o, Facts: facts, P: grammar{}}}
}

// facts: NVUE revisions are all-or-nothing and earlier revisions can be
// re-applied; a failure while the context is cancelled also reconnects
// (with a context that is not) to detach or re-apply. Nothing is ever
// pending: NVUE documents `nv config apply --confirm <time>`
// (nvue-cli-514.txt:13-16) but not the command that confirms it
// (confirm.txt: only third-party material shows one), so the driver does
// not use it and apply's rollback covers a failed verify.
// noCheck: NVUE checks each `nv set` value against its schema as it is
// typed, and the pending revision as a whole only at `nv config apply`;
// the guide (nvue-cli-514.txt: apply, detach, diff) shows no command
// that validates a pending revision without applying it, so asking the
// switch would answer only what the schema-bound renderer already holds.
const noCheck = "NVUE validates a pending revision as a whole only when it is applied (NVIDIA Cumulus Linux 5.14 guide: nv config apply, diff, detach; no validate-only command), so the switch cannot be asked without applying; apply detaches a revision NVUE refuses"

var facts = clicore.Facts{Name: Name, Scrapli: Platform, SaveCommand: "nv config save", SaveStep: "nv config save",
	PriorKind: "revision", RedialOnCancel: true, NoCheck: noCheck,
	Capabilities: drivers.Capabilities{Checkpoints: true, Rollback: true}, Fields: fields}

// The device facts Read returns (drivers.PathFacts): NVUE's system
// config auto-save state (Findings) and whether RoCE mode is on
// (changes).
const (
	factAutoSave = drivers.PathFacts + "auto-save"
	factRoCE     = drivers.PathFacts + "roce"
)

var (
	_ drivers.Driver   = (*Driver)(nil)
	_ drivers.Renderer = (*Driver)(nil)
	_ drivers.Limiter  = (*Driver)(nil)
	_ drivers.Saver    = (*Driver)(nil)
	_ drivers.Reporter = (*Driver)(nil)
)

// fields: Spectrum quantises ECN thresholds to its buffer granularity
// (the reference: 150 KB reads back as 146.48 KB, 2.3 % off), so they are
// compared within 5 %.
var fields = []intent.Field{
	{Pattern: "tc/*/ecn/min", Tolerance: 0.05},
	{Pattern: "tc/*/ecn/max", Tolerance: 0.05},
	{Pattern: "port/*/mtu", Disruptive: "peers whose MTU then differs drop jumbo frames (and routing adjacencies) until both ends match"},
	{Pattern: "port/*/pfc", Disruptive: "changing the PFC priorities re-carves the lossless buffer pool of every port (switchd reprograms the buffers)"},
	{Pattern: "tc/*/lossless", Disruptive: "changing the PFC priorities re-carves the lossless buffer pool of every port (switchd reprograms the buffers)", DisruptiveOnTrue: true},
}

// Unexpressible lists what NVUE (as fabctl renders it) cannot set.
func (d *Driver) Unexpressible(t drivers.Target, desired intent.State) map[string]string {
	out := map[string]string{}
	for k, v := range desired {
		switch {
		case k == "buffer/headroom":
			out[k] = "Cumulus computes PFC headroom itself from cable length and speed (NVIDIA advises against setting xoff/xon by hand)"
		case k == "pfcwd/restore":
			out[k] = "NVUE's PFC watchdog has no restoration time (only polling-interval and robustness)"
		case k == "pfcwd/action":
			out[k] = "NVUE's PFC watchdog has no action setting (the switch drops on the stormed queue)"
		case strings.HasPrefix(k, "port/") && strings.HasSuffix(k, "/cable"):
			if why := cableGap(t, k, v); why != "" {
				out[k] = why
			}
		case strings.HasPrefix(k, "port/") && strings.HasSuffix(k, "/pause") && v == "true":
			out[k] = "fabctl renders no NVUE link-pause profile"
		case k == "pfcwd/detect":
			if poll, ok := desired["pfcwd/poll"]; ok && !multiple(v, poll) {
				out[k] = "NVUE detects a storm after robustness x polling-interval; " + v + " is not a multiple of " + poll
			}
		}
	}
	return out
}

// cableGap says why a port's cable length cannot be set as desired: NVUE
// has one cable-length per PFC profile, in whole metres
// (qos-guide-514.txt:20); the profile gets the longest cable of its ports.
func cableGap(t drivers.Target, path, v string) string {
	sw, ok := t.Intent.(*intent.Switch)
	if !ok || sw == nil {
		return ""
	}
	p, err := Build(sw)
	if err != nil {
		return ""
	}
	name, _ := splitPort(path)
	pn := p.pfcOf[name]
	if pn == "" {
		return ""
	}
	if have := strconv.Itoa(p.cable[pn]) + "m"; have != v {
		return fmt.Sprintf("NVUE has one cable-length per PFC profile, in whole metres (nv set qos pfc %s cable-length %d, the longest cable of its ports); this port's %s gets that headroom", pn, p.cable[pn], v)
	}
	return ""
}

func multiple(a, b string) bool {
	var x, y int
	if _, err := fmt.Sscanf(a, "%dms", &x); err != nil {
		return false
	}
	if _, err := fmt.Sscanf(b, "%dms", &y); err != nil || y <= 0 {
		return false
	}
	return x%y == 0 && x/y >= 1
}

func switchIntent(t drivers.Target) (*intent.Switch, error) { return drivers.SwitchIntent(t, Name) }

const showJSON = "nv config show -o json"

// applied reads `nv config show -o json` and returns the configuration
// tree and its canonical JSON (the header, which carries version fields,
// is left out of comparisons).
func applied(c *clicore.Session) (map[string]any, string, error) {
	out, err := c.Send(showJSON)
	if err != nil {
		return nil, "", err
	}
	tree, err := configTree([]byte(strings.TrimSpace(strings.ReplaceAll(out, "\r", ""))))
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", c.Device(), err)
	}
	b, err := json.Marshal(tree)
	if err != nil {
		return nil, "", err
	}
	return tree, string(b), nil
}

func appliedJSON(c *clicore.Session) (string, error) {
	_, s, err := applied(c)
	return s, err
}

// revisionTable is `nv config revision` (Cumulus Linux 5.5 and later):
// NVIDIA's NVUE command reference documents its table with Cumulus Linux
// rows (testdata/vendor/cumulus/nvue-reference-config.txt:15-21). The JSON
// form of `nv config history` was shaped from NVOS only (NVIDIA's NVOS
// test framework): no Cumulus Linux 5.x sample of it exists in NVIDIA's
// docs or a kept project, so the driver reads the documented table.
const revisionTable = "nv config revision"

// AppliedRevision picks the applied revision from `nv config revision`:
// a table whose columns are "Rev ID", "State", "Apply ID"
// (rev_<N>_apply_<M>) and "Apply Date" ("2024-04-26 16:34:04"), then type,
// user, reason and message (nvue-reference-config.txt:16-21). The
// applied revision is the one applied last: the latest apply date, then
// the higher revision and apply number. Revision numbers have gaps (a
// detached pending revision keeps its number, nvue-cli-514.txt:17-18), so
// neither the first nor the last row is the answer by itself; a row
// without an apply (a revision never applied) is skipped.
func AppliedRevision(out string) (string, error) {
	lines := strings.Split(strings.ReplaceAll(out, "\r", ""), "\n")
	head := -1
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) >= 6 && strings.Join(f[:6], " ") == "Rev ID State Apply ID Apply" {
			head = i
			break
		}
	}
	if head < 0 {
		return "", fmt.Errorf("%s: no \"Rev ID  State  Apply ID  Apply Date\" header: not the documented table", revisionTable)
	}
	type cand struct {
		date     string
		rev, app int
		id       string
	}
	var best *cand
	for _, l := range lines[head+1:] {
		f := strings.Fields(l)
		if len(f) < 5 {
			continue
		}
		var rev, app int
		if _, err := fmt.Sscanf(f[2], "rev_%d_apply_%d", &rev, &app); err != nil || f[0] != strconv.Itoa(rev) {
			continue
		}
		date := f[3] + " " + f[4]
		if _, err := time.Parse("2006-01-02 15:04:05", date); err != nil {
			continue
		}
		c := cand{date, rev, app, f[0]}
		if best == nil || c.date > best.date || (c.date == best.date && (c.rev > best.rev || (c.rev == best.rev && c.app > best.app))) {
			best = &c
		}
	}
	if best == nil {
		return "", fmt.Errorf("%s: no applied revision listed", revisionTable)
	}
	return best.id, nil
}

// currentRevision is the applied revision, from the revision table.
func currentRevision(c *clicore.Session) (string, error) {
	out, err := c.Send(revisionTable)
	if err != nil {
		return "", err
	}
	rev, err := AppliedRevision(out)
	if err != nil {
		return "", fmt.Errorf("%s: %w", c.Device(), err)
	}
	return rev, nil
}

// diffStartup compares the applied configuration with the startup one,
// the way NVIDIA shows it: `nv config diff applied startup` (NVUE-CLI.md
// "View Differences Between Configurations"; nvue-cli-514.txt:19-20).
// Differences print as YAML (- set: / - unset:); no difference prints
// nothing. Any other output is refused rather than guessed at.
const diffStartup = "nv config diff applied startup"

func saved(c *clicore.Session) (bool, error) {
	out, err := c.Send(diffStartup)
	if err != nil {
		return false, err
	}
	out = strings.TrimSpace(strings.ReplaceAll(out, "\r", ""))
	switch {
	case out == "":
		return true, nil
	case strings.HasPrefix(out, "- set:") || strings.HasPrefix(out, "- unset:"):
		return false, nil
	}
	return false, fmt.Errorf("%s: %s: unexpected output %q", c.Device(), diffStartup, out)
}

// autoSaveState is `system config auto-save state` in the applied tree
// (set with `nv set system config auto-save state {enabled|disabled}`,
// nvue-cli-514.txt:27-31); unset, it is the CL 5.9+ default, enabled
// (nvue-reference-config.txt:6).
func autoSaveState(tree map[string]any) string {
	if s := str(get(tree, "system", "config", "auto-save", "state")); s != "" {
		return s
	}
	return "enabled"
}

// Findings reports NVUE's auto-save setting as the planner's Read found
// it (t.Live).
func (d *Driver) Findings(t drivers.Target) []drivers.Finding {
	s, ok := t.Live[factAutoSave]
	if !ok {
		return nil
	}
	if s != "enabled" {
		return []drivers.Finding{{Severity: "info", Path: drivers.PathSaved,
			Message: "NVUE auto-save is " + s + ": applied changes persist only after nv config save, which fabctl runs after each verified apply"}}
	}
	// With auto-save on (the Cumulus Linux 5.9+ default: "the nv config
	// apply command automatically saves the configuration",
	// nvue-reference-config.txt:6-7) the apply writes startup before
	// fabctl reads it back: "saved only after a verified apply" does not
	// hold. A failed verification re-applies the prior revision, which
	// auto-saves that one again; a run cut between the two leaves the
	// unverified revision in startup. No NVIDIA text shows an apply that
	// skips the auto-save, nor whether a revision that turns auto-save
	// off is itself auto-saved, so fabctl does not switch it for the run:
	// it warns, and names the documented setting (nvue-cli-514.txt:27).
	return []drivers.Finding{{Severity: "warning", Path: drivers.PathSaved,
		Message: "NVUE auto-save is enabled: nv config apply writes the startup configuration before fabctl verifies it, so the switch saves a configuration fabctl has not verified yet; a failed verification re-applies (and auto-saves) the prior revision, but a run cut between the apply and that rollback leaves the unverified configuration in startup. For save-after-verify, turn auto-save off: nv set system config auto-save state disabled"}}
}

// Render writes the managed configuration as nv set lines.
func (d *Driver) Render(t drivers.Target) ([]drivers.RenderedFile, error) {
	sw, err := switchIntent(t)
	if err != nil {
		return nil, err
	}
	p, err := Build(sw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sw.Name, err)
	}
	return []drivers.RenderedFile{{Name: "nvue.sh", Data: []byte(strings.Join(p.Lines(), "\n") + "\n")}}, nil
}

// sectionsOf are the rendered sections that settle a state path: one,
// but a port's interface section assigns the port's PFC and mapping
// profiles, so those profiles come first whatever setting of the port
// changes.
func sectionsOf(p *rendering, path string) []string {
	if strings.HasPrefix(path, "port/") && strings.HasSuffix(path, "/cable") {
		// A port's cable length is its PFC profile's cable-length.
		name, _ := splitPort(path)
		switch pn := p.pfcOf[name]; pn {
		case "":
			return []string{""}
		case Profile:
			return []string{secPFC}
		default:
			return []string{secPFC + " " + pn}
		}
	}
	s := sectionOf(path)
	if !strings.HasPrefix(path, "port/") || s == "" {
		if path == "trust" || strings.HasPrefix(path, "dscp/") {
			// Mapping profiles that trust DSCP carry the map too.
			out := []string{s}
			for k := range p.sections {
				if strings.HasPrefix(k, secMapping+" "+trustProfile+"l3") {
					out = append(out, k)
				}
			}
			return out
		}
		return []string{s}
	}
	name, _ := splitPort(path)
	var out []string
	if pn := p.pfcOf[name]; pn != "" && pn != Profile {
		out = append(out, secPFC+" "+pn)
	}
	if mn := p.mapOf[name]; mn != "" && mn != Profile {
		out = append(out, secMapping+" "+mn)
	}
	return append(out, s)
}

var splitPort = clicore.SplitPort

// sectionOf is the rendered section that settles a state path.
func sectionOf(path string) string {
	switch {
	case path == "trust" || strings.HasPrefix(path, "dscp/"):
		return secMapping
	case strings.HasPrefix(path, "tc/"):
		switch {
		case strings.HasSuffix(path, "/lossless"):
			return secPFC
		case strings.Contains(path, "/ecn/"):
			return secECN
		}
		return secScheduler
	case strings.HasPrefix(path, "pfcwd/"):
		return secWatchdog
	case strings.HasPrefix(path, "port/"):
		last := strings.LastIndexByte(path, '/')
		if last <= len("port/") {
			return ""
		}
		// A port's PFC and trust are its interface's profile assignment.
		return secIf + path[len("port/"):last]
	}
	return ""
}

// changes turns a diff into steps carrying nv set/unset lines: each step
// is one section (mapping, PFC, ECN, scheduler, watchdog, one interface)
// rendered whole from the intent, so `nv set` converges it whatever was
// there; the RoCE baseline line leads the first step of a lossless
// switch (a no-op when it is already set). roceOn is whether the device
// runs RoCE mode already; when it does not, the first step turns it on
// (`nv set qos roce`), which changes the defaults of every section the
// mode implies (roce-514.txt: trust and maps, PFC on switch priority 3,
// ECN on TC3, ETS), so that step sets those sections and every managed
// port's interface section too, whatever the diff names: a difference from the RoCE defaults that the device's
// state before RoCE mode did not show (a TC3 without ECN, as in a RoCEv1
// fabric) would otherwise be left at the default.
func changes(sw *intent.Switch, diff []intent.AttrChange, fields []intent.Field, roceOn bool) ([]drivers.Change, error) {
	p, err := Build(sw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sw.Name, err)
	}
	type group struct {
		paths []string
		extra []string // sections the group's paths also need, before its own
		dis   string
	}
	groups := map[string]*group{}
	var order []string
	for _, c := range diff {
		secs := sectionsOf(p, c.Path)
		s := secs[len(secs)-1]
		if s == "" {
			continue
		}
		if strings.HasPrefix(s, secIf) && p.sections[s] == nil {
			continue // a port the intent does not name: never touched
		}
		g := groups[s]
		if g == nil {
			g = &group{}
			groups[s] = g
			order = append(order, s)
		}
		g.paths = append(g.paths, c.Path)
		g.extra = append(g.extra, secs[:len(secs)-1]...)
		if f, ok := intent.FieldFor(fields, c.Path); ok && f.Disruptive != "" && g.dis == "" {
			g.dis = f.Disruptive
		}
	}
	sortSections(order)
	var out []drivers.Change
	var names []string // each step's section
	done := map[string]bool{}
	for i, s := range order {
		g := groups[s]
		var payload []string
		sortSections(g.extra)
		for _, x := range append(g.extra, s) {
			if !done[x] {
				done[x] = true
				payload = append(payload, p.sections[x]...)
			}
		}
		if i == 0 && p.sections[secRoCE] != nil {
			pre := append([]string(nil), p.sections[secRoCE]...)
			if !roceOn {
				// The mode's defaults reach every port on the default-global
				// profiles too: a port the spec gives a profile of its own
				// (a lossy storage port) must be set to it in the same step,
				// even when its state before the mode did not differ.
				secs := []string{secMapping, secPFC, secECN, secScheduler}
				var ifs []string
				for x := range p.sections {
					if strings.HasPrefix(x, secIf) {
						ifs = append(ifs, x)
					}
				}
				sortSections(ifs)
				for _, x := range append(secs, ifs...) {
					if !done[x] {
						done[x] = true
						pre = append(pre, p.sections[x]...)
					}
				}
			}
			payload = append(pre, payload...)
		}
		if len(payload) == 0 && len(out) > 0 {
			// Its sections went out with the first step (RoCE mode's).
			prev := &out[len(out)-1]
			prev.Paths = append(prev.Paths, g.paths...)
			prev.Summary = fmt.Sprintf("set NVUE %s (%d settings)", names[len(names)-1], len(prev.Paths))
			if prev.Disruptive == "" {
				prev.Disruptive = g.dis
			}
			continue
		}
		names = append(names, s)
		out = append(out, drivers.Change{
			Paths:      g.paths,
			Summary:    fmt.Sprintf("set NVUE %s (%d settings)", s, len(g.paths)),
			Payload:    payload,
			Disruptive: g.dis,
		})
	}
	return out, nil
}

func sortSections(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0; j-- {
			a, b := s[j-1], s[j]
			ra, rb := sectionRank(a), sectionRank(b)
			if ra < rb || (ra == rb && a <= b) {
				break
			}
			s[j-1], s[j] = b, a
		}
	}
}

type stepError = clicore.StepError

// applyCmd applies the pending revision without prompting: `--assume-yes`
// is the CL 5.14 guide's spelling (nvue-cli-514.txt:12; the reference
// also has --y, nvue-reference-config.txt:8).
const applyCmd = "nv config apply --assume-yes"

// restore re-applies revision rev (`nv config apply <revision>`,
// nvue-reference-config.txt:10-11) and checks the applied config is pre.
func restore(c *clicore.Session, rev, pre string) error {
	if _, err := c.Send("nv config apply " + rev + " --assume-yes"); err != nil {
		return err
	}
	now, err := appliedJSON(c)
	if err != nil {
		return err
	}
	if now != pre {
		return fmt.Errorf("after re-applying revision %s the applied config still differs from before the apply", rev)
	}
	return nil
}
