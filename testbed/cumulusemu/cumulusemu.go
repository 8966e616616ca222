// Package cumulusemu is a stateful SSH emulator of an NVIDIA Cumulus
// Linux 5.14 switch's NVUE CLI (the version of the corpus
// testdata/vendor/cumulus/, which names its CumulusNetworks/docs commits;
// wording differs between 5.x releases), written from NVIDIA's
// documentation, not from fabctl's renderer. What it does and where each
// behaviour comes from (files in testdata/vendor/cumulus/):
//
//   - the bash login prompt "cumulus@leaf:mgmt:~$ " (the guide's prompt
//     cumulus@leaf01:mgmt:~$, nvue-reference-config.txt; scrapligo's
//     cumulus_linux pattern user@host:vrf:path$);
//   - `nv set …` / `nv unset …` stage into the user's pending revision,
//     one attribute and one value per command (schema.go);
//   - `nv config diff` prints the pending changes as YAML (- set: / - unset:),
//     `nv config diff applied startup` the difference between the applied
//     and the startup configuration (NVUE-CLI.md "View Differences Between
//     Configurations"; nvue-cli-514.txt:19);
//   - `nv config apply [<rev>] {--assume-yes|--y}` (nvue-cli-514.txt:12,
//     nvue-reference-config.txt:8-11) validates the whole pending revision
//     and applies it or prints "Error: …" and applies nothing; <rev> is a
//     revision number or applied, startup, empty;
//   - auto-save: with `system config auto-save state` enabled (the CL 5.9+
//     default, nvue-reference-config.txt:6) an apply also writes startup;
//     disabled, only `nv config save` does (nvue-cli-514.txt:23-31);
//   - `nv config save` overwrites startup with the applied configuration
//     (nvue-cli-514.txt:23);
//   - `nv config detach` parks the pending revision under its number
//     (nvue-cli-514.txt:17-18): the number is used up, the next `nv set`
//     opens a new pending revision with a new number, so applied revision
//     numbers have gaps;
//   - `nv config revision` (the NVUE reference's table,
//     nvue-reference-config.txt:15-21), `nv config history` (table)
//     and `nv config history --output json` (NVOS's object keyed
//     rev_<N>_apply_<M>, nvue-config-show-json.txt:14-32: no Cumulus
//     Linux sample; the driver reads the revision table);
//   - `nv config show -o json` prints the applied configuration as the
//     documented list [{"header": {...}}, {"set": {...}}]
//     (nvue-config-show-json.txt:44-46; the YAML head nvue-cli-514.txt:32-38);
//   - `nv show qos roce` prints the RoCE summary with the hardware's
//     quantised ECN thresholds (roce-514.txt:12-27);
//   - `nv show interface <swpN> counters qos` prints the counters a test
//     sets with SetCounters in the guide's layout (counters.go,
//     show-counters-qos.txt).
//
// Not emulated: `nv config apply --confirm` (documented, but the command
// that confirms it is not in NVIDIA's material, confirm.txt), identifier
// lists and ranges (documented), `nv config revision`.
//
// Options.ECNQuantum emulates Spectrum buffer granularity: applied ECN
// thresholds are stored rounded down to a multiple of it (roce-514.txt:25:
// 150000 B shows as 146.48 KB), so a driver must compare with tolerance.
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

	"github.com/fabctl/fabctl/testbed/portlink"
	"github.com/fabctl/fabctl/testbed/sshemu"
)

// Version is the Cumulus Linux release the emulator speaks.
const Version = "Cumulus Linux 5.14.0"

// Options configure an emulated switch.
type Options struct {
	Hostname string // default "leaf"
	User     string // default "cumulus"
	Password string
	Ports    int // swp1..swpN exist (default 32)
	// AutoSave is the factory `system config auto-save state`: "" is the
	// CL 5.9+ default (enabled: every apply also saves), "disabled" as an
	// operator sets it with `nv set system config auto-save state disabled`
	// (nvue-cli-514.txt:27), after which only `nv config save` saves.
	AutoSave string
	// ECNQuantum > 0 rounds applied ECN thresholds down to a multiple of
	// it (bytes).
	ECNQuantum int
	// ApplyLatency delays `nv config apply` (a real apply takes seconds).
	ApplyLatency time.Duration
	// ShowLatency delays every show command: a real switch takes
	// 0.3-1 s to answer show running-config (benchmarks state it).
	ShowLatency time.Duration
	Addr        string
	// Links is the switch's cabling: `nv show interface -o json` answers
	// from it (links.go). nil: every port down, no neighbours.
	Links portlink.Source
}

// Revision is one apply of a revision: NVUE's history lists every apply
// (rev_<ID>_apply_<Apply>).
type Revision struct {
	ID    int
	Apply int
	Tree  map[string]any
	Note  string
	When  time.Time
}

