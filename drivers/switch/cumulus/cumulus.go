// Package cumulus is fabctl's NVIDIA Cumulus Linux (NVUE) switch driver
// (see shared/reference/switches.md §2.2). It renders a switch intent as
// the documented `nv set qos roce` baseline plus explicit overrides:
//
//	nv set qos roce                                                    (lossless mode, when a TC is lossless)
//	nv set qos mapping default-global trust l3
//	nv set qos mapping default-global dscp <d> switch-priority <tc>     (all 64 code points)
//	nv set qos egress-queue-mapping default-global switch-priority N traffic-class N
//	nv set qos pfc default-global switch-priority 3 ; ... tx enable rx enable
//	nv set qos congestion-control default-global traffic-class 3 min-threshold 150000 max-threshold 1500000 probability 100 ecn enable
//	nv set qos egress-scheduler default-global traffic-class 3 mode dwrr bw-percent 50   (mode strict for CNP)
//	nv set qos pfc-watchdog polling-interval 100 robustness 2           (detect = polling x robustness)
//	nv set interface swp1 link mtu 9000                                 (Linux netdev MTU = IP MTU, no L2 overhead)
//	nv set interface swp1 qos pfc-watchdog
//
// Ports whose PFC priorities or trust differ from the switch's use PFC
// and mapping profiles of their own (nv set qos pfc fabctl-nopfc tx
// disable rx disable; nv set interface swp3 qos pfc profile
// fabctl-nopfc; fabctl-trust-l2 for a port trusting PCP); the others
// return to default-global (nv unset interface swpN qos pfc|mapping).
// A profile no managed port uses any more is left in the configuration.
//
// It reads the applied revision with `nv config show -o json` (ReadConfigJSON),
// and applies a change list as one NVUE revision over SSH (scrapligo
// v1.4.3, a platform definition derived from its cumulus_linux one):
//
//	nv config history          (records the applied revision: the rollback point and Result.Token)
//	nv config detach           (drop a stale pending revision)
//	nv set / nv unset ...      (stage)
//	nv config diff             (empty: detach, nothing to do)
//	nv config apply -y         (NVUE validates the whole revision: all or nothing)
//	nv config show -o json     (verify the changed settings)
//
// On a failure before the apply ran the pending revision is detached and
// the applied configuration is compared byte for byte with the one read
// before; when the apply went through (a verify mismatch, or a connection
// dropped after `nv config apply`), the recorded revision is re-applied
// with `nv config apply <rev> -y`. Rollback does the same for a finished
// apply.
package cumulus

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"

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
var Platform = []byte(`---
platform-type: 'cumulus_nvue'
default:
  driver-type: 'network'
  privilege-levels:
    exec:
      name: 'exec'
      pattern: '(?im)^\S+@\S+:\S+:\S+\$\s*$'
      previous-priv:
      deescalate:
      escalate:
      escalate-auth: false
      escalate-prompt:
  default-desired-privilege-level: 'exec'
  failed-when-contains:
    - 'Error:'
    - 'ERROR:'
    - 'Invalid Command'
    - 'command not found'
    - 'Permission denied'
  textfsm-platform: ''
  network-on-open:
    - operation: 'acquire-priv'
  network-on-close:
    - operation: 'channel.write'
      input: 'exit'
    - operation: 'channel.return'
`)

// Driver is the Cumulus driver. One Driver serves one run: it remembers
// each applied transaction's prior configuration for Rollback.
type Driver struct {
	SSH sshtransport.Options

	mu    sync.Mutex
	prior map[string]string // token (revision) -> applied JSON before
}

// New returns a driver with default SSH settings.
func New() drivers.Driver { return &Driver{} }

var (
	_ drivers.Driver   = (*Driver)(nil)
	_ drivers.Renderer = (*Driver)(nil)
	_ drivers.Limiter  = (*Driver)(nil)
)

// Name is "cumulus".
func (d *Driver) Name() string { return Name }

// Capabilities: NVUE revisions are all-or-nothing and earlier revisions
// can be re-applied.
func (d *Driver) Capabilities() drivers.Capabilities {
	return drivers.Capabilities{Checkpoints: true, Rollback: true}
}

