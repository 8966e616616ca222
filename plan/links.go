package plan

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/spec"
)

// readLinks reads a switch's or host's link truth after its Read, when
// its driver can (drivers.LinkReader); otherwise it says so, by platform.
func readLinks(ctx context.Context, drv drivers.Driver, t drivers.Target, dp *DevicePlan) *linktruth.Read {
	if dp.Kind != intent.KindSwitch && dp.Kind != intent.KindHost {
		return nil
	}
	notRead := &linktruth.Read{NotRead: "link truth not read on " + platformOf(dp) + " (its driver does not read LLDP, link state or speed)"}
	lr, ok := drv.(drivers.LinkReader)
	if !ok {
		return notRead
	}
	dl, err := lr.ReadLinks(ctx, t)
	if err != nil {
		return &linktruth.Read{NotRead: fmt.Sprintf("link truth not read on %s: %v", platformOf(dp), err)}
	}
	if dl == nil {
		return notRead
	}
	return &linktruth.Read{Links: dl}
}

func platformOf(dp *DevicePlan) string {
	if dp.Platform != "" {
		return dp.Platform
	}
	return dp.Driver
}

// compareLinks compares the planned devices' link reads with the spec's
// Ethernet links and adds each finding to its device: a fault no change
// fixes is an error (the plan's mismatch, exit 6), a check that could not
// run a warning. nil when the spec has no Ethernet links.
func compareLinks(s *spec.Spec, devices []*DevicePlan) *linktruth.Report {
	if !linktruth.Applies(s) {
		return nil
	}
	reads := make(map[string]linktruth.Read, len(devices))
	byAddr := make(map[string]*DevicePlan, len(devices))
	for _, dp := range devices {
		byAddr[dp.Address] = dp
		// A comparison again (settleLinks) replaces the last one's.
		dp.Findings = slices.DeleteFunc(dp.Findings, isLinkFinding)
		switch {
		case dp.links != nil:
			reads[dp.Address] = *dp.links
		case dp.Error != "" && (dp.Kind == intent.KindSwitch || dp.Kind == intent.KindHost):
			reads[dp.Address] = linktruth.Read{NotRead: "link truth not read: the device could not be read"}
		}
	}
	r := linktruth.Compare(s, reads)
	for _, f := range r.Findings {
		dp := byAddr[f.Device]
		if dp == nil {
			continue
		}
		sev := drivers.SeverityError
		if f.Verdict != linktruth.VerdictMismatch {
			sev = "warning"
		}
		dp.Findings = append(dp.Findings, drivers.Finding{Severity: sev, Path: "port/" + f.Port + "/link", Kind: f.Kind,
			Message: f.End + ": " + f.Message, IDs: map[string]string{"link": f.Link, "peer": f.Peer}})
	}
	return r
}

// LinkNotes are the plan's sentences about links it could not check
// ("link truth not read on nxos: switch.leaf3"), for the views.
func (p *Plan) LinkNotes() []string {
	if p.Links == nil {
		return nil
	}
	var out []string
	for _, n := range append(append([]linktruth.NotRead(nil), p.Links.NotRead...), p.Links.NoLLDP...) {
		out = append(out, n.Reason+": "+FewNames(n.Devices, 8))
	}
	return out
}

// FewNames lists at most max names, then how many more there are.
func FewNames(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:max], ", "), len(names)-max)
}

// isLinkFinding: a finding compareLinks added.
func isLinkFinding(f drivers.Finding) bool {
	return f.IDs["link"] != "" && strings.HasSuffix(f.Path, "/link")
}

// settleLinks gives LLDP time to learn neighbours (Options.LinkSettle):
// while a port that should hear one heard none (a no-neighbor mismatch:
// its peer speaks LLDP), its device is read again every second, up to LinkSettle, and the links compared again. Silence that
// outlasts the window is the fault the first read reported.
func settleLinks(ctx context.Context, s *spec.Spec, devices []*DevicePlan, r *linktruth.Report, opts Options) *linktruth.Report {
	if r == nil || opts.LinkSettle <= 0 {
		return r
	}
	byAddr := make(map[string]*DevicePlan, len(devices))
	for _, dp := range devices {
		byAddr[dp.Address] = dp
	}
	deadline := time.Now().Add(opts.LinkSettle)
	for {
		var silent []*DevicePlan
		seen := map[*DevicePlan]bool{}
		for _, f := range r.Findings {
			if f.Kind != linktruth.KindNoNeighbor || f.Verdict != linktruth.VerdictMismatch {
				continue
			}
			if dp := byAddr[f.Device]; dp != nil && dp.relink != nil && !seen[dp] {
				seen[dp] = true
				silent = append(silent, dp)
			}
		}
		wait := time.Until(deadline)
		if len(silent) == 0 || wait <= 0 {
			return r
		}
		select {
		case <-ctx.Done():
			return r
		case <-time.After(min(wait, time.Second)):
		}
		bounded(opts.Parallelism, len(silent), func(i int) {
			silent[i].links = silent[i].relink(ctx)
		})
		r = compareLinks(s, devices)
	}
}
