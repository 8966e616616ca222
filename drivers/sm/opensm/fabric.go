package opensm

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/sm/ibfabric"
	"github.com/fabctl/fabctl/drivers/sm/ibfabric/ibspec"
	"github.com/fabctl/fabctl/intent"
)

// The fabric read-back of plan and apply. The files are only half of a
// subnet manager's state: what counts is what opensm programmed into the
// ports. When the spec cables an InfiniBand fabric (switches, links),
// Read also discovers the fabric with infiniband-diags on the SM host
// (ibnetdiscover, smpquery; drivers/sm/ibfabric) and compares it with the
// spec:
//
//   - a setting the files carry as the spec says but the fabric does not
//     (a member port without the partition's P_Key, a port whose SL2VL or
//     VL arbitration differs) reads back as "<value> (not programmed:
//     ...)", so the plan shows it as a change, and as drift against the
//     applied record; apply then signals opensm even though no file
//     changes, and waits for the heavy sweep to program it;
//   - what no file can change (a link down, a miswired or narrower link,
//     an unreachable node, another MTU) is a plan finding naming the
//     switch or host:nic and port.
//
// Apply waits after SIGHUP until a re-read of the fabric shows what the
// spec asks opensm to program (SweepTimeout at most, then it restores the
// previous files), so validate and the engine's read-back see a settled
// fabric.

// DefaultSweepTimeout bounds apply's wait for opensm's heavy sweep.
const DefaultSweepTimeout = 60 * time.Second

// sweepPoll is how often apply re-reads the fabric while it waits.
const sweepPoll = 500 * time.Millisecond

// fabricView is one read-back of the fabric.
type fabricView struct {
	fab      *ibspec.Fabric
	findings []ibfabric.Finding
	summary  string
	err      error
}

// diagRunner runs infiniband-diags over the session: from the spec's
// diags_dir when set, through sudo -n when the host says sudo. Over SSH it
// is an ibfabric.BatchRunner: Discover's smpquery calls go to the SM host
// as one command (one SSH session), which runs them there in parallel.
// A local runner is not batched: there the batch shell only adds
// processes (make bench-ib).
func (s *session) diagRunner() ibfabric.Runner {
	if _, ssh := s.r.(sshRunner); ssh {
		return batchDiags{sessionDiags{s}}
	}
	return sessionDiags{s}
}

type sessionDiags struct{ s *session }

// batchDiags is sessionDiags with RunBatch.
type batchDiags struct{ sessionDiags }

func (d sessionDiags) prog(name string) string {
	if d.s.sm != nil && d.s.sm.DiagsDir != "" {
		return path.Join(d.s.sm.DiagsDir, name)
	}
	return name
}

func (d sessionDiags) prefix() string {
	if d.s.sudo {
		return "sudo -n --"
	}
	return ""
}

func (d sessionDiags) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	var b strings.Builder
	if p := d.prefix(); p != "" {
		b.WriteString(p + " ")
	}
	b.WriteString(shq(d.prog(name)))
	for _, a := range args {
		b.WriteString(" " + shq(a))
	}
	out, errb, code, err := d.s.r.run(ctx, b.String(), nil)
	switch {
	case err != nil:
		return out, d.s.runErr(name, err)
	case code != 0:
		return out, fmt.Errorf("%s: exit %d: %s", name, code, lastLine(errb))
	}
	return out, nil
}

func (d batchDiags) RunBatch(ctx context.Context, name string, argsList [][]string, parallel int) ([]ibfabric.BatchResult, error) {
	return ibfabric.ShellBatch(ctx, d.s.r.run, d.prefix(), d.prog(name), argsList, parallel)
}

// hasFabric reports whether the subnet manager's spec cables an
// InfiniBand fabric to read back.
func hasFabric(sm *intent.SubnetManager) bool {
	return sm != nil && sm.Source != nil && ibspec.HasFabric(sm.Source)
}

type withoutFabricKey struct{}

// WithoutFabric returns a context in which Read compares the files only
// and leaves the fabric alone: for a caller that reads the fabric itself
// (validate's InfiniBand stage), so it is not discovered twice.
func WithoutFabric(ctx context.Context) context.Context {
	return context.WithValue(ctx, withoutFabricKey{}, true)
}

func fabricSkipped(ctx context.Context) bool { v, _ := ctx.Value(withoutFabricKey{}).(bool); return v }

// readFabric discovers the fabric and compares it with the spec; nil
// when the spec has no InfiniBand cabling.
func readFabric(ctx context.Context, s *session, o ibfabric.Options) *fabricView {
	sm := s.sm
	if !hasFabric(sm) {
		return nil
	}
	v := &fabricView{}
	f, err := ibspec.FromSpec(sm.Source)
	if err != nil {
		v.err = fmt.Errorf("the spec's InfiniBand topology: %w", err)
		return v
	}
	v.fab = f
	fab, err := ibfabric.Discover(ctx, s.diagRunner(), o)
	if err != nil {
		v.err = fmt.Errorf("discover the fabric: %w", err)
		return v
	}
	v.summary = fab.Summary()
	v.findings, v.err = ibfabric.Compare(f.Intent(sm.Source, sm), fab)
	return v
}

