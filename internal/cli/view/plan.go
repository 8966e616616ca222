package view

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/plan"
)

// The plan views render a plan.Plan as human text (this file), JSON (plan_json.go)
// and markdown (plan_markdown.go). Each is a pure function of the plan and
// its options: same plan, same bytes. Nothing in a plan is a secret
// (credentials are references that drivers resolve when they connect),
// and the views print nothing that is not in the plan.

// Style colours human output. The zero Style is plain text; the CLI fills
// it with lipgloss styles when stdout is a colour terminal.
type Style struct {
	Add, Change, Remove, Disruptive, Warn, Error, Faint, Bold func(string) string
}

func apply(f func(string) string, s string) string {
	if f == nil {
		return s
	}
	return f(s)
}

// PlanOptions tune the human and markdown views.
type PlanOptions struct {
	// Command names the report in titles ("plan", the default, or
	// "drift").
	Command string
	// Verbose lists every changed setting, the settings accepted within
	// a tolerance, and the devices without changes; the default view is
	// compact: per device the counts and a few grouped lines.
	Verbose bool
	// ShowPayload lists each device's driver steps with their native
	// payload (CLI lines, gNMI paths, netlink operations).
	ShowPayload bool
	// Style colours the human view (zero: plain).
	Style Style
	// MaxLines bounds the lines per device in the compact view, not
	// counting disruptive changes, which are always listed (default 8).
	MaxLines int
}

func (o PlanOptions) maxLines() int {
	if o.MaxLines > 0 {
		return o.MaxLines
	}
	return 8
}

// countsPhrase is "1 to add, 2 to change, 0 to remove".
func countsPhrase(add, change, remove int) string {
	return fmt.Sprintf("%d to add, %d to change, %d to remove", add, change, remove)
}

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// FormatValue renders a setting's value: bare when it is a plain token
// (9000, 3,4, true, 200ms, 10.0.0.1/31), quoted otherwise (empty values,
// spaces, quotes, control characters).
func FormatValue(v string) string {
	if v == "" {
		return `""`
	}
	for _, r := range v {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("._:/,+-@%=*>", r):
		default:
			return strconv.Quote(v)
		}
	}
	return v
}

// ChangeLine renders one setting change without its marker column:
// "+ path = value", "~ path: old → new", "- path = value".
func ChangeLine(c intent.AttrChange) string {
	switch c.Action {
	case intent.Create:
		return fmt.Sprintf("+ %s = %s", c.Path, FormatValue(c.After))
	case intent.Delete:
		return fmt.Sprintf("- %s = %s", c.Path, FormatValue(c.Before))
	default:
		return fmt.Sprintf("~ %s: %s → %s", c.Path, FormatValue(c.Before), FormatValue(c.After))
	}
}

// driftLine renders a drifted setting. Drift compares what fabctl last
// applied (After) with what the device has now (Before).
func driftLine(c intent.AttrChange) string {
	if c.Action == intent.Create {
		return fmt.Sprintf("- %s: was %s, now absent", c.Path, FormatValue(c.After))
	}
	return fmt.Sprintf("~ %s: was %s, now %s", c.Path, FormatValue(c.After), FormatValue(c.Before))
}

func toleratedLine(c intent.AttrChange) string {
	return fmt.Sprintf("= %s: device has %s for %s (within the driver's tolerance)", c.Path, FormatValue(c.Before), FormatValue(c.After))
}

// deviceTitle is "switch.leaf1 (sonic)".
func deviceTitle(d *plan.DevicePlan) string {
	if d.Platform == "" {
		return d.Address
	}
	return fmt.Sprintf("%s (%s)", d.Address, d.Platform)
}

// settingShape generalises a setting's path over port and NIC names, so
// the same setting on many ports is one line in the compact view:
// "port/Ethernet1/1/pfc" is "port/*/pfc", "nic/eth0/tc/3/ecn/min" is
// "nic/*/tc/3/ecn/min"; it also returns the port or NIC name. Port names
// may contain '/' (Ethernet1/1) and port settings are one segment, so a
// port's name runs to the last '/'; NIC names (netdevs) have no '/'.
// Other paths are their own shape.
func settingShape(p string) (string, string) {
	first, rest, ok := strings.Cut(p, "/")
	if !ok {
		return p, ""
	}
	switch first {
	case "port":
		if j := strings.LastIndexByte(rest, '/'); j >= 0 {
			return "port/*/" + rest[j+1:], rest[:j]
		}
	case "nic":
		if name, tail, ok := strings.Cut(rest, "/"); ok {
			return "nic/*/" + tail, name
		}
	}
	return p, ""
}

