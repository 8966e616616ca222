package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/validate/ibreadback"
	"github.com/fabctl/fabctl/validate/readback"
	"github.com/fabctl/fabctl/validate/traffic"
	"github.com/fabctl/fabctl/validate/verbs"
)

// The live stages of fabctl validate: read-back (every device's running
// state equals the spec's desired state: validate/readback) and traffic
// (the spec's validate blocks run with the verbs engine:
// validate/traffic). Both report what they could not do as not checked /
// not run, never as passed. This file runs them and renders their results.

// Validate stage names.
const (
	StageReadback = "read-back"
	StageTraffic  = "traffic"
)

// runTraffic plans and runs the spec's validate blocks. A pair with an end
// on a host the read-back could not reach (unreached) is not run: it is
// reported as a consequence of that host, not as a failure of its own.
func runTraffic(ctx context.Context, s *spec.Spec, opts *ValidateOptions, unreached map[string]string) (*traffic.Report, string) {
	if opts.SelfMark {
		for _, v := range s.Validations {
			v.Marking = spec.MarkSelf
		}
	}
	tests := traffic.Plan(s)
	if len(tests) == 0 {
		return nil, "the spec declares no validate block"
	}
	// The rounds the runner gets leave those pairs out; the report's
	// tests keep them (its pair counts are the spec's).
	planned := make([][][]traffic.PairRef, len(tests))
	for i, t := range tests {
		planned[i] = slices.Clone(t.Rounds)
	}
	consequences := withoutUnreached(tests, unreached)
	defer func() {
		for i, t := range tests {
			t.Rounds = planned[i]
		}
	}()
	var rep *traffic.Report
	if opts.Traffic != nil {
		rep = opts.Traffic(ctx, tests)
	} else {
		r := &traffic.Runner{Backend: opts.TrafficBackend, Version: readBuildInfo().Version, Logf: opts.Debugf}
		if opts.Drivers != nil {
			r.Remote = traffic.SSHRemote(s, opts.Drivers(), opts.Insecure)
		}
		rep = r.Run(ctx, tests)
	}
	if rep != nil {
		rep.Outcomes = append(rep.Outcomes, consequences...)
	}
	return rep, ""
}

// unreachedHosts are the hosts the read-back could not read, with why
// (nil without a read-back).
func unreachedHosts(rb *readback.Result) map[string]string {
	if rb == nil {
		return nil
	}
	out := map[string]string{}
	for _, d := range rb.Devices {
		if name, ok := strings.CutPrefix(d.Address, "host."); ok && d.Status == readback.Error {
			out[name] = d.Error
		}
	}
	return out
}

// withoutUnreached takes the pairs with an end on a host the read-back
// could not reach out of the tests' rounds and returns them as not run,
// naming that host: they are consequences of its failure (already
// reported by the read-back), not failures of their own, and running
// them would only repeat its error.
func withoutUnreached(tests []*traffic.Test, unreached map[string]string) []*traffic.Outcome {
	if len(unreached) == 0 {
		return nil
	}
	var out []*traffic.Outcome
	for _, t := range tests {
		for ri, round := range t.Rounds {
			kept := round[:0:0]
			for _, p := range round {
				h := ""
				for _, e := range []traffic.Endpoint{p.Client, p.Server} {
					if _, bad := unreached[e.Host.Name]; bad && h == "" {
						h = e.Host.Name
					}
				}
				if h == "" {
					kept = append(kept, p)
					continue
				}
				out = append(out, &traffic.Outcome{Test: t, Round: ri + 1, Pair: p, Status: traffic.NotRun,
					Reason: fmt.Sprintf("a consequence of host.%s, which the read-back could not reach (%s)", h, unreached[h])})
			}
			t.Rounds[ri] = kept
		}
	}
	return out
}

// trafficCounts are a report's totals (zero without a report).
func trafficCounts(r *traffic.Report) (pass, fail, notRun int) {
	if r == nil {
		return 0, 0, 0
	}
	return r.Counts()
}

// ---- human view ----