// Fields: Spectrum quantises ECN thresholds to its buffer granularity
// (the reference: 150 KB reads back as 146.48 KB, 2.3 % off), so they are
// compared within 5 %.
func (d *Driver) Fields() []intent.Field {
	return []intent.Field{
		{Pattern: "tc/*/ecn/min", Tolerance: 0.05},
		{Pattern: "tc/*/ecn/max", Tolerance: 0.05},
		{Pattern: "port/*/mtu", Disruptive: "peers whose MTU then differs drop jumbo frames (and routing adjacencies) until both ends match"},
		{Pattern: "port/*/pfc", Disruptive: "changing the PFC priorities re-carves the lossless buffer pool of every port (switchd reprograms the buffers)"},
		{Pattern: "tc/*/lossless", Disruptive: "changing the PFC priorities re-carves the lossless buffer pool of every port (switchd reprograms the buffers)"},
	}
}

// Unexpressible lists what NVUE (as fabctl renders it) cannot set.
func (d *Driver) Unexpressible(_ drivers.Target, desired intent.State) map[string]string {
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
			out[k] = "NVUE has one cable-length per PFC profile (qos pfc default-global cable-length), not per port"
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

func (d *Driver) dial(ctx context.Context, t drivers.Target) (*sshtransport.Conn, error) {
	o := d.SSH
	o.Platform = Platform
	return sshtransport.Dial(ctx, t, o)
}

const showJSON = "nv config show -o json"

func appliedJSON(c *sshtransport.Conn) (string, error) {
	out, err := c.Send(showJSON)
	if err != nil {
		return "", err
	}
	out = strings.TrimSpace(strings.ReplaceAll(out, "\r", ""))
	if !strings.HasPrefix(out, "{") || !strings.HasSuffix(out, "}") {
		return "", fmt.Errorf("%s: %s: output is not a JSON object (truncated?)", c.Device(), showJSON)
	}
	return out, nil
}

var revRow = regexp.MustCompile(`(?m)^\s*(\d+)\s`)

// currentRevision is the newest row of `nv config history`: the applied
// revision.
func currentRevision(c *sshtransport.Conn) (string, error) {
	out, err := c.Send("nv config history")
	if err != nil {
		return "", err
	}
	m := revRow.FindStringSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("%s: nv config history: no revision listed", c.Device())
	}
	return m[1], nil
}

// Read returns the managed settings of the applied revision.
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
	out, err := appliedJSON(c)
	if err != nil {
		return nil, err
	}
	return ReadConfigJSON([]byte(out), sw)
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

func splitPort(path string) (string, string) {
	rest := strings.TrimPrefix(path, "port/")
	i := strings.LastIndexByte(rest, '/')
	if i < 0 {
		return rest, ""
	}
	return rest[:i], rest[i+1:]
}

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

// Changes turns a diff into steps carrying nv set/unset lines: each step
// is one section (mapping, PFC, ECN, scheduler, watchdog, one interface)
// rendered whole from the intent, so `nv set` converges it whatever was
// there; the RoCE baseline line leads the first step of a lossless
// switch (a no-op when it is already set).
func (d *Driver) Changes(t drivers.Target, diff []intent.AttrChange, desired intent.State) ([]drivers.Change, error) {
	sw, err := switchIntent(t)
	if err != nil {
		return nil, err
	}
	p, err := Build(sw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sw.Name, err)
	}
	fields := d.Fields()
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
			payload = append(append([]string(nil), p.sections[secRoCE]...), payload...)
		}
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

