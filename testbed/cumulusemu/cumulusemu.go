// Package cumulusemu is a stateful SSH emulator of an NVIDIA Cumulus
// Linux 5.x switch's NVUE CLI, written from NVIDIA's documentation
// (CumulusNetworks/docs cumulus-linux-5x: NVUE CLI / Configuration
// Management Commands, Quality of Service, RDMA over Converged Ethernet
// (RoCE); see shared/reference/switches.md §2.2), not from fabctl's
// renderer:
//
//   - the bash login prompt "cumulus@leaf:mgmt:~$ " (scrapligo's
//     cumulus_linux pattern user@host:vrf:path$);
//   - `nv set …` / `nv unset …` stage into the user's pending revision
//     (unknown keyword: "Invalid Command", bad value: "Error: …");
//   - `nv config diff` prints the pending changes as YAML (- set: / - unset:);
//   - `nv config apply -y` validates the whole pending revision and
//     either applies it as a new revision or prints "Error: …" and
//     applies nothing (the pending revision stays until detached);
//   - `nv config apply <rev> -y` re-applies an earlier revision (rollback);
//   - `nv config history` lists applied revisions, newest first;
//   - `nv config detach` drops the pending revision;
//   - `nv config show -o json` prints the applied tree as JSON;
//   - `nv show qos roce` prints the RoCE summary with the hardware's
//     quantised ECN thresholds.
//
// Options.ECNQuantum emulates Spectrum buffer granularity: applied ECN
// thresholds are stored rounded down to a multiple of it (the reference:
// 150 KB is shown as 146.48 KB), so a driver must compare with tolerance.
// Faults (reject, drop before/after, hang) come from sshemu.
package cumulusemu

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fabctl/fabctl/testbed/sshemu"
)

// Options configure an emulated switch.
type Options struct {
	Hostname string // default "leaf"
	User     string // default "cumulus"
	Password string
	Ports    int // swp1..swpN exist (default 32)
	// ECNQuantum > 0 rounds applied ECN thresholds down to a multiple of
	// it (bytes).
	ECNQuantum int
	// ApplyLatency delays `nv config apply` (a real apply takes seconds).
	ApplyLatency time.Duration
	// ShowLatency delays every show command: a real switch takes
	// 0.3-1 s to answer show running-config (benchmarks state it).
	ShowLatency time.Duration
	Addr        string
}

// Revision is one applied revision.
type Revision struct {
	ID   int
	Tree map[string]any
	Note string
	When time.Time
}

// Switch is a running emulator.
type Switch struct {
	srv  *sshemu.Server
	opts Options

	mu      sync.Mutex
	applied map[string]any
	current int // revision id of the applied config
	history []Revision
	pending map[string]map[string]any // user -> pending tree
	nextRev int
	applies int
}

// Start starts the emulator on a loopback port.
func Start(opts Options) (*Switch, error) {
	sw := newSwitch(opts)
	opts = sw.opts
	srv, err := sshemu.Start(sshemu.Config{
		Addr:  opts.Addr,
		Users: map[string]string{opts.User: opts.Password},
		Banner: "Linux " + opts.Hostname + " 6.1.0-cl-1-amd64 #1 SMP Debian x86_64\n\n" +
			"Welcome to NVIDIA Cumulus (R) Linux (R)\n\n",
		NewShell: func(user string) sshemu.Shell { return &shell{sw: sw, user: user} },
		CommandLatency: func(line string) time.Duration {
			if strings.HasPrefix(line, "nv config apply") {
				return opts.ApplyLatency
			}
			if strings.HasPrefix(line, "nv show ") || strings.HasPrefix(line, "nv config show") {
				return opts.ShowLatency
			}
			return 0
		},
	})
	if err != nil {
		return nil, err
	}
	sw.srv = srv
	return sw, nil
}

// newSwitch is the switch state without its SSH server.
func newSwitch(opts Options) *Switch {
	if opts.Hostname == "" {
		opts.Hostname = "leaf"
	}
	if opts.User == "" {
		opts.User = "cumulus"
	}
	if opts.Ports == 0 {
		opts.Ports = 32
	}
	sw := &Switch{opts: opts, applied: map[string]any{}, pending: map[string]map[string]any{}}
	// Revision 1: the factory configuration (every port present).
	for i := 1; i <= opts.Ports; i++ {
		setPath(sw.applied, "interface.swp"+strconv.Itoa(i)+".link.state", "up")
	}
	sw.history = []Revision{{ID: 1, Tree: clone(sw.applied), Note: "startup", When: time.Now()}}
	sw.current, sw.nextRev = 1, 2
	return sw
}