func writeReadback(w io.Writer, st styles, rb *readback.Result) {
	if rb.Skipped != "" {
		fmt.Fprintf(w, "Read-back: skipped: %s\n", rb.Skipped)
		return
	}
	if rb.Error != "" {
		fmt.Fprintf(w, "Read-back: %s %s\n", st.Fail.Render("✘ not run:"), rb.Error)
		return
	}
	fmt.Fprintf(w, "Read-back: %d of %s match the spec\n", rb.Match, plural(len(rb.Devices), "device", "devices"))
	for _, d := range rb.Devices {
		accepted, unaccepted := splitAccepted(d.NotChecked)
		switch d.Status {
		case readback.Match:
			// A subnet manager's port tables are not the device's to
			// express: the InfiniBand stage reads them from the ports.
			ports := 0
			rest := unaccepted[:0:0]
			for _, u := range unaccepted {
				if strings.HasPrefix(u.Path, intent.PathFabric) {
					ports++
				} else {
					rest = append(rest, u)
				}
			}
			unaccepted = rest
			note := ""
			if ports > 0 {
				note = st.Faint.Render(fmt.Sprintf(" (%s of the fabric's ports: see InfiniBand)", plural(ports, "table setting", "table settings")))
			}
			switch {
			case len(unaccepted) > 0:
				// Not in effect, not accepted, but only tuning the device:
				// never a ✔ (--strict fails on it).
				fmt.Fprintf(w, "  %s %s: matches; %s the device cannot express %s not in effect (not checked)%s\n", st.Warn.Render("!"), d.Address,
					plural(len(unaccepted), "setting", "settings"), pluralWord(len(unaccepted), "is", "are"), note)
				writeUnexpressibleLines(w, st, unaccepted)
			case len(d.Unmanaged) > 0:
				// Never ✔: the spec leaves these to the device.
				acc := ""
				if len(accepted) > 0 {
					acc = fmt.Sprintf("; %s accepted, not in effect", plural(len(accepted), "setting", "settings"))
				}
				fmt.Fprintf(w, "  %s %s: matches; %s unmanaged, not checked%s%s\n", st.Warn.Render("○"), d.Address, plural(len(d.Unmanaged), "setting", "settings"), acc, note)
			case len(accepted) > 0:
				fmt.Fprintf(w, "  %s %s: matches; %s accepted, not in effect%s\n", st.Warn.Render("○"), d.Address, plural(len(accepted), "setting", "settings"), note)
			default:
				fmt.Fprintf(w, "  %s %s%s\n", st.OK.Render("✔"), d.Address, note)
			}
			if len(accepted) > 0 {
				writeAcceptedLines(w, st, accepted)
			}
			writeUnmanagedLines(w, st, d.Unmanaged)
		case readback.NotCarried:
			what := "of a lossless, RDMA or CNP class"
			if rb.Strict {
				what = "(--strict: every setting the spec does not accept)"
			}
			fmt.Fprintf(w, "  %s %s: %s %s not in effect: the device cannot express %s\n", st.Fail.Render("✘"), d.Address,
				plural(len(d.NotInEffect), "setting", "settings"), what, pluralWord(len(d.NotInEffect), "it", "them"))
			writeUnexpressibleLines(w, st, d.NotInEffect)
		case readback.Differs:
			fmt.Fprintf(w, "  %s %s: %s from the spec\n", st.Fail.Render("✘"), d.Address, plural(len(d.Diffs), "setting differs", "settings differ"))
			for _, c := range d.Diffs {
				fmt.Fprintf(w, "      %s: live %s, spec %s\n", c.Path, orNone(c.Before), orNone(c.After))
			}
		default:
			fmt.Fprintf(w, "  %s %s: not read: %s\n", st.Fail.Render("✘"), d.Address, d.Error)
		}
	}
	if rb.NotCarried > 0 {
		fmt.Fprintf(w, "  To go on: %s.\n", plan.AcceptHint)
	}
}

// splitAccepted splits a device's unexpressible settings into those the
// spec accepts and the others.
func splitAccepted(us []plan.Unexpressible) (accepted, unaccepted []plan.Unexpressible) {
	for _, u := range us {
		if u.Accepted != "" {
			accepted = append(accepted, u)
		} else {
			unaccepted = append(unaccepted, u)
		}
	}
	return accepted, unaccepted
}

func writeUnexpressibleLines(w io.Writer, st styles, us []plan.Unexpressible) {
	for _, l := range plan.SummarizeUnexpressible(us, 6) {
		fmt.Fprintf(w, "      %s\n", l)
	}
}

// writeAcceptedLines lists accepted settings by the spec's reason.
func writeAcceptedLines(w io.Writer, st styles, us []plan.Unexpressible) {
	byWhy := map[string][]string{}
	var whys []string
	for _, u := range us {
		if _, ok := byWhy[u.Accepted]; !ok {
			whys = append(whys, u.Accepted)
		}
		byWhy[u.Accepted] = append(byWhy[u.Accepted], u.Path)
	}
	for _, why := range whys {
		ps := byWhy[why]
		more := ""
		if len(ps) > 6 {
			more = fmt.Sprintf(" and %d more", len(ps)-6)
			ps = ps[:6]
		}
		fmt.Fprintf(w, "      %s\n", st.Faint.Render(fmt.Sprintf("accepted, not in effect: %s%s (%s)", strings.Join(ps, ", "), more, why)))
	}
}