// scopeOf is the parent a setting is grouped under in the compact view:
// its path without the setting, in shape form ("port/*", "nic/*/tc/3",
// "dscp", "" for top-level settings), and the port or NIC name.
func scopeOf(p string) (string, string) {
	s, name := settingShape(p)
	return parent(s), name
}

func parent(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

// compactLine is one line of the compact view: a single change, or a
// summary of a bucket of changes.
type compactLine struct {
	text       string
	action     intent.Action
	disruptive string
	settings   int
}

// bucket is changes shown together in the compact view: plain changes
// sharing a parent shape ("dscp", "tc/3", "port/*"), or disruptive
// changes sharing a shape, action and reason ("port/*/pfc").
type bucket struct {
	name       string // summary name, e.g. "dscp/*", "port/*/*", "port/*/pfc"
	disruptive string
	changes    []intent.AttrChange
	instances  map[string]bool // port / NIC names covered
	kind       string          // "port" or "nic" when instances is used
}

// compactLines condenses changes: a bucket of more than three changes
// becomes one summary line ("+ dscp/* (64 settings)", "! + port/*/pfc (64
// settings on 64 ports)"); smaller buckets list each change. Lines come
// in path order of each bucket's first change.
func compactLines(cs []intent.AttrChange) []compactLine {
	idx := map[string]int{}
	var buckets []*bucket
	for _, c := range cs {
		var key, name, inst string
		if c.Disruptive != "" {
			name, inst = settingShape(c.Path)
			key = "!" + string(c.Action) + name + "\x00" + c.Disruptive
		} else {
			par, in := scopeOf(c.Path)
			inst = in
			name = par + "/*"
			if par == "" {
				name = "*"
			}
			key = par
		}
		i, ok := idx[key]
		if !ok {
			i = len(buckets)
			idx[key] = i
			b := &bucket{name: name, disruptive: c.Disruptive, instances: map[string]bool{}}
			if k, _, _ := strings.Cut(c.Path, "/"); k == "port" || k == "nic" {
				b.kind = k
			}
			buckets = append(buckets, b)
		}
		b := buckets[i]
		b.changes = append(b.changes, c)
		if inst != "" {
			b.instances[inst] = true
		}
	}
	var out []compactLine
	for _, b := range buckets {
		if len(b.changes) <= 3 {
			for _, c := range b.changes {
				out = append(out, compactLine{text: ChangeLine(c), action: c.Action, disruptive: c.Disruptive, settings: 1})
			}
			continue
		}
		var add, change, remove int
		for _, c := range b.changes {
			switch c.Action {
			case intent.Create:
				add++
			case intent.Update:
				change++
			case intent.Delete:
				remove++
			}
		}
		n := len(b.changes)
		count := plural(n, "setting", "settings")
		if len(b.instances) == 1 {
			// One port or NIC: name it instead of the wildcard.
			for name := range b.instances {
				b.name = strings.Replace(b.name, "*", name, 1)
			}
		}
		if len(b.instances) > 1 {
			unit := map[string][2]string{"port": {"port", "ports"}, "nic": {"NIC", "NICs"}}[b.kind]
			count += " on " + plural(len(b.instances), unit[0], unit[1])
		}
		var text string
		var act intent.Action
		switch {
		case add == n:
			text, act = fmt.Sprintf("+ %s (%s)", b.name, count), intent.Create
		case remove == n:
			text, act = fmt.Sprintf("- %s (%s)", b.name, count), intent.Delete
		case change == n:
			text, act = fmt.Sprintf("~ %s (%s)", b.name, count), intent.Update
		default:
			var parts []string
			for _, p := range []struct {
				n    int
				verb string
			}{{add, "to add"}, {change, "to change"}, {remove, "to remove"}} {
				if p.n > 0 {
					parts = append(parts, fmt.Sprintf("%d %s", p.n, p.verb))
				}
			}
			text, act = fmt.Sprintf("~ %s (%s: %s)", b.name, count, strings.Join(parts, ", ")), intent.Update
		}
		out = append(out, compactLine{text: text, action: act, disruptive: b.disruptive, settings: n})
	}
	return out
}

func styleAction(st Style, a intent.Action, s string) string {
	switch a {
	case intent.Create:
		return apply(st.Add, s)
	case intent.Delete:
		return apply(st.Remove, s)
	default:
		return apply(st.Change, s)
	}
}

// humanWriter accumulates the first write error.
type humanWriter struct {
	w   io.Writer
	err error
}

func (h *humanWriter) line(format string, args ...any) {
	if h.err != nil {
		return
	}
	if len(args) == 0 {
		_, h.err = io.WriteString(h.w, format+"\n")
		return
	}
	_, h.err = fmt.Fprintf(h.w, format+"\n", args...)
}

// WritePlanHuman writes the Terraform-style plan: targeting warning, drift,
// per-device changes, devices that could not be read, the footer with
// counts and every disruptive change, and lint warnings.
func WritePlanHuman(w io.Writer, p *plan.Plan, o PlanOptions) error {
	h := &humanWriter{w: w}
	st := o.Style
	c := p.Counts()

	if p.Targeted() {
		writeTargetWarning(h, p, st)
	}
	// Errors first: a device that could not be read (a wrong password, an
	// unreachable switch) is what the reader must see before any change.
	if c.Errored > 0 {
		h.line("%s", apply(st.Error, "Not planned: these devices could not be read"))
		h.line("")
		for _, d := range p.Devices {
			if d.Error != "" {
				h.line("  %s %s: %s", apply(st.Error, "✘"), deviceTitle(d), d.Error)
			}
		}
		h.line("")
	}
	writeNotCarried(h, p, st)
	if c.Drifted > 0 {
		writeDrift(h, p, o)
	}
	if p.HasChanges() {
		h.line("fabctl compared the spec with the live state of %s. Symbols:", plural(len(p.Devices)-c.Errored, "device", "devices"))
		h.line("  %s add a setting", apply(st.Add, "+"))
		h.line("  %s change a setting", apply(st.Change, "~"))
		h.line("  %s remove a setting", apply(st.Remove, "-"))
		h.line("  %s disruptive: the change interrupts traffic on the device", apply(st.Disruptive, "!"))
		h.line("")
		if o.Command == "drift" {
			h.line("These settings differ from the spec (fabctl apply would make these changes):")
		} else {
			h.line("fabctl will make these changes:")
		}
		for _, d := range p.Devices {
			if d.Error != "" || !d.HasChanges() {
				continue
			}
			h.line("")
			writeDevice(h, d, o)
		}
		h.line("")
	}
	if o.Verbose {
		var same []*plan.DevicePlan
		for _, d := range p.Devices {
			if d.Error == "" && !d.HasChanges() {
				same = append(same, d)
			}
		}
		if len(same) > 0 {
			h.line("No changes on %s:", plural(len(same), "device", "devices"))
			for _, d := range same {
				line := fmt.Sprintf("  %s: %s match", deviceTitle(d), plural(len(d.Desired), "setting", "settings"))
				if n := len(d.Tolerated); n > 0 {
					line += fmt.Sprintf(" (%d within tolerance)", n)
				}
				h.line("%s", line)
				for _, t := range d.Tolerated {
					h.line("      %s", apply(st.Faint, toleratedLine(t)))
				}
			}
			h.line("")
		}
	}
	writeChecks(h, p, st)
	writeUnexpressible(h, p, o)
	writeUnmanaged(h, p, o)
	writeFindings(h, p, o)
	writeFooter(h, p, st, o.Command == "drift")
	writeDiagnostics(h, p, st)
	return h.err
}

// writeNotCarried is the error a plan opens with when devices cannot
// carry the intent: settings of a lossless, RDMA or CNP class that their
// platform cannot express and the spec does not accept.
func writeNotCarried(h *humanWriter, p *plan.Plan, st Style) {
	nc := p.NotCarried()
	if len(nc) == 0 {
		return
	}
	names := make([]string, len(nc))
	for i, d := range nc {
		names[i] = d.Address
	}
	h.line("%s", apply(st.Error, fmt.Sprintf("Error: %s cannot carry the intent: %s", plural(len(nc), "device", "devices"), strings.Join(names, ", "))))
	h.line("")
	for _, d := range nc {
		h.line("  %s %s: %s of a lossless, RDMA or CNP class not in effect", apply(st.Error, "✘"), deviceTitle(d), plural(len(d.NotCarried()), "setting", "settings"))
		for _, l := range plan.NotCarriedSummary(d, 6) {
			h.line("      %s", l)
		}
	}
	h.line("")
	h.line("  To go on: %s.", plan.AcceptHint)
	h.line("")
}

// writeUnexpressible reports the settings of the spec that their devices'
// platforms cannot express (not applied, so always mentioned): one summary
// line by default, every setting per device and reason under Verbose
// (the JSON view always lists them).
func writeUnexpressible(h *humanWriter, p *plan.Plan, o PlanOptions) {
	st := o.Style
	settings, devices, accepted := 0, 0, 0
	for _, d := range p.Devices {
		if d.Error == "" && len(d.Unexpressible) > 0 {
			settings += len(d.Unexpressible)
			accepted += len(d.Accepted())
			devices++
		}
	}
	if settings == 0 {
		return
	}
	if !o.Verbose {
		acc := ""
		if accepted > 0 {
			acc = fmt.Sprintf("; %d accepted by the spec, not in effect", accepted)
		}
		h.line("%s", apply(st.Warn, fmt.Sprintf("Not expressible: %s on %s (the spec asks for them; their platforms cannot apply them%s). %s lists them, --json has them.",
			plural(settings, "setting", "settings"), plural(devices, "device", "devices"), acc, verboseHint(o.Command))))
		h.line("")
		return
	}
	h.line("%s", apply(st.Warn, "Not expressible on these platforms (the spec asks for them; fabctl cannot apply them there):"))
	for _, d := range p.Devices {
		if d.Error != "" || len(d.Unexpressible) == 0 {
			continue
		}
		h.line("")
		h.line("  %s: %s", apply(st.Bold, deviceTitle(d)), plural(len(d.Unexpressible), "setting", "settings"))
		// Group by reason so a port-by-port setting is one line.
		byReason := map[string][]string{}
		var reasons []string
		for _, u := range d.Unexpressible {
			r := u.Reason
			if u.Accepted != "" {
				r += " [accepted, not in effect: " + u.Accepted + "]"
			}
			if _, ok := byReason[r]; !ok {
				reasons = append(reasons, r)
			}
			byReason[r] = append(byReason[r], u.Path)
		}
		sort.Strings(reasons)
		for _, r := range reasons {
			h.line("      %s: %s", strings.Join(byReason[r], ", "), r)
		}
	}
	h.line("")
}

// writeUnmanaged lists, per device, the settings the spec leaves as the
// devices run them (unmanaged) where the device's value is not what the
// spec would set: not changes, never sent, always mentioned. Verbose
// lists every line and counts those the device runs as the spec would.
func writeUnmanaged(h *humanWriter, p *plan.Plan, o PlanOptions) {
	st := o.Style
	settings, devices := p.UnmanagedCounts()
	same := 0
	if o.Verbose {
		for _, d := range p.Devices {
			if d.Error == "" {
				same += len(d.Unmanaged) - len(d.UnmanagedDiffering())
			}
		}
	}
	if settings == 0 && same == 0 {
		return
	}
	h.line("%s", apply(st.Warn, fmt.Sprintf("Unmanaged: %s on %s left as the devices run them (the spec's unmanaged: not changed, not checked):",
		plural(settings, "setting", "settings"), plural(devices, "device", "devices"))))
	const max = 8
	for _, d := range p.Devices {
		if d.Error != "" || len(d.Unmanaged) == 0 {
			continue
		}
		differing := d.UnmanagedDiffering()
		if len(differing) == 0 && !o.Verbose {
			continue
		}
		h.line("")
		h.line("  %s:", apply(st.Bold, deviceTitle(d)))
		for i, u := range differing {
			if !o.Verbose && i == max {
				h.line("      %s", apply(st.Faint, fmt.Sprintf("… and %d more (%s lists every setting)", len(differing)-max, verboseHint(o.Command))))
				break
			}
			h.line("      %s", u.Line())
		}
		if n := len(d.Unmanaged) - len(differing); o.Verbose && n > 0 {
			h.line("      %s", apply(st.Faint, fmt.Sprintf("(%s unmanaged, which the device runs as the spec would set %s)", plural(n, "more setting", "more settings"), pluralWord(n, "it", "them"))))
		}
	}
	h.line("")
}

// verboseHint names the command line that lists the unexpressible
// settings: drift's own -v, plan's for plan and apply.
func verboseHint(command string) string {
	if command == "drift" {
		return "fabctl drift -v"
	}
	return "fabctl plan -v"
}

// writeFindings lists the drivers' read-only findings per device (a
// PCIe link below its maximum, a NUMA mismatch): shown, never applied.
func writeFindings(h *humanWriter, p *plan.Plan, o PlanOptions) {
	st := o.Style
	any := false
	for _, d := range p.Devices {
		if d.Error != "" || len(d.Findings) == 0 {
			continue
		}
		if !any {
			h.line("%s", apply(st.Warn, "Findings (read-only: fabctl reports them, the spec does not change them):"))
			if p.Mismatched() {
				h.line("  %s marks what does not match the spec and no change fixes: repair the fabric (cables, links, nodes), then plan again.", apply(st.Error, "✘"))
			}
			any = true
		}
		h.line("")
		h.line("  %s:", apply(st.Bold, deviceTitle(d)))
		for _, f := range d.Findings {
			switch f.Severity {
			case drivers.SeverityError:
				h.line("      %s %s", apply(st.Error, "✘"), f.Message)
			case "info":
				h.line("      i %s", f.Message)
			default:
				h.line("      ! %s", f.Message)
			}
		}
	}
	if any {
		h.line("")
	}
}

func writeTargetWarning(h *humanWriter, p *plan.Plan, st Style) {
	h.line("%s", apply(st.Warn, "Warning: targeting is in effect"))
	h.line("")
	var sel []string
	for _, t := range p.Targets {
		sel = append(sel, "--target "+t)
	}
	for _, e := range p.Excludes {
		sel = append(sel, "--exclude "+e)
	}
	h.line("  This plan covers %d of the fabric's %s (%s).", len(p.Devices), plural(p.FabricDevices, "device", "devices"), strings.Join(sel, " "))
	h.line("  The other devices are not read, so changes and drift on them are not")
	h.line("  shown. Targeting is for exceptional cases, such as working around a")
	h.line("  device that is down; plan the whole fabric to see everything the spec")
	h.line("  changes.")
	h.line("")
}

func writeDrift(h *humanWriter, p *plan.Plan, o PlanOptions) {
	st := o.Style
	h.line("%s", apply(st.Bold, "Note: settings changed outside fabctl since the last apply"))
	h.line("")
	h.line("These settings differ from what fabctl last applied and verified. The")
	h.line("changes below set them back to the spec.")
	for _, d := range p.Devices {
		if d.Error != "" || len(d.Drift) == 0 {
			continue
		}
		h.line("")
		h.line("  %s %s: %s changed", apply(st.Change, "~"), apply(st.Bold, deviceTitle(d)), plural(len(d.Drift), "setting", "settings"))
		lines := d.Drift
		more := 0
		if !o.Verbose && len(lines) > o.maxLines() {
			more = len(lines) - o.maxLines()
			lines = lines[:o.maxLines()]
		}
		for _, c := range lines {
			h.line("      %s", apply(st.Change, driftLine(c)))
		}
		if more > 0 {
			h.line("      %s", apply(st.Faint, fmt.Sprintf("… %s more (--verbose lists every setting)", plural(more, "setting", "settings"))))
		}
	}
	h.line("")
}

func writeDevice(h *humanWriter, d *plan.DevicePlan, o PlanOptions) {
	st := o.Style
	dc := d.Counts()
	head := fmt.Sprintf("  %s %s: %s", apply(st.Change, "~"), apply(st.Bold, deviceTitle(d)), countsPhrase(dc.Add, dc.Change, dc.Remove))
	if dc.Disruptive > 0 {
		head += ", " + apply(st.Disruptive, plural(dc.Disruptive, "disruptive", "disruptive"))
	}
	h.line("%s", head)
	marker := func(disruptive string) string {
		if disruptive != "" {
			return apply(st.Disruptive, "!")
		}
		return " "
	}
	reason := func(disruptive string) string {
		if disruptive == "" {
			return ""
		}
		return "   " + apply(st.Disruptive, "# disruptive: "+disruptive)
	}
	if o.Verbose {
		for _, c := range d.Changes {
			h.line("    %s %s%s", marker(c.Disruptive), styleAction(st, c.Action, ChangeLine(c)), reason(c.Disruptive))
		}
		for _, t := range d.Tolerated {
			h.line("      %s", apply(st.Faint, toleratedLine(t)))
		}
		h.line("      %s", apply(st.Faint, fmt.Sprintf("(%s unchanged)", plural(d.Unchanged(), "setting", "settings"))))
	} else {
		lines := compactLines(d.Changes)
		shown, hidden, hiddenSettings := 0, 0, 0
		for _, l := range lines {
			if l.disruptive == "" && shown >= o.maxLines() {
				hidden++
				hiddenSettings += l.settings
				continue
			}
			if l.disruptive == "" {
				shown++
			}
			h.line("    %s %s%s", marker(l.disruptive), styleAction(st, l.action, l.text), reason(l.disruptive))
		}
		if hidden > 0 {
			h.line("      %s", apply(st.Faint, fmt.Sprintf("… and %d more %s (--verbose lists every setting)",
				hiddenSettings, pluralWord(hiddenSettings, "setting", "settings"))))
		}
		if n := len(d.Tolerated); n > 0 {
			h.line("      %s", apply(st.Faint, fmt.Sprintf("(%s within the driver's tolerance: not changes; --verbose lists them)", plural(n, "setting", "settings"))))
		}
	}
	if o.ShowPayload {
		writeSteps(h, d, st)
	}
}

func writeSteps(h *humanWriter, d *plan.DevicePlan, st Style) {
	if len(d.Steps) == 0 {
		return
	}
	h.line("")
	h.line("      Payload (%s driver, %s):", d.Driver, plural(len(d.Steps), "step", "steps"))
	width := len(strconv.Itoa(len(d.Steps)))
	for i, s := range d.Steps {
		text := s.Summary
		if s.Disruptive != "" {
			text += "   " + apply(st.Disruptive, "# disruptive: "+s.Disruptive)
		}
		h.line("      %*d. %s", width, i+1, text)
		for _, p := range s.Payload {
			h.line("      %s    %s", strings.Repeat(" ", width), apply(st.Faint, p))
		}
	}
}

// disruptiveEntry is one disruptive change of a plan.
type disruptiveEntry struct {
	Address string
	Path    string
	Action  string
	Reason  string
}

// disruptiveList lists every disruptive change of the plan in device and
// path order.
func disruptiveList(p *plan.Plan) []disruptiveEntry {
	var out []disruptiveEntry
	for _, d := range p.Devices {
		if d.Error != "" {
			continue
		}
		for _, c := range d.Changes {
			if c.Disruptive != "" {
				out = append(out, disruptiveEntry{Address: d.Address, Path: c.Path, Action: string(c.Action), Reason: c.Disruptive})
			}
		}
	}
	return out
}

// disruptiveGroup is a device's disruptive changes with one reason.
type disruptiveGroup struct {
	Address string
	Reason  string
	Paths   []string
}

// disruptiveGroups groups disruptiveList by device and reason, in order
// of first appearance.
func disruptiveGroups(p *plan.Plan) []disruptiveGroup {
	var out []disruptiveGroup
	idx := map[[2]string]int{}
	for _, e := range disruptiveList(p) {
		k := [2]string{e.Address, e.Reason}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, disruptiveGroup{Address: e.Address, Reason: e.Reason})
		}
		out[i].Paths = append(out[i].Paths, e.Path)
	}
	return out
}

