// Package ibreadback is validate's InfiniBand stage: it discovers the
// fabric over MADs (ibnetdiscover and smpquery, through a Runner: on the
// subnet manager host over SSH, or locally against the testbed's
// simulated subnet) and compares it with the spec's switches, cabling,
// partitions and QoS (drivers/sm/ibfabric). Every difference is a
// finding naming the switch or adapter and the port, in the spec's words
// (host:nic for adapter ports).
package ibreadback

import (
	"context"
	"time"

	"github.com/fabctl/fabctl/drivers/sm/ibfabric"
	"github.com/fabctl/fabctl/drivers/sm/ibfabric/ibspec"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// Finding is one difference between the spec and the fabric.
type Finding struct {
	Kind    string `json:"kind"`
	Node    string `json:"node"`           // switch or adapter name in the topology
	Port    int    `json:"port,omitempty"` // 0: the whole node
	Where   string `json:"where"`          // the spec's name: "leaf1 port 3", "cn01:ib0", "leaf1"
	Message string `json:"message"`
	// Verdict is VerdictMismatch (no change fixes it: cabling, links,
	// nodes, MTU, an unreadable port), VerdictRestorable (a port table
	// opensm programs: fabctl apply restores it) or VerdictUnchecked (a
	// check that could not run).
	Verdict string `json:"verdict"`
	// NodeGUID, PortGUID and LID identify the node and port in the
	// fabric (omitted when unknown).
	NodeGUID string `json:"node_guid,omitempty"`
	PortGUID string `json:"port_guid,omitempty"`
	LID      int    `json:"lid,omitempty"`
}

// The verdicts.
const (
	VerdictMismatch   = "mismatch"
	VerdictRestorable = "restorable"
	VerdictUnchecked  = "unchecked"
)

// Result is the stage's outcome.
type Result struct {
	Skipped  string    `json:"skipped,omitempty"`
	Error    string    `json:"error,omitempty"`
	Summary  string    `json:"summary,omitempty"` // what was discovered
	Ports    int       `json:"ports"`             // cabled ports read
	Findings []Finding `json:"findings"`
	// Via is what read the fabric ("fabctl ibmad", or "infiniband-diags"
	// when fabctl's MAD client was not there: Note says why).
	Via  string `json:"via,omitempty"`
	Note string `json:"note,omitempty"`
	// Discover and Compare are the times the two steps took.
	Discover time.Duration `json:"discover_ns"`
	Compare  time.Duration `json:"compare_ns"`
}

// Failed reports whether the stage found a difference or could not run.
func (r *Result) Failed() bool { return r != nil && (r.Error != "" || len(r.Findings) > 0) }

// Mismatch reports whether the stage read the fabric and every finding
// is one no change fixes: plan and drift exit with their mismatch code
// for the same findings.
func (r *Result) Mismatch() bool {
	if r == nil || r.Error != "" || len(r.Findings) == 0 {
		return false
	}
	for _, f := range r.Findings {
		if f.Verdict != VerdictMismatch {
			return false
		}
	}
	return true
}

// Applies reports whether the spec has an InfiniBand fabric to read back.
func Applies(s *spec.Spec) bool { return ibspec.HasFabric(s) }

// Run discovers the fabric through r and compares it with the spec.
func Run(ctx context.Context, s *spec.Spec, r ibfabric.Runner) *Result {
	res := &Result{Findings: []Finding{}}
	if !ibspec.HasFabric(s) {
		res.Skipped = "the spec has no InfiniBand switches and cabling"
		return res
	}
	f, err := ibspec.FromSpec(s)
	if err != nil {
		res.Error = "the spec's InfiniBand topology: " + err.Error()
		return res
	}
	var sm *intent.SubnetManager
	if fab := intent.Compile(s); len(fab.SubnetManagers) > 0 {
		sm = fab.SubnetManagers[0]
	}
	in := f.Intent(s, sm)
	t0 := time.Now()
	fab, err := ibfabric.Discover(ctx, r, ibfabric.All)
	res.Discover = time.Since(t0)
	if err != nil {
		res.Error = "discover the fabric: " + err.Error()
		return res
	}
	res.Summary = fab.Summary()
	res.Ports = 2 * len(fab.Links)
	res.Via, res.Note = fab.Via, fab.Note
	t1 := time.Now()
	fs, err := ibfabric.Compare(in, fab)
	res.Compare = time.Since(t1)
	if err != nil {
		res.Error = "compare: " + err.Error()
		return res
	}
	for _, x := range fs {
		fd := Finding{Kind: string(x.Kind), Node: x.Node, Port: x.Port, Where: x.Where, Message: x.Message, LID: x.LID, Verdict: VerdictMismatch}
		switch {
		case x.Kind.Restorable():
			fd.Verdict = VerdictRestorable
		case x.Kind == ibfabric.KindNotQueried:
			fd.Verdict = VerdictUnchecked
		}
		if x.NodeGUID != 0 {
			fd.NodeGUID = ibfabric.GUID(x.NodeGUID)
		}
		if x.PortGUID != 0 {
			fd.PortGUID = ibfabric.GUID(x.PortGUID)
		}
		res.Findings = append(res.Findings, fd)
	}
	return res
}