// programmed reports whether a finding is about something opensm
// programs from its files (a SIGHUP and a heavy sweep settle it).
func programmed(k ibfabric.Kind) bool {
	switch k {
	case ibfabric.KindPKeyMissing, ibfabric.KindPKeyMember, ibfabric.KindSwitchPKey, ibfabric.KindSL2VL, ibfabric.KindVLArb:
		return true
	}
	return false
}

// pending lists the findings opensm should settle, as text.
func (v *fabricView) pending() []string {
	var out []string
	for _, f := range v.findings {
		if programmed(f.Kind) {
			out = append(out, v.fab.Name(f.Node, f.Port)+": "+f.Message)
		}
	}
	return out
}

// annotate marks, in the live state read from the files, the settings
// the files carry as the spec says but the fabric does not: their value
// gets " (not programmed: ...)", so they differ from the desired value.
func (v *fabricView) annotate(live, desired intent.State) {
	if v == nil || v.err != nil {
		return
	}
	portGUID := map[string]map[int]string{}
	for _, h := range v.fab.Topology.HCAs {
		m := map[int]string{}
		for p := 1; p <= h.NumPorts(); p++ {
			m[p] = ibfabric.GUID(h.PortGUID(p))
		}
		portGUID[h.Name] = m
	}
	notes := map[string][]string{}
	var order []string
	note := func(key, why string) {
		if want, ok := desired[key]; !ok || live[key] != want {
			return // the file differs already: that is the change
		}
		if _, seen := notes[key]; !seen {
			order = append(order, key)
		}
		notes[key] = append(notes[key], why)
	}
	for _, f := range v.findings {
		where := v.fab.Name(f.Node, f.Port)
		switch f.Kind {
		case ibfabric.KindPKeyMissing:
			note(intent.PathPartitions+f.Subject+"/member/"+portGUID[f.Node][f.Port], "the P_Key is missing on "+where)
		case ibfabric.KindPKeyMember:
			note(intent.PathPartitions+f.Subject+"/member/"+portGUID[f.Node][f.Port], where+": "+f.Message)
		case ibfabric.KindSL2VL:
			note(intent.PathOpenSM+"qos_sl2vl", where+": "+f.Message)
		case ibfabric.KindVLArb:
			note(intent.PathOpenSM+"qos_vlarb_"+f.Subject, where+": "+f.Message)
		}
	}
	for _, k := range order {
		ws := notes[k]
		why := ws[0]
		if len(ws) > 1 {
			why += fmt.Sprintf(" (and %d more ports)", len(ws)-1)
		}
		live[k] = live[k] + " (not programmed: " + why + ")"
	}
}

// planFindings are the plan's findings of a read-back: what no file
// changes (cabling, link state, width, speed, MTU, enforcement on switch
// ports), or why the fabric could not be read.
func (v *fabricView) planFindings(smName string) []drivers.Finding {
	if v == nil {
		return nil
	}
	if v.err != nil {
		return []drivers.Finding{{Severity: "warning", Path: "fabric",
			Message: fmt.Sprintf("the fabric was not read back on %s (%v): plan shows the files only; check infiniband-diags there (diags_dir)", smName, v.err)}}
	}
	var out []drivers.Finding
	for _, f := range v.findings {
		switch f.Kind {
		case ibfabric.KindPKeyMissing, ibfabric.KindPKeyMember, ibfabric.KindSL2VL, ibfabric.KindVLArb, ibfabric.KindNotQueried:
			continue // in the state (annotate), or nothing to say
		}
		p := "fabric/" + f.Node
		if f.Port > 0 {
			p += fmt.Sprintf("/%d", f.Port)
		}
		out = append(out, drivers.Finding{Severity: "warning", Path: p,
			Message: fmt.Sprintf("%s: %s [%s]", v.fab.Name(f.Node, f.Port), f.Message, f.Kind)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// sweepTimeout is the driver's bound on apply's wait.
func (d *Driver) sweepTimeout() time.Duration {
	if d.Opts.SweepTimeout > 0 {
		return d.Opts.SweepTimeout
	}
	return DefaultSweepTimeout
}

// waitProgrammed re-reads the fabric until opensm has programmed what the
// spec asks (no P_Key, SL2VL or VL arbitration finding left), at most
// timeout. It returns the time it waited, or an error naming the ports
// still not programmed.
func waitProgrammed(ctx context.Context, s *session, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last []string
	var lastErr error
	for {
		// What opensm programs only: P_Key and QoS tables, no PortInfo.
		v := readFabric(ctx, s, ibfabric.Options{PKeys: true, QoS: true})
		if v == nil {
			return 0, nil
		}
		if v.err == nil {
			if last = v.pending(); len(last) == 0 {
				return time.Since(start), nil
			}
		} else {
			lastErr = v.err
		}
		select {
		case <-ctx.Done():
			switch {
			case len(last) > 0:
				more := ""
				if len(last) > 3 {
					more = fmt.Sprintf("; and %d more", len(last)-3)
					last = last[:3]
				}
				return time.Since(start), fmt.Errorf("opensm did not program the fabric within %s of SIGHUP (the fabric read back still differs: %s%s); check opensm's log on %s", timeout, strings.Join(last, "; "), more, s.name)
			case lastErr != nil:
				return time.Since(start), fmt.Errorf("the fabric could not be read back within %s of SIGHUP: %v", timeout, lastErr)
			}
			return time.Since(start), fmt.Errorf("the fabric read-back did not settle within %s of SIGHUP", timeout)
		case <-time.After(sweepPoll):
		}
	}
}