// Apply applies the steps as one NVUE revision.
func (d *Driver) Apply(ctx context.Context, t drivers.Target, steps []drivers.Change, _ drivers.ApplyOptions) (drivers.Result, error) {
	name := t.Device.Name
	var lines []string
	var paths []string
	for _, s := range steps {
		lines = append(lines, s.Payload...)
		paths = append(paths, s.Paths...)
	}
	if len(lines) == 0 {
		return drivers.Result{}, nil
	}
	c, err := d.dial(ctx, t)
	if err != nil {
		return drivers.Result{}, err
	}
	defer func() { c.Close() }()
	rev, err := currentRevision(c)
	if err != nil {
		return drivers.Result{}, &stepError{Device: name, Step: "nv config history (record the rollback revision)", Err: err}
	}
	pre, err := appliedJSON(c)
	if err != nil {
		return drivers.Result{}, &stepError{Device: name, Step: "read the applied config before apply", Err: err}
	}
	applyRan := false

	// fail drops the pending revision (or re-applies the recorded one
	// when the apply went through) and says which state the switch is in.
	fail := func(step string, cause error) (drivers.Result, error) {
		se := &stepError{Device: name, Step: step, Err: cause}
		if clicore.IsConnLoss(cause) || ctx.Err() != nil {
			c.Close()
			nc, err := d.dial(context.WithoutCancel(ctx), t)
			if err != nil {
				return drivers.Result{}, &drivers.PartialError{Device: name, Err: fmt.Errorf("%v; reconnecting failed: %v; a pending revision may be left, or applied on top of revision %s", se, err, rev)}
			}
			c = nc
		}
		if _, err := c.Send("nv config detach"); err != nil {
			return drivers.Result{}, &drivers.PartialError{Device: name, Err: fmt.Errorf("%v; nv config detach failed: %v", se, err)}
		}
		now, err := appliedJSON(c)
		if err != nil {
			return drivers.Result{}, &drivers.PartialError{Device: name, Err: fmt.Errorf("%v; reading the applied config after the failure: %v", se, err)}
		}
		if now == pre {
			return drivers.Result{}, fmt.Errorf("%v; pending revision detached, nothing applied (the applied config is still revision %s)", se, rev)
		}
		if err := restore(c, rev, pre); err != nil {
			return drivers.Result{}, &drivers.PartialError{Device: name, Err: fmt.Errorf("%v; the apply had gone through and re-applying revision %s failed: %v", se, rev, err)}
		}
		what := "the apply had gone through"
		if !applyRan {
			what = "the applied config had changed"
		}
		return drivers.Result{}, fmt.Errorf("%v; %s, rolled back to revision %s", se, what, rev)
	}

	if _, err := c.Send("nv config detach"); err != nil {
		return fail("nv config detach", err)
	}
	for i, l := range lines {
		where := fmt.Sprintf("%s (line %d of %d)", l, i+1, len(lines))
		if err := ctx.Err(); err != nil {
			return fail(where, err)
		}
		if _, err := c.Send(l); err != nil {
			return fail(where, err)
		}
	}
	diff, err := c.Send("nv config diff")
	if err != nil {
		return fail("nv config diff", err)
	}
	if strings.TrimSpace(diff) == "" {
		if _, err := c.Send("nv config detach"); err != nil {
			return fail("nv config detach (nothing to apply)", err)
		}
		return drivers.Result{}, nil
	}
	applyRan = true
	if _, err := c.Send("nv config apply -y"); err != nil {
		return fail("nv config apply -y", err)
	}
	// Verify the settled paths.
	if sw, ok := t.Intent.(*intent.Switch); ok {
		post, err := appliedJSON(c)
		if err != nil {
			return fail("verify (nv config show -o json)", err)
		}
		live, err := ReadConfigJSON([]byte(post), sw)
		if err != nil {
			return fail("verify", err)
		}
		desired := sw.Flatten()
		for _, p := range paths {
			want, wok := desired[p]
			have, hok := live[p]
			f, _ := intent.FieldFor(d.Fields(), p)
			if wok != hok || (wok && !f.Equal(want, have)) {
				return fail("verify", fmt.Errorf("after nv config apply %s reads %q, want %q", p, have, want))
			}
		}
	}
	d.mu.Lock()
	if d.prior == nil {
		d.prior = map[string]string{}
	}
	d.prior[rev] = pre
	d.mu.Unlock()
	return drivers.Result{Token: rev}, nil
}

// restore re-applies revision rev and checks the applied config is pre
// byte for byte.
func restore(c *sshtransport.Conn, rev, pre string) error {
	if _, err := c.Send("nv config apply " + rev + " -y"); err != nil {
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

// Confirm: NVUE has no commit-confirm in this driver; nothing is pending.
func (d *Driver) Confirm(context.Context, drivers.Target, drivers.Result) error { return nil }

// Rollback re-applies the revision recorded before the apply.
func (d *Driver) Rollback(ctx context.Context, t drivers.Target, r drivers.Result) error {
	if r.Token == "" {
		return nil
	}
	d.mu.Lock()
	pre, ok := d.prior[r.Token]
	d.mu.Unlock()
	if !ok {
		return fmt.Errorf("%s: no prior revision recorded for transaction %s in this run", t.Device.Name, r.Token)
	}
	c, err := d.dial(ctx, t)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Send("nv config detach"); err != nil {
		return &stepError{Device: t.Device.Name, Step: "nv config detach (rollback)", Err: err}
	}
	if err := restore(c, r.Token, pre); err != nil {
		return &stepError{Device: t.Device.Name, Step: "nv config apply " + r.Token + " -y (rollback)", Err: err}
	}
	return nil
}
