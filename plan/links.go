package plan

import (
	"context"
	"fmt"
	"strings"

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
