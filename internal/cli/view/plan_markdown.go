package view

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/fabctl/fabctl/plan"
)

// WritePlanMarkdown writes the plan as GitHub-flavoured markdown for a pull
// request comment: a summary table, every disruptive change called out,
// per-device changes in <details> blocks (diff-highlighted), devices that
// could not be read, drift and lint findings. Like the human view it is
// compact by default (o.Verbose lists every setting) and lists steps with
// o.ShowPayload; o.Style is ignored. Changes come first and the settings
// the platforms cannot express last; a document longer than MarkdownLimit
// is cut at a section boundary with a notice saying so.
func WritePlanMarkdown(out io.Writer, p *plan.Plan, o PlanOptions) error {
	var buf bytes.Buffer
	h := &humanWriter{w: &buf}
	c := p.Counts()
	status := "no changes"
	switch {
	case c.Errored > 0:
		status = "incomplete: " + plural(c.Errored, "device", "devices") + " could not be read"
	case c.Changed > 0 && o.Command == "drift":
		status = "differs: " + countsPhrase(c.Add, c.Change, c.Remove)
	case c.Changed > 0:
		status = countsPhrase(c.Add, c.Change, c.Remove)
	}
	if c.Errored == 0 && c.Mismatched > 0 {
		status += "; the fabric does not match the spec"
	}
	cmd := o.Command
	if cmd == "" {
		cmd = "plan"
	}
	h.line("### fabctl %s: `%s` (%s)", cmd, mdCode(p.Fabric), status)
	h.line("")
	if cmd == "drift" {
		// drift reads only: the devices were read, and differ.
		h.line("| Devices read | Differ | To add | To change | To remove | Disruptive | Drifted | Not read |")
	} else {
		h.line("| Devices planned | Changed | To add | To change | To remove | Disruptive | Drifted | Not read |")
	}
	h.line("|---:|---:|---:|---:|---:|---:|---:|---:|")
	planned := fmt.Sprint(len(p.Devices))
	if p.Targeted() {
		planned = fmt.Sprintf("%d of %d", len(p.Devices), p.FabricDevices)
	}
	h.line("| %s | %d | %d | %d | %d | %d | %d | %d |", planned, c.Changed, c.Add, c.Change, c.Remove, c.Disruptive, c.Drifted, c.Errored)
	h.line("")
	if p.Targeted() {
		var sel []string
		for _, t := range p.Targets {
			sel = append(sel, "`--target "+mdCode(t)+"`")
		}
		for _, e := range p.Excludes {
			sel = append(sel, "`--exclude "+mdCode(e)+"`")
		}
		h.line("> [!WARNING]")
		h.line("> Targeting is in effect (%s): this plan covers %d of the fabric's %s; changes and drift on the others are not shown.",
			strings.Join(sel, " "), len(p.Devices), plural(p.FabricDevices, "device", "devices"))
		h.line("")
	}
	if c.Disruptive > 0 {
		verb := "interrupt"
		if c.Disruptive == 1 {
			verb = "interrupts"
		}
		h.line("> [!CAUTION]")
		h.line("> **%s %s traffic:**", plural(c.Disruptive, "disruptive change", "disruptive changes"), verb)
		for _, g := range disruptiveGroups(p) {
			paths := make([]string, len(g.Paths))
			for i, x := range g.Paths {
				paths[i] = "`" + mdCode(x) + "`"
			}
			h.line("> - `%s` %s: %s", mdCode(g.Address), strings.Join(paths, ", "), mdText(g.Reason))
		}
		h.line("")
	}
	if c.Mismatched > 0 {
		h.line("> [!CAUTION]")
		h.line("> **The fabric does not match the spec, and no change fixes it:** repair the fabric (cables, links, nodes), then plan again.")
		for _, d := range p.Devices {
			if d.Error != "" {
				continue
			}
			for _, f := range d.Mismatches() {
				h.line("> - `%s`: %s", mdCode(deviceTitle(d)), mdText(f.Message))
			}
		}
		h.line("")
	}
	if c.Errored > 0 {
		h.line("> [!IMPORTANT]")
		h.line("> **Not planned: %s could not be read.**", plural(c.Errored, "device", "devices"))
		for _, d := range p.Devices {
			if d.Error != "" {
				h.line("> - `%s`: %s", mdCode(deviceTitle(d)), mdText(d.Error))
			}
		}
		h.line("")
	}
	if nc := p.NotCarried(); len(nc) > 0 {
		h.line("> [!IMPORTANT]")
		h.line("> **%s cannot carry the intent** (settings of a lossless, RDMA or CNP class not in effect):", plural(len(nc), "device", "devices"))
		for _, d := range nc {
			h.line("> - `%s`: %s", mdCode(deviceTitle(d)), mdText(strings.Join(plan.NotCarriedSummary(d, 6), "; ")))
		}
		h.line("> ")
		h.line("> To go on: %s.", mdText(plan.AcceptHint))
		h.line("")
	}
	if ds := checkedDevices(p); len(ds) > 0 {
		if n := len(p.Refused()); n > 0 {
			h.line("> [!CAUTION]")
			h.line("> **%s refused the planned change** (the device's own non-committing check): fix the spec (or the device) and plan again; nothing was applied.", plural(n, "device", "devices"))
			h.line("")
		}
		h.line("#### Checked on the devices (`--check-on-device`, nothing committed)")
		h.line("")
		h.line("| Device | Verdict |")
		h.line("|---|---|")
		for _, d := range ds {
			h.line("| `%s` | %s |", mdCode(deviceTitle(d)), strings.ReplaceAll(mdText(checkLine(d)), "|", "\\|"))
		}
		h.line("")
	}
	if c.Drifted > 0 {
		h.line("#### Drift: changed outside fabctl since the last apply")
		h.line("")
		for _, d := range p.Devices {
			if d.Error != "" || len(d.Drift) == 0 {
				continue
			}
			h.line("<details><summary><code>%s</code>: %s changed</summary>", mdHTML(deviceTitle(d)), plural(len(d.Drift), "setting", "settings"))
			h.line("")
			h.line("```diff")
			for _, ch := range d.Drift {
				h.line("%s", mdFence(driftLine(ch)))
			}
			h.line("```")
			h.line("</details>")
			h.line("")
		}
	}
	if p.HasChanges() {
		if cmd == "drift" {
			h.line("#### Differences from the spec")
		} else {
			h.line("#### Changes")
		}
		h.line("")
		for _, d := range p.Devices {
			if d.Error != "" || !d.HasChanges() {
				continue
			}
			dc := d.Counts()
			sum := countsPhrase(dc.Add, dc.Change, dc.Remove)
			if dc.Disruptive > 0 {
				sum += fmt.Sprintf(", <b>%d disruptive</b>", dc.Disruptive)
			}
			h.line("<details><summary><code>%s</code>: %s</summary>", mdHTML(deviceTitle(d)), sum)
			h.line("")
			h.line("```diff")
			if o.Verbose {
				for _, ch := range d.Changes {
					h.line("%s", mdFence(mdChangeLine(ChangeLine(ch), ch.Disruptive)))
				}
				for _, t := range d.Tolerated {
					h.line("%s", mdFence("  "+toleratedLine(t)))
				}
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
					h.line("%s", mdFence(mdChangeLine(l.text, l.disruptive)))
				}
				if hidden > 0 {
					h.line("  … and %d more %s (fabctl plan --verbose lists every setting)", hiddenSettings, pluralWord(hiddenSettings, "setting", "settings"))
				}
				if n := len(d.Tolerated); n > 0 {
					h.line("  (%s within the driver's tolerance: not changes)", plural(n, "setting", "settings"))
				}
			}
			h.line("```")
			if o.ShowPayload && len(d.Steps) > 0 {
				h.line("")
				h.line("Payload (%s driver):", mdHTML(d.Driver))
				h.line("")
				h.line("```")
				for i, s := range d.Steps {
					h.line("%s", mdFence(fmt.Sprintf("# %d. %s", i+1, s.Summary)))
					for _, pl := range s.Payload {
						h.line("%s", mdFence(pl))
					}
				}
				h.line("```")
			}
			h.line("</details>")
			h.line("")
		}
	}
	if len(p.Diagnostics) > 0 {
		h.line("#### Lint findings")
		h.line("")
		for _, d := range p.Diagnostics {
			title := d.Summary
			if d.Rule != "" {
				title = d.Rule + ": " + title
			}
			where := ""
			if d.Range != nil {
				where = fmt.Sprintf(" (`%s` line %d)", mdCode(d.Range.Filename), d.Range.Start.Line)
			}
			h.line("- **%s** %s%s", d.Severity, mdText(title), where)
		}
		h.line("")
	}
	// Settings the platforms cannot express come last: they are not
	// changes, and on a large fabric they are the longest part.
	var unexpressed, unmanaged []mdDeviceList
	for _, d := range p.Devices {
		if d.Error != "" {
			continue
		}
		if len(d.Unexpressible) > 0 {
			var items []string
			for _, u := range d.Unexpressible {
				acc := ""
				if u.Accepted != "" {
					acc = " (accepted, not in effect: " + mdText(u.Accepted) + ")"
				}
				items = append(items, fmt.Sprintf("%s = %s: %s%s", mdCode(u.Path), mdCode(u.Value), mdText(u.Reason), acc))
			}
			unexpressed = append(unexpressed, mdDeviceList{d, items})
		}
		// Unmanaged settings that differ from the spec: left as the
		// devices run them.
		if differing := d.UnmanagedDiffering(); len(differing) > 0 {
			var items []string
			for _, u := range differing {
				items = append(items, fmt.Sprintf("%s: left as the device runs it (%s): %s", mdCode(u.Path), mdCode(u.LiveText()), mdText(u.Reason)))
			}
			unmanaged = append(unmanaged, mdDeviceList{d, items})
		}
	}
	h.detailsSection("Not expressible on these platforms",
		"The spec asks for these settings; the device's platform has no way to express them, so fabctl does not apply them there.", unexpressed)
	h.detailsSection("Unmanaged",
		"The spec leaves these settings as the devices run them (`unmanaged`): fabctl neither changes nor checks them.", unmanaged)
	if h.err != nil {
		return h.err
	}
	body := capMarkdown(buf.Bytes(), MarkdownLimit-markdownFooterRoom)
	if _, err := out.Write(body); err != nil {
		return err
	}
	h = &humanWriter{w: out}
	if len(body) < buf.Len() {
		h.line("> [!WARNING]")
		h.line("> **Truncated:** this comment stops at %d of %d characters, under GitHub's %d-character limit for a comment; the sections after this point are left out. `fabctl show PLANFILE`, `--json` or `--format markdown` to a file (as a CI artifact) have the whole plan.",
			len(body), buf.Len(), MarkdownLimit)
		h.line("")
	}
	h.line("<sub>fabctl %s · spec `%s`</sub>", mdHTML(p.FabctlVersion), shortHash(p.SpecHash))
	return h.err
}