// wrapList joins items with ", " into lines of at most width bytes (an
// item longer than width gets a line of its own).
func wrapList(items []string, width int) []string {
	var lines []string
	cur := ""
	for i, it := range items {
		if i < len(items)-1 {
			it += ","
		}
		switch {
		case cur == "":
			cur = it
		case len(cur)+1+len(it) > width:
			lines = append(lines, cur)
			cur = it
		default:
			cur += " " + it
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

func writeFooter(h *humanWriter, p *plan.Plan, st Style, drift bool) {
	c := p.Counts()
	planned := len(p.Devices) - c.Errored
	switch {
	case c.Changed > 0 && drift:
		// drift reads only: the devices differ, nothing is planned.
		h.line("%s %d of %s differ from the spec (apply would set them back: %s).", apply(st.Bold, "Differs:"), c.Changed, plural(len(p.Devices), "device", "devices"), countsPhrase(c.Add, c.Change, c.Remove))
	case c.Changed > 0:
		h.line("%s %s on %d of %s.", apply(st.Bold, "Plan:"), countsPhrase(c.Add, c.Change, c.Remove), c.Changed, plural(len(p.Devices), "device", "devices"))
	case c.Errored > 0 && planned == 0:
		h.line("%s no device could be read.", apply(st.Bold, "Nothing planned:"))
	case c.Errored > 0:
		h.line("%s on the %s that could be read.", apply(st.Bold, "No changes"), plural(planned, "device", "devices"))
	case len(p.Devices) == 0:
		h.line("%s no device matched the selection.", apply(st.Bold, "No changes:"))
	case c.Mismatched > 0:
		h.line("%s but the fabric does not match the spec (see the findings above).", apply(st.Bold, "No changes,"))
	default:
		h.line("%s The fabric matches the spec on all %s.", apply(st.Bold, "No changes."), plural(planned, "device", "devices"))
	}
	if c.Mismatched > 0 {
		n := 0
		for _, d := range p.Devices {
			if d.Error == "" {
				n += len(d.Mismatches())
			}
		}
		h.line("%s %s on %s that no change fixes: the fabric does not match the spec after apply either.",
			apply(st.Error, "Mismatch:"), plural(n, "finding", "findings"), plural(c.Mismatched, "device", "devices"))
	}
	if notes := p.LinkNotes(); len(notes) > 0 {
		// Never ✔: a link nobody read is not a link that matches.
		h.line("%s", apply(st.Warn, "Links not checked:"))
		for _, n := range notes {
			h.line("  i %s", n)
		}
	}
	if c.Disruptive > 0 {
		verb := "interrupt"
		if c.Disruptive == 1 {
			verb = "interrupts"
		}
		h.line("%s %s %s traffic:", apply(st.Disruptive, "Disruptive:"), plural(c.Disruptive, "change", "changes"), verb)
		for _, g := range disruptiveGroups(p) {
			if len(g.Paths) == 1 {
				h.line("  %s %s %s: %s", apply(st.Disruptive, "!"), g.Address, g.Paths[0], g.Reason)
				continue
			}
			h.line("  %s %s, %s: %s", apply(st.Disruptive, "!"), g.Address, plural(len(g.Paths), "change", "changes"), g.Reason)
			for _, l := range wrapList(g.Paths, 88) {
				h.line("      %s", l)
			}
		}
	}
	if n, devs := p.UnmanagedCounts(); n > 0 {
		h.line("Unmanaged: %s on %s left as the devices run them (see above).", plural(n, "setting", "settings"), plural(devs, "device", "devices"))
	}
	if c.Drifted > 0 {
		h.line("Drift: %s changed outside fabctl since the last apply (see the note above).", plural(c.Drifted, "device", "devices"))
	}
	if c.Errored > 0 {
		var names []string
		for _, d := range p.Devices {
			if d.Error != "" {
				names = append(names, d.Address)
			}
		}
		h.line("%s %s could not be read: %s.", apply(st.Error, "Not planned:"), plural(c.Errored, "device", "devices"), strings.Join(names, ", "))
	}
	if p.Targeted() {
		h.line("%s this plan covers %d of %s.", apply(st.Warn, "Targeted:"), len(p.Devices), plural(p.FabricDevices, "device", "devices"))
	}
}

func writeDiagnostics(h *humanWriter, p *plan.Plan, st Style) {
	if len(p.Diagnostics) == 0 {
		return
	}
	for _, d := range p.Diagnostics {
		h.line("")
		title := "Warning: "
		style := st.Warn
		if d.Severity == "error" {
			title, style = "Error: ", st.Error
		}
		if d.Rule != "" {
			title += d.Rule + ": "
		}
		h.line("%s", apply(style, title+d.Summary))
		if d.Range != nil {
			where := fmt.Sprintf("  on %s line %d", d.Range.Filename, d.Range.Start.Line)
			if d.Address != "" {
				where += ", " + d.Address
			}
			h.line("%s:", where)
		} else if d.Address != "" {
			h.line("  on %s:", d.Address)
		}
		if d.Detail != "" {
			for _, l := range strings.Split(d.Detail, "\n") {
				h.line("  %s", l)
			}
		}
	}
	h.line("")
	h.line("%s from the spec's lint (fabctl validate --static shows them with source).", plural(len(p.Diagnostics), "finding", "findings"))
}