// Close stops the emulator.
func (sw *Switch) Close() error { return sw.srv.Close() }

// Addr is the SSH address.
func (sw *Switch) Addr() string { return sw.srv.Addr() }

// KnownHostsLine is the known_hosts line for the emulator's host key.
func (sw *Switch) KnownHostsLine() string { return sw.srv.KnownHostsLine() }

// WriteKnownHosts writes a known_hosts file with the host key.
func (sw *Switch) WriteKnownHosts(path string) error { return sw.srv.WriteKnownHosts(path) }

// Inject adds a fault.
func (sw *Switch) Inject(f sshemu.Fault) { sw.srv.Inject(f) }

// Commands returns every line received.
func (sw *Switch) Commands() []string { return sw.srv.Commands() }

// AppliedJSON is `nv config show -o json`: the applied configuration.
func (sw *Switch) AppliedJSON() []byte {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return render(sw.applied)
}

// Pending reports whether any user has a pending revision.
func (sw *Switch) Pending() bool {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return len(sw.pending) > 0
}

// Applies counts successful `nv config apply` runs.
func (sw *Switch) Applies() int {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return sw.applies
}

// Edit changes the applied configuration by hand (drift), as a new
// revision, like an operator's `nv set … ; nv config apply`.
func (sw *Switch) Edit(fn func(tree map[string]any)) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	fn(sw.applied)
	sw.record("edit by hand")
}

// SetPath is a helper for Edit: sets "a.b.c" in tree.
func SetPath(tree map[string]any, path string, v any) { setPath(tree, path, v) }

func (sw *Switch) record(note string) {
	sw.current = sw.nextRev
	sw.nextRev++
	sw.history = append(sw.history, Revision{ID: sw.current, Tree: clone(sw.applied), Note: note, When: time.Now()})
}

func render(tree map[string]any) []byte {
	b, _ := json.MarshalIndent(tree, "", "  ")
	return append(b, '\n')
}

func clone(t map[string]any) map[string]any {
	out := make(map[string]any, len(t))
	for k, v := range t {
		if m, ok := v.(map[string]any); ok {
			out[k] = clone(m)
		} else {
			out[k] = v
		}
	}
	return out
}

func setPath(t map[string]any, path string, v any) {
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		m, ok := t[p].(map[string]any)
		if !ok {
			m = map[string]any{}
			t[p] = m
		}
		t = m
	}
	t[parts[len(parts)-1]] = v
}

func ensurePath(t map[string]any, path string) {
	for _, p := range strings.Split(path, ".") {
		m, ok := t[p].(map[string]any)
		if !ok {
			m = map[string]any{}
			t[p] = m
		}
		t = m
	}
}

// unsetPath removes a subtree and prunes empty parents; false when absent.
func unsetPath(t map[string]any, parts []string) bool {
	if len(parts) == 1 {
		_, ok := t[parts[0]]
		delete(t, parts[0])
		return ok
	}
	m, ok := t[parts[0]].(map[string]any)
	if !ok {
		return false
	}
	found := unsetPath(m, parts[1:])
	if len(m) == 0 {
		delete(t, parts[0])
	}
	return found
}