// MarkdownLimit is the largest markdown document the plan view writes:
// GitHub refuses an issue or pull-request comment longer than 65,536
// characters ("Body is too long (maximum is 65536 characters)"), and the
// example pipelines post this view as a sticky pull-request comment.
const MarkdownLimit = 65536

// markdownFooterRoom is kept for the truncation notice and the footer.
const markdownFooterRoom = 1024

// capMarkdown returns md, or its longest prefix of at most limit bytes
// that ends at a line where no code fence or <details> block is open, so
// the cut document still renders. (Bytes bound characters from above.)
func capMarkdown(md []byte, limit int) []byte {
	if len(md) <= limit {
		return md
	}
	cut, fence, details := 0, false, 0
	for off := 0; off < len(md); {
		nl := bytes.IndexByte(md[off:], '\n')
		if nl < 0 {
			break
		}
		line := md[off : off+nl]
		next := off + nl + 1
		if next > limit {
			break
		}
		switch {
		case bytes.HasPrefix(line, []byte("```")):
			fence = !fence
		case !fence && bytes.HasPrefix(line, []byte("<details>")):
			details++
		case !fence && bytes.HasPrefix(line, []byte("</details>")):
			details--
		}
		if !fence && details == 0 {
			cut = next
		}
		off = next
	}
	return md[:cut]
}

