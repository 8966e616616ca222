package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/plan"
)

// StageLinks is validate's Ethernet cabling and link stage: every link
// end's LLDP neighbour, state, speed and error counters, as the
// read-back's reads found them (internal/linktruth, plan.Plan.Links).
const StageLinks = "links"

// writeLinks is the links stage's human view: a line per finding, the
// devices not read (never ✔ for them), ✔ only when every end was read
// and matched.
func writeLinks(w io.Writer, st styles, r *linktruth.Report) {
	notRead := r.NotReadEnds()
	fmt.Fprintf(w, "Links: %s, %d link ends read\n", plural(r.Links, "Ethernet link", "Ethernet links"), r.Ends)
	for _, f := range r.Findings {
		mark, tail := st.Fail.Render("✘"), " (no change fixes it)"
		if f.Verdict != linktruth.VerdictMismatch {
			mark, tail = st.Warn.Render("!"), " (not checked)"
		}
		fmt.Fprintf(w, "  %s %s: %s [%s]%s\n", mark, f.End, f.Message, f.Kind, tail)
	}
	for _, n := range append(append([]linktruth.NotRead(nil), r.NotRead...), r.NoLLDP...) {
		fmt.Fprintf(w, "  i %s: %s\n", n.Reason, plan.FewNames(n.Devices, 8))
	}
	if len(r.Findings) == 0 && notRead == 0 && len(r.NoLLDP) == 0 && r.Ends > 0 {
		fmt.Fprintf(w, "  %s every link end sees its spec neighbour, is up at the link's speed and counts at most %d errors\n", st.OK.Render("✔"), r.ErrorsMax)
	}
}

// linksJUnitSuite is the links stage: a test case per link end, one
// failure per mismatch, skipped when the end was not read (or only
// unchecked findings: the check could not run).
func linksJUnitSuite(r *linktruth.Report) junitSuite {
	s := junitSuite{Name: "fabctl validate: links"}
	by := map[string][]linktruth.Finding{}
	for _, f := range r.Findings {
		by[f.End] = append(by[f.End], f)
	}
	for _, e := range r.EndList {
		c := junitCase{Name: e.End + " -- " + e.Peer, Classname: "fabctl.links"}
		if e.NotRead != "" {
			c.Skipped = &junitSkipped{Message: e.NotRead}
			s.add(c)
			continue
		}
		var skipped []string
		for _, f := range by[e.End] {
			text := fmt.Sprintf("%s (%s): %s; want %s, have %s (verdict %s)", e.End, e.Link, f.Message, f.Want, f.Have, f.Verdict)
			if f.Verdict != linktruth.VerdictMismatch {
				skipped = append(skipped, f.Message)
				continue
			}
			c.Failures = append(c.Failures, junitFailure{Message: f.Message, Type: f.Kind, Text: text})
		}
		if len(c.Failures) == 0 && len(skipped) > 0 {
			c.Skipped = &junitSkipped{Message: strings.Join(skipped, "; ")}
		}
		s.add(c)
	}
	return s
}