func getPath(t map[string]any, path string) (any, bool) {
	var cur any = t
	for _, p := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// shell is one login session.
type shell struct {
	sw   *Switch
	user string
}

func (s *shell) Prompt() string { return s.user + "@" + s.sw.opts.Hostname + ":mgmt:~$ " }

func (s *shell) Handle(line string) (string, bool) {
	toks := strings.Fields(line)
	if len(toks) == 0 {
		return "", false
	}
	switch toks[0] {
	case "exit", "logout":
		return "logout\n", true
	case "nv":
		return s.nv(toks[1:]), false
	case "hostname":
		return s.sw.opts.Hostname + "\n", false
	}
	return "-bash: " + toks[0] + ": command not found\n", false
}

const usage = "Usage:\n  nv [options] <command> ...\n\nInvalid Command\n"

func (s *shell) nv(a []string) string {
	if len(a) == 0 {
		return usage
	}
	sw := s.sw
	sw.mu.Lock()
	defer sw.mu.Unlock()
	switch a[0] {
	case "set", "unset":
		o, err := parse(a[1:], a[0] == "set")
		if err != nil {
			var ic errInvalidCommand
			if e, ok := err.(errInvalidCommand); ok {
				ic = e
				return "Invalid Command: nv " + a[0] + " " + strings.Join(a[1:], " ") + "\n" +
					"  near: " + ic.near + "\n"
			}
			return err.Error() + "\n"
		}
		p := sw.pendingFor(s.user)
		if a[0] == "unset" {
			unsetPath(p, strings.Split(o.path, "."))
			return ""
		}
		for _, pp := range o.presence {
			ensurePath(p, pp)
		}
		for k, v := range o.sets {
			setPath(p, k, v)
		}
		return ""
	case "config":
		return s.config(a[1:])
	case "show":
		if len(a) >= 3 && a[1] == "qos" && a[2] == "roce" {
			return sw.showRoCE()
		}
		return "Invalid Command: nv " + strings.Join(a, " ") + "\n"
	}
	return "Invalid Command: nv " + strings.Join(a, " ") + "\n"
}

func (sw *Switch) pendingFor(user string) map[string]any {
	p, ok := sw.pending[user]
	if !ok {
		p = clone(sw.applied)
		sw.pending[user] = p
	}
	return p
}

func hasFlag(a []string, f string) bool {
	for _, x := range a {
		if x == f {
			return true
		}
	}
	return false
}

func (s *shell) config(a []string) string {
	sw := s.sw
	if len(a) == 0 {
		return "Invalid Command: nv config\n"
	}
	switch a[0] {
	case "detach":
		delete(sw.pending, s.user)
		return ""
	case "diff":
		p, ok := sw.pending[s.user]
		if !ok {
			return ""
		}
		return diffYAML(sw.applied, p)
	case "show":
		if hasFlag(a, "json") {
			return string(render(sw.applied))
		}
		return diffYAML(map[string]any{}, sw.applied)
	case "history":
		var b strings.Builder
		b.WriteString("Rev ID  Apply date           User     Message\n")
		b.WriteString("------  -------------------  -------  -------\n")
		for i := len(sw.history) - 1; i >= 0; i-- {
			r := sw.history[i]
			fmt.Fprintf(&b, "%-6d  %s  %-7s  %s\n", r.ID, r.When.UTC().Format("2006-01-02 15:04:05"), s.user, r.Note)
		}
		return b.String()
	case "apply":
		args := a[1:]
		var rev string
		for _, x := range args {
			if !strings.HasPrefix(x, "-") {
				rev = x
			}
		}
		if !hasFlag(args, "-y") && !hasFlag(args, "--assume-yes") {
			return "Error: apply needs confirmation; rerun with -y (no terminal to ask on)\n"
		}
		if rev != "" {
			id, err := strconv.Atoi(rev)
			if err != nil {
				return "Error: revision '" + rev + "' does not exist\n"
			}
			for _, r := range sw.history {
				if r.ID == id {
					sw.applied = clone(r.Tree)
					sw.record("rollback to revision " + rev)
					sw.applies++
					delete(sw.pending, s.user)
					return fmt.Sprintf("applied [rev_id: %d]\n", sw.current)
				}
			}
			return "Error: revision '" + rev + "' does not exist\n"
		}
		p, ok := sw.pending[s.user]
		if !ok || bytes.Equal(render(p), render(sw.applied)) {
			delete(sw.pending, s.user)
			return "Warning: The applied revision has no changes; nothing to apply\n"
		}
		if err := sw.validate(p); err != nil {
			return "Error: Config invalid at " + err.Error() + "\napply failed, the applied revision is unchanged\n"
		}
		next := clone(p)
		sw.quantise(next)
		sw.applied = next
		sw.record("")
		sw.applies++
		delete(sw.pending, s.user)
		return fmt.Sprintf("applied [rev_id: %d]\n", sw.current)
	}
	return "Invalid Command: nv config " + strings.Join(a, " ") + "\n"
}

func asInt(v any) int {
	switch x := v.(type) {
	case int:
		return x
	case float64:
		return int(x)
	}
	return 0
}

// validate is the apply-time check of the whole tree (what the schema
// cannot see on one line).
func (sw *Switch) validate(t map[string]any) error {
	if ifs, ok := t["interface"].(map[string]any); ok {
		for name := range ifs {
			// swpN or a breakout swpNsM: the front-panel port is N.
			num := strings.TrimPrefix(name, "swp")
			if i := strings.IndexByte(num, 's'); i >= 0 {
				num = num[:i]
			}
			n, _ := strconv.Atoi(num)
			if !strings.HasPrefix(name, "swp") || n < 1 || n > sw.opts.Ports {
				return fmt.Errorf("interface.%s: interface %s does not exist on this platform", name, name)
			}
			for _, kind := range []string{"pfc", "mapping"} {
				ref, ok := getPath(t, "interface."+name+".qos."+kind+".profile")
				if !ok {
					continue
				}
				if _, ok := getPath(t, "qos."+kind+"."+fmt.Sprint(ref)); !ok && ref != "default-global" {
					return fmt.Errorf("interface.%s.qos.%s.profile: %s profile %v does not exist", name, kind, kind, ref)
				}
			}
		}
	}
	if tcs, ok := getPath(t, "qos.congestion-control.default-global.traffic-class"); ok {
		for tc, v := range tcs.(map[string]any) {
			m := v.(map[string]any)
			lo, hi := asInt(m["min-threshold"]), asInt(m["max-threshold"])
			if _, ok := m["min-threshold"]; ok && hi > 0 && lo > hi {
				return fmt.Errorf("qos.congestion-control.default-global.traffic-class.%s: min-threshold %d is greater than max-threshold %d", tc, lo, hi)
			}
		}
	}
	if tcs, ok := getPath(t, "qos.egress-scheduler.default-global.traffic-class"); ok {
		sum := 0
		for _, v := range tcs.(map[string]any) {
			m := v.(map[string]any)
			if m["mode"] != "strict" {
				sum += asInt(m["bw-percent"])
			}
		}
		if sum > 100 {
			return fmt.Errorf("qos.egress-scheduler.default-global: the dwrr bw-percent of all traffic classes add up to %d, more than 100", sum)
		}
	}
	return nil
}

func (sw *Switch) quantise(t map[string]any) {
	q := sw.opts.ECNQuantum
	if q <= 0 {
		return
	}
	tcs, ok := getPath(t, "qos.congestion-control.default-global.traffic-class")
	if !ok {
		return
	}
	for _, v := range tcs.(map[string]any) {
		m := v.(map[string]any)
		for _, k := range []string{"min-threshold", "max-threshold"} {
			if x, ok := m[k]; ok {
				m[k] = asInt(x) / q * q
			}
		}
	}
}

// showRoCE is `nv show qos roce` (summary only).
func (sw *Switch) showRoCE() string {
	mode, _ := getPath(sw.applied, "qos.roce.mode")
	en, _ := getPath(sw.applied, "qos.roce.enable")
	if en != "on" {
		return "                    operational  applied\n------------------  -----------  -------\nenable              off          off\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "                    operational  applied\n------------------  -----------  -------\nenable              on           on\nmode                %-11v  %v\n", mode, mode)
	if tcs, ok := getPath(sw.applied, "qos.congestion-control.default-global.traffic-class"); ok {
		for _, tc := range sortedKeys(tcs.(map[string]any)) {
			m := tcs.(map[string]any)[tc].(map[string]any)
			fmt.Fprintf(&b, "congestion-control traffic-class %s min-threshold %.2f KB max-threshold %.2f KB\n", tc,
				float64(asInt(m["min-threshold"]))/1024, float64(asInt(m["max-threshold"]))/1024)
		}
	}
	return b.String()
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		a, ea := strconv.Atoi(out[i])
		b, eb := strconv.Atoi(out[j])
		if ea == nil && eb == nil {
			return a < b
		}
		return out[i] < out[j]
	})
	return out
}