// writeUnmanagedLines lists a device's unmanaged settings (at most 6;
// --json has all): "unmanaged, not checked: trust (both): <reason>".
func writeUnmanagedLines(w io.Writer, st styles, us []plan.Unmanaged) {
	for i, u := range us {
		if i == 6 {
			fmt.Fprintf(w, "      %s\n", st.Faint.Render(fmt.Sprintf("… and %d more unmanaged (--json lists them)", len(us)-6)))
			return
		}
		fmt.Fprintf(w, "      %s\n", st.Faint.Render(unmanagedNotChecked(u)))
	}
}

// unmanagedNotChecked is how validate names an unmanaged setting.
func unmanagedNotChecked(u plan.Unmanaged) string {
	return fmt.Sprintf("unmanaged, not checked: %s (the device runs %s): %s", u.Path, u.LiveText(), u.Reason)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func writeTraffic(w io.Writer, st styles, rep *traffic.Report, skipped string) {
	if rep == nil {
		fmt.Fprintf(w, "Traffic: skipped: %s\n", skipped)
		return
	}
	pairs := 0
	for _, t := range rep.Tests {
		pairs += t.Pairs()
	}
	fmt.Fprintf(w, "Traffic: %s, %s\n", plural(len(rep.Tests), "test", "tests"), plural(pairs, "pair", "pairs"))
	if rep.Unavailable != "" {
		fmt.Fprintf(w, "  %s nothing ran: %s\n", st.Warn.Render("!"), rep.Unavailable)
	}
	for _, o := range rep.Outcomes {
		if rep.Unavailable != "" && o.Status == traffic.NotRun && o.Reason == rep.Unavailable {
			continue // said once above
		}
		where := ""
		if o.Round > 0 {
			where = fmt.Sprintf(" round %d %s -> %s", o.Round, o.Pair.Client, o.Pair.Server)
		}
		switch o.Status {
		case traffic.Pass:
			fmt.Fprintf(w, "  %s %s%s: %s\n", st.OK.Render("✔"), o.Test.Label(), where, figure(o.Result))
		case traffic.Fail:
			fmt.Fprintf(w, "  %s %s%s: %s\n", st.Fail.Render("✘"), o.Test.Label(), where, figure(o.Result))
			if len(o.Checks) == 0 {
				fmt.Fprintf(w, "      %s\n", o.Reason)
			}
		default:
			fmt.Fprintf(w, "  %s %s%s: not run: %s\n", st.Warn.Render("-"), o.Test.Label(), where, o.Reason)
		}
		for _, c := range o.Checks {
			mark := map[traffic.Status]string{traffic.Pass: "ok", traffic.Fail: st.Fail.Render("FAIL"), traffic.Skipped: st.Faint.Render("not checked")}[c.Status]
			fmt.Fprintf(w, "      %s %s: %s\n", mark, c.Name, c.Detail)
		}
		if o.Result != nil {
			for _, n := range o.Result.Notes {
				fmt.Fprintf(w, "      %s\n", st.Faint.Render(n))
			}
		}
	}
	for _, t := range rep.Tests {
		for _, e := range t.LeftOut {
			fmt.Fprintf(w, "  %s %s: %s has no partner in the %s pattern\n", st.Faint.Render("note"), t.Label(), e, t.Block.Pattern)
		}
	}
}

// figure is the headline number of a result.
func figure(r *verbs.Result) string {
	switch {
	case r == nil:
		return "no result"
	case r.Latency != nil:
		return fmt.Sprintf("median %.2fus, p99 %.2fus (%d samples)", float64(r.Latency.Median)/1e3, float64(r.Latency.P99)/1e3, r.Latency.Samples)
	}
	return fmt.Sprintf("%.3f Gb/s (%d x %dB in %s)", r.Gbps, r.Messages, r.Test.Size, r.Elapsed.Round(time.Millisecond))
}

// ---- JSON ----

type trafficJSON struct {
	Skipped     string               `json:"skipped,omitempty"`
	Unavailable string               `json:"unavailable,omitempty"`
	Passed      int                  `json:"passed"`
	Failed      int                  `json:"failed"`
	NotRun      int                  `json:"not_run"`
	Tests       []trafficTestJSON    `json:"tests"`
	Outcomes    []trafficOutcomeJSON `json:"outcomes"`
}

type trafficTestJSON struct {
	Label    string           `json:"label"`
	Block    string           `json:"block"`
	Class    string           `json:"class,omitempty"`
	Pattern  string           `json:"pattern"`
	Test     verbs.Test       `json:"test"`
	Criteria traffic.Criteria `json:"criteria"`
	Rounds   int              `json:"rounds"`
	Pairs    int              `json:"pairs"`
	LeftOut  []string         `json:"left_out,omitempty"`
	Skip     string           `json:"skip,omitempty"`
}

type trafficOutcomeJSON struct {
	Test     string                       `json:"test"`
	Round    int                          `json:"round,omitempty"`
	Client   string                       `json:"client,omitempty"`
	Server   string                       `json:"server,omitempty"`
	Status   traffic.Status               `json:"status"`
	Reason   string                       `json:"reason,omitempty"`
	Result   *verbs.Result                `json:"result,omitempty"`
	Checks   []traffic.Check              `json:"checks,omitempty"`
	Counters map[string]map[string]uint64 `json:"counters,omitempty"`
}

func toTrafficJSON(rep *traffic.Report, skipped string) *trafficJSON {
	if rep == nil {
		return &trafficJSON{Skipped: skipped, Tests: []trafficTestJSON{}, Outcomes: []trafficOutcomeJSON{}}
	}
	j := &trafficJSON{Unavailable: rep.Unavailable, Tests: []trafficTestJSON{}, Outcomes: []trafficOutcomeJSON{}}
	j.Passed, j.Failed, j.NotRun = rep.Counts()
	for _, t := range rep.Tests {
		tj := trafficTestJSON{Label: t.Label(), Block: t.Name, Pattern: t.Block.Pattern, Test: t.Verbs, Criteria: t.Criteria,
			Rounds: len(t.Rounds), Pairs: t.Pairs(), Skip: t.Skip}
		if t.Class != nil {
			tj.Class = t.Class.Name
		}
		for _, e := range t.LeftOut {
			tj.LeftOut = append(tj.LeftOut, e.String())
		}
		j.Tests = append(j.Tests, tj)
	}
	for _, o := range rep.Outcomes {
		oj := trafficOutcomeJSON{Test: o.Test.Label(), Round: o.Round, Status: o.Status, Reason: o.Reason, Result: o.Result, Checks: o.Checks}
		if o.Round > 0 {
			oj.Client, oj.Server = o.Pair.Client.String(), o.Pair.Server.String()
		}
		if len(o.Counters) > 0 {
			oj.Counters = map[string]map[string]uint64{}
			for ep, d := range o.Counters {
				oj.Counters[ep] = d
			}
		}
		j.Outcomes = append(j.Outcomes, oj)
	}
	return j
}

// ---- JUnit ----

// liveJUnitSuites adds a suite per live stage: a test case per device
// (read-back) and per pair run (traffic); what did not run is skipped.
func liveJUnitSuites(res *validateResult) []junitSuite {
	var out []junitSuite
	if rb := res.Readback; rb != nil {
		s := junitSuite{Name: "fabctl validate: read-back"}
		if rb.Error != "" {
			s.add(junitCase{Name: "read-back", Classname: "fabctl.readback",
				Failures: []junitFailure{{Message: "not run: " + rb.Error, Type: "error", Text: rb.Error}}})
		}
		for _, d := range rb.Devices {
			c := junitCase{Name: d.Address, Classname: "fabctl.readback"}
			switch d.Status {
			case readback.Differs:
				var lines []string
				for _, ch := range d.Diffs {
					lines = append(lines, fmt.Sprintf("%s: live %s, spec %s", ch.Path, orNone(ch.Before), orNone(ch.After)))
				}
				c.Failures = append(c.Failures, junitFailure{Message: fmt.Sprintf("%s from the spec", plural(len(d.Diffs), "setting differs", "settings differ")),
					Type: "differs", Text: strings.Join(lines, "\n")})
			case readback.Error:
				c.Failures = append(c.Failures, junitFailure{Message: "not read: " + d.Error, Type: "error", Text: d.Error})
			case readback.NotCarried:
				var lines []string
				for _, u := range d.NotInEffect {
					lines = append(lines, fmt.Sprintf("%s: not in effect: %s", u.Path, u.Reason))
				}
				c.Failures = append(c.Failures, junitFailure{Message: fmt.Sprintf("%s not in effect (the device cannot express %s; the spec does not accept it)",
					plural(len(d.NotInEffect), "setting", "settings"), pluralWord(len(d.NotInEffect), "it", "them")),
					Type: "not_in_effect", Text: strings.Join(lines, "\n")})
			}
			if len(d.NotChecked) > 0 {
				failed := map[string]bool{}
				for _, u := range d.NotInEffect {
					failed[u.Path] = true
				}
				var lines []string
				for _, u := range d.NotChecked {
					switch {
					case u.Accepted != "":
						lines = append(lines, fmt.Sprintf("accepted, not in effect: %s (%s; the spec: %s)", u.Path, u.Reason, u.Accepted))
					case !failed[u.Path]:
						lines = append(lines, fmt.Sprintf("not in effect, not checked: %s (%s)", u.Path, u.Reason))
					}
				}
				c.SystemOut = strings.Join(lines, "\n")
			}
			for _, u := range d.Unmanaged {
				c.SystemOut = strings.TrimPrefix(c.SystemOut+"\n"+unmanagedNotChecked(u), "\n")
			}
			s.add(c)
		}
		out = append(out, s)
	}
	if l := res.Links; l != nil {
		out = append(out, linksJUnitSuite(l))
	}
	if ib := res.IB; ib != nil {
		out = append(out, ibJUnitSuite(ib))
	}
	if res.Traffic != nil || res.TrafficSkipped != "" {
		s := junitSuite{Name: "fabctl validate: traffic"}
		if rep := res.Traffic; rep != nil {
			for _, o := range rep.Outcomes {
				name := o.Test.Label()
				if o.Round > 0 {
					name = fmt.Sprintf("%s: %s -> %s", name, o.Pair.Client, o.Pair.Server)
				}
				c := junitCase{Name: name, Classname: "fabctl.traffic." + o.Test.Name}
				switch o.Status {
				case traffic.Fail:
					c.Failures = append(c.Failures, junitFailure{Message: o.Reason, Type: "fail", Text: o.Reason})
				case traffic.NotRun:
					c.Skipped = &junitSkipped{Message: "not run: " + o.Reason}
				}
				var lines []string
				if o.Result != nil {
					lines = append(lines, figure(o.Result))
				}
				for _, ch := range o.Checks {
					lines = append(lines, fmt.Sprintf("%s %s: %s", ch.Status, ch.Name, ch.Detail))
				}
				c.SystemOut = strings.Join(lines, "\n")
				s.add(c)
			}
		}
		if s.Tests == 0 {
			s.add(junitCase{Name: "traffic", Classname: "fabctl.traffic", Skipped: &junitSkipped{Message: res.TrafficSkipped}})
		}
		out = append(out, s)
	}
	return out
}

// ibJUnitSuite is the InfiniBand stage: a test case per port (or node)
// with findings, one failure per finding; one passing case when the
// fabric matches; a skipped one when the stage did not apply.
func ibJUnitSuite(ib *ibreadback.Result) junitSuite {
	s := junitSuite{Name: "fabctl validate: infiniband"}
	switch {
	case ib.Skipped != "":
		s.add(junitCase{Name: "infiniband", Classname: "fabctl.infiniband", Skipped: &junitSkipped{Message: ib.Skipped}})
		return s
	case ib.Error != "":
		s.add(junitCase{Name: "infiniband", Classname: "fabctl.infiniband",
			Failures: []junitFailure{{Message: "not read: " + ib.Error, Type: "error", Text: ib.Error}}})
		return s
	}
	if len(ib.Findings) == 0 {
		s.add(junitCase{Name: fmt.Sprintf("fabric (%s, %d cabled ports)", ib.Summary, ib.Ports), Classname: "fabctl.infiniband"})
		return s
	}
	byWhere := map[string][]ibreadback.Finding{}
	var order []string
	for _, f := range ib.Findings {
		if _, ok := byWhere[f.Where]; !ok {
			order = append(order, f.Where)
		}
		byWhere[f.Where] = append(byWhere[f.Where], f)
	}
	for _, w := range order {
		c := junitCase{Name: w, Classname: "fabctl.infiniband"}
		for _, f := range byWhere[w] {
			text := fmt.Sprintf("%s: %s (verdict %s", w, f.Message, f.Verdict)
			if f.NodeGUID != "" {
				text += ", node " + f.NodeGUID
			}
			if f.PortGUID != "" {
				text += ", port " + f.PortGUID
			}
			if f.LID != 0 {
				text += fmt.Sprintf(", LID %d", f.LID)
			}
			c.Failures = append(c.Failures, junitFailure{Message: f.Message, Type: f.Kind, Text: text + ")"})
		}
		s.add(c)
	}
	return s
}

func (s *junitSuite) add(c junitCase) {
	s.Cases = append(s.Cases, c)
	s.Tests++
	if len(c.Failures) > 0 {
		s.Fails++
	}
	if c.Skipped != nil {
		s.Skipped++
	}
}