// mdChangeLine prefixes a change for a diff block: '+' and '-' lines are
// coloured by GitHub; '!' marks disruptive changes.
func mdChangeLine(text, disruptive string) string {
	if disruptive == "" {
		return text
	}
	return "! " + text + "   # disruptive: " + disruptive
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// mdCode makes s safe inside a `code span` (no backticks, no newlines).
func mdCode(s string) string {
	return strings.NewReplacer("`", "'", "\n", " ").Replace(s)
}

// mdHTML escapes s for HTML contexts (<summary>, <code>).
func mdHTML(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\n", " ").Replace(s)
}

// mdText escapes s for running markdown text.
func mdText(s string) string {
	r := strings.NewReplacer("\\", "\\\\", "`", "\\`", "*", "\\*", "_", "\\_", "<", "&lt;", ">", "&gt;", "|", "\\|", "[", "\\[", "]", "\\]", "\n", " ")
	return r.Replace(s)
}

// mdFence keeps a line from closing a fenced code block.
func mdFence(s string) string {
	return strings.ReplaceAll(s, "```", "`\u200b``")
}

// mdDeviceList is one device's entries of a details section.
type mdDeviceList struct {
	d     *plan.DevicePlan
	items []string
}

// detailsSection writes a heading and intro, then one collapsed list per
// device; nothing when no device has entries.
func (h *humanWriter) detailsSection(title, intro string, devs []mdDeviceList) {
	if len(devs) == 0 {
		return
	}
	h.line("#### %s", title)
	h.line("")
	h.line("%s", intro)
	h.line("")
	for _, dl := range devs {
		h.line("<details><summary><code>%s</code>: %s</summary>", mdHTML(deviceTitle(dl.d)), plural(len(dl.items), "setting", "settings"))
		h.line("")
		for _, it := range dl.items {
			h.line("- %s", it)
		}
		h.line("")
		h.line("</details>")
		h.line("")
	}
}