// diffYAML renders the changes from a to b like `nv config diff`:
//
//   - set:
//     qos:
//     ...
//   - unset:
//     ...
func diffYAML(a, b map[string]any) string {
	set := subtract(b, a)
	unset := subtract(a, b)
	var out strings.Builder
	if len(set) > 0 {
		out.WriteString("- set:\n")
		writeYAML(&out, set, 4)
	}
	if len(unset) > 0 {
		out.WriteString("- unset:\n")
		writeYAML(&out, unset, 4)
	}
	return out.String()
}

// subtract is what b holds that a does not (leaves that differ, and
// subtrees absent from a).
func subtract(b, a map[string]any) map[string]any {
	out := map[string]any{}
	for k, bv := range b {
		av, ok := a[k]
		bm, bIsMap := bv.(map[string]any)
		am, aIsMap := av.(map[string]any)
		switch {
		case !ok:
			out[k] = bv
		case bIsMap && aIsMap:
			if d := subtract(bm, am); len(d) > 0 {
				out[k] = d
			}
		case fmt.Sprint(av) != fmt.Sprint(bv):
			out[k] = bv
		}
	}
	return out
}

func writeYAML(b *strings.Builder, m map[string]any, indent int) {
	pad := strings.Repeat(" ", indent)
	for _, k := range sortedKeys(m) {
		switch v := m[k].(type) {
		case map[string]any:
			if len(v) == 0 {
				fmt.Fprintf(b, "%s%s: {}\n", pad, k)
				continue
			}
			fmt.Fprintf(b, "%s%s:\n", pad, k)
			writeYAML(b, v, indent+2)
		default:
			fmt.Fprintf(b, "%s%s: %v\n", pad, k, v)
		}
	}
}