// pendingRev is a user's pending (or detached) revision.
type pendingRev struct {
	id   int
	tree map[string]any
}

// Switch is a running emulator.
type Switch struct {
	srv  *sshemu.Server
	opts Options

	mu       sync.Mutex
	applied  map[string]any
	startup  map[string]any
	history  []Revision
	pending  map[string]*pendingRev // user -> pending revision
	detached map[int]map[string]any
	nextRev  int
	applies  int
	failSave string
	clock    time.Time                // history dates: one second per apply, strictly increasing
	counters map[string]*PortCounters // counters.go
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

// newSwitch is the switch state without its SSH server: the factory
// configuration, applied and saved, as revision 1.
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
	sw := &Switch{opts: opts, applied: map[string]any{}, pending: map[string]*pendingRev{}, detached: map[int]map[string]any{},
		clock: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	for i := 1; i <= opts.Ports; i++ {
		setPath(sw.applied, "interface.swp"+strconv.Itoa(i)+".link.state", "up")
	}
	if opts.AutoSave != "" {
		setPath(sw.applied, "system.config.auto-save.state", opts.AutoSave)
	}
	sw.nextRev = 1
	sw.record(sw.newRev(), "factory configuration")
	sw.startup = clone(sw.applied)
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

// ClearFaults removes every injected fault.
func (sw *Switch) ClearFaults() { sw.srv.ClearFaults() }

// Commands returns every line received.
func (sw *Switch) Commands() []string { return sw.srv.Commands() }

// AppliedJSON is `nv config show -o json`: the applied configuration.
func (sw *Switch) AppliedJSON() []byte { return sw.RunningConfig() }

// RunningConfig is the applied configuration as `nv config show -o json`
// prints it.
func (sw *Switch) RunningConfig() []byte {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return render(sw.applied)
}

// StartupConfig is the startup configuration (/etc/nvue.d/startup.yaml)
// in the same form.
func (sw *Switch) StartupConfig() []byte {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return render(sw.startup)
}

// Reload is a reboot: NVUE applies the startup configuration
// (NVUE-CLI.md "NVUE Configuration File": "NVUE applies the configuration
// in the /etc/nvue.d/startup.yaml file during system boot"); pending and
// detached revisions are gone.
func (sw *Switch) Reload() {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.applied = clone(sw.startup)
	sw.pending = map[string]*pendingRev{}
	sw.detached = map[int]map[string]any{}
	sw.record(sw.newRev(), "startup configuration applied at boot")
}

// FailSave makes `nv config save` print output and save nothing while
// output is not empty; "" clears it. NVIDIA documents no save error text:
// callers pass a plausible one.
func (sw *Switch) FailSave(output string) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.failSave = output
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
// revision, like an operator's `nv set … ; nv config apply` (saved when
// auto-save is enabled).
func (sw *Switch) Edit(fn func(tree map[string]any)) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	fn(sw.applied)
	sw.record(sw.newRev(), "edit by hand")
	sw.autoSave()
}

// SetPath is a helper for Edit: sets "a.b.c" in tree.
func SetPath(tree map[string]any, path string, v any) { setPath(tree, path, v) }

func (sw *Switch) newRev() int {
	id := sw.nextRev
	sw.nextRev++
	return id
}

// record adds an apply of revision id (the applied tree) to the history.
func (sw *Switch) record(id int, note string) {
	n := 1
	for _, r := range sw.history {
		if r.ID == id {
			n++
		}
	}
	sw.clock = sw.clock.Add(time.Second)
	sw.history = append(sw.history, Revision{ID: id, Apply: n, Tree: clone(sw.applied), Note: note, When: sw.clock})
}

// autoSaveOn: enabled unless the applied tree disables it (the CL 5.9+
// default is enabled, nvue-reference-config.txt:6).
func (sw *Switch) autoSaveOn() bool {
	v, _ := getPath(sw.applied, "system.config.auto-save.state")
	return v != "disabled"
}

func (sw *Switch) autoSave() {
	if sw.autoSaveOn() {
		sw.startup = clone(sw.applied)
	}
}

// render is `nv config show -o json`: the documented two-element list.
func render(tree map[string]any) []byte {
	doc := []any{
		map[string]any{"header": map[string]any{"model": "VX", "nvue-api-version": "nvue_v1", "rev-id": "1.0", "version": Version}},
		map[string]any{"set": tree},
	}
	b, _ := json.MarshalIndent(doc, "", "  ")
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

func invalid(a []string) string { return "Error: Invalid Command: nv " + strings.Join(a, " ") + "\n" }

func (s *shell) nv(a []string) string {
	if len(a) == 0 {
		return invalid(a)
	}
	sw := s.sw
	sw.mu.Lock()
	defer sw.mu.Unlock()
	switch a[0] {
	case "set", "unset":
		o, err := parse(a[1:], a[0] == "set")
		if err != nil {
			return err.Error() + "\n"
		}
		p := sw.pendingFor(s.user).tree
		switch {
		case a[0] == "unset":
			unsetPath(p, strings.Split(o.path, "."))
		case o.presence == "qos.roce":
			// `nv set qos roce` is `nv set qos roce mode lossless`; the
			// applied tree shows enable on (roce-514.txt:8,10,15).
			setPath(p, "qos.roce.enable", "on")
			setPath(p, "qos.roce.mode", "lossless")
		case o.presence != "":
			ensurePath(p, o.presence)
		default:
			if o.set == "qos.roce.mode" {
				setPath(p, "qos.roce.enable", "on")
			}
			setPath(p, o.set, o.value)
		}
		return ""
	case "config":
		return s.config(a[1:])
	case "show":
		if len(a) == 3 && a[1] == "qos" && a[2] == "roce" {
			return sw.showRoCE()
		}
		if out, ok := sw.showCountersQoS(a); ok { // counters.go
			return out
		}
		if len(a) == 4 && a[1] == "interface" && a[2] == "-o" && a[3] == "json" {
			return sw.showInterfaceJSON() // links.go
		}
	}
	return invalid(a)
}

func (sw *Switch) pendingFor(user string) *pendingRev {
	p, ok := sw.pending[user]
	if !ok {
		p = &pendingRev{id: sw.newRev(), tree: clone(sw.applied)}
		sw.pending[user] = p
	}
	return p
}

// outputJSON reports `-o json` / `--output json` and returns the other
// arguments.
func outputJSON(a []string) (bool, []string, bool) {
	var rest []string
	js := false
	for i := 0; i < len(a); i++ {
		if a[i] == "-o" || a[i] == "--output" {
			if i+1 >= len(a) || a[i+1] != "json" {
				return false, nil, false
			}
			js = true
			i++
			continue
		}
		rest = append(rest, a[i])
	}
	return js, rest, true
}

// named resolves a revision name for diff/apply: applied, startup, empty
// (nvue-reference-config.txt:10), a detached or an applied revision number.
func (sw *Switch) named(rev string) (map[string]any, bool) {
	switch rev {
	case "applied":
		return sw.applied, true
	case "startup":
		return sw.startup, true
	case "empty":
		return map[string]any{}, true
	}
	id, err := strconv.Atoi(rev)
	if err != nil {
		return nil, false
	}
	if t, ok := sw.detached[id]; ok {
		return t, true
	}
	for i := len(sw.history) - 1; i >= 0; i-- {
		if sw.history[i].ID == id {
			return sw.history[i].Tree, true
		}
	}
	return nil, false
}

func (s *shell) config(a []string) string {
	sw := s.sw
	if len(a) == 0 {
		return invalid([]string{"config"})
	}
	switch a[0] {
	case "detach":
		if len(a) != 1 {
			break
		}
		if p, ok := sw.pending[s.user]; ok {
			sw.detached[p.id] = p.tree
			delete(sw.pending, s.user)
		}
		return ""
	case "diff":
		switch len(a) {
		case 1:
			p, ok := sw.pending[s.user]
			if !ok {
				return ""
			}
			return diffYAML(sw.applied, p.tree)
		case 3:
			from, ok1 := sw.named(a[1])
			to, ok2 := sw.named(a[2])
			if !ok1 || !ok2 {
				return "Error: revision does not exist\n" // plausible wording
			}
			return diffYAML(from, to)
		}
	case "show":
		js, rest, ok := outputJSON(a[1:])
		if !ok || len(rest) != 0 {
			break
		}
		if js {
			return string(render(sw.applied))
		}
		return diffYAML(map[string]any{}, sw.applied)
	case "save":
		if len(a) != 1 {
			break
		}
		if sw.failSave != "" {
			return strings.TrimSuffix(sw.failSave, "\n") + "\n"
		}
		sw.startup = clone(sw.applied)
		return ""
	case "revision":
		if len(a) != 1 {
			break
		}
		return sw.revisionTable(s.user)
	case "history":
		js, rest, ok := outputJSON(a[1:])
		if !ok || len(rest) != 0 {
			break
		}
		if js {
			return sw.historyJSON()
		}
		var b strings.Builder
		b.WriteString("Rev ID  Apply date           User     Message\n")
		b.WriteString("------  -------------------  -------  -------\n")
		for i := len(sw.history) - 1; i >= 0; i-- {
			r := sw.history[i]
			fmt.Fprintf(&b, "%-6d  %s  %-7s  %s\n", r.ID, r.When.Format("2006-01-02 15:04:05"), s.user, r.Note)
		}
		return b.String()
	case "apply":
		return s.apply(a[1:])
	}
	return invalid(append([]string{"config"}, a...))
}

// revisionTable is `nv config revision` (CL 5.5 and later), in the
// layout of NVIDIA's NVUE command reference (nvue-reference-config.txt:
// 16-21): one row per applied revision, oldest first, with its latest
// apply (rev_<ID>_apply_<N>) and that apply's date. The state is
// "applied_and_saved" as the reference prints it with auto-save on (its
// CL 5.9+ default); "applied" with auto-save off is PLAUSIBLE (the
// reference shows no such row).
func (sw *Switch) revisionTable(user string) string {
	last := map[int]Revision{}
	var ids []int
	for _, r := range sw.history {
		if _, ok := last[r.ID]; !ok {
			ids = append(ids, r.ID)
		}
		last[r.ID] = r
	}
	sort.Ints(ids)
	state := "applied"
	if sw.autoSaveOn() {
		state = "applied_and_saved"
	}
	var b strings.Builder
	row := func(cols ...string) {
		fmt.Fprintf(&b, "%-20s  %-17s  %-32s  %-19s  %-8s  %-7s  %-13s  %s\n", cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], cols[6], cols[7])
	}
	row("Rev ID", "State", "Apply ID", "Apply Date", "Type", "User", "Reason", "Message")
	row(strings.Repeat("-", 20), strings.Repeat("-", 17), strings.Repeat("-", 32), strings.Repeat("-", 19), strings.Repeat("-", 8), strings.Repeat("-", 7), strings.Repeat("-", 13), strings.Repeat("-", 31))
	for _, id := range ids {
		r := last[id]
		row(strconv.Itoa(id), state, fmt.Sprintf("rev_%d_apply_%d", r.ID, r.Apply), r.When.Format("2006-01-02 15:04:05"), "CLI", user, "Config update", "Config update by "+user)
	}
	return b.String()
}

// historyJSON is `nv config history --output json`: an object keyed
// rev_<ID>_apply_<N> (nvue-config-show-json.txt:14-32).
func (sw *Switch) historyJSON() string {
	out := map[string]any{}
	for _, r := range sw.history {
		out[fmt.Sprintf("rev_%d_apply_%d", r.ID, r.Apply)] = map[string]any{
			"date": r.When.Format("2006-01-02 15:04:05"), "interface": "CLI", "message": "Config update by " + sw.opts.User,
			"reason": "Config update", "rev-id": strconv.Itoa(r.ID), "user": sw.opts.User,
		}
	}
	b, _ := json.MarshalIndent(out, "", "    ")
	return string(b) + "\n"
}

// apply is `nv config apply [<rev>] {--assume-yes|--y}`
// (nvue-cli-514.txt:12; nvue-reference-config.txt:8-11).
func (s *shell) apply(args []string) string {
	sw := s.sw
	var rev string
	yes := false
	for _, x := range args {
		switch {
		case x == "--assume-yes" || x == "--y":
			yes = true
		case strings.HasPrefix(x, "-"):
			// --confirm is documented but not emulated (confirm.txt: the
			// confirming command is not in NVIDIA's material).
			return invalid(append([]string{"config", "apply"}, args...))
		case rev != "":
			return invalid(append([]string{"config", "apply"}, args...))
		default:
			rev = x
		}
	}
	if !yes {
		// The emulator has no terminal to prompt on.
		return "Error: apply needs confirmation; rerun with --assume-yes\n" // plausible wording
	}
	if rev != "" {
		t, ok := sw.named(rev)
		if !ok {
			return "Error: revision '" + rev + "' does not exist\n" // plausible wording
		}
		id, err := strconv.Atoi(rev)
		if err != nil {
			id = sw.newRev()
		}
		sw.applied = clone(t)
		sw.record(id, "apply revision "+rev)
		sw.applies++
		sw.autoSave()
		delete(sw.pending, s.user)
		return fmt.Sprintf("applied [rev_id: %d]\n", id)
	}
	p, ok := sw.pending[s.user]
	if !ok || bytes.Equal(render(p.tree), render(sw.applied)) {
		delete(sw.pending, s.user)
		return "Warning: The applied revision has no changes; nothing to apply\n" // plausible wording
	}
	if err := sw.validate(p.tree); err != nil {
		return "Error: Config invalid at " + err.Error() + "\napply failed, the applied revision is unchanged\n" // plausible wording
	}
	next := clone(p.tree)
	sw.quantise(next)
	sw.applied = next
	sw.record(p.id, "")
	sw.applies++
	sw.autoSave()
	delete(sw.pending, s.user)
	return fmt.Sprintf("applied [rev_id: %d]\n", p.id)
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
