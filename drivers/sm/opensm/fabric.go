package opensm

import (
	"context"
	"fmt"
	"os"
	"path"
	"sort"
	"strconv"
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
// Read also discovers the fabric on the SM host (fabctl's MAD client,
// `fabctl ibmad`, from diags_dir; infiniband-diags when it is not there;
// drivers/sm/ibfabric) and:
//
//   - reads every cabled port's P_Keys, SL-to-VL and VL arbitration
//     tables into the state under intent.PathFabric, which the spec's
//     desired state carries too (intent SubnetManager.Ports): a port
//     that lost a P_Key, holds one it should not, or has another table
//     than opensm.conf says is a change, on adapter and switch ports
//     alike, and drift against the applied record;
//   - reports what no change fixes (a link down, a miswired, narrower or
//     slower link, an unreachable or undeclared node, another MTU, a
//     port that could not be read) as findings of severity error, naming
//     the port the spec's way with its GUID and LID.
//
// Apply writes the files and signals opensm when a file changed, then
// settles the ports: opensm programs a port table only when the table it
// keeps for the port differs from what it computes, or when it re-reads
// the port (opensm 3.3.23: osm_pkey_mgr.c pkey_mgr_update_port compares
// the new block with the stored one; osm_qos.c sl2vl_update_table and
// vlarb_update_table_block likewise, unless force_update; the stored
// tables are re-read from a port only when it needs an update:
// osm_port_info_rcv.c osm_pi_rcv_update_self sets need_update for a port
// in INIT, a new port or a subnet that needs an update, and only then
// pi_rcv_get_pkey_slvl_vla_tables reads its tables; a heavy sweep on
// SIGHUP, main.c osm_hup_flag -> force_heavy_sweep, reads PortInfo again
// but not those tables). So a port whose table was changed behind
// opensm's back keeps it across any number of SIGHUPs. fabctl restores
// such a port itself: it reads the table opensm keeps for it from the
// subnet administrator (PKeyTableRecord, SL2VLTableRecord,
// VLArbitrationTableRecord: osm_sa_pkey_record.c and its siblings answer
// from those stored tables) and, when that record is what the spec asks,
// sets the port to it with the SMP opensm itself would send; when the
// record is not (opensm has not applied its files), it signals opensm
// and waits for the sweep. Then it reads the ports back.

// DefaultSweepTimeout bounds apply's wait for opensm's heavy sweep.
const DefaultSweepTimeout = 60 * time.Second

// sweepPoll is how often apply re-reads the fabric while it waits.
const sweepPoll = 500 * time.Millisecond

// fabricView is one read-back of the fabric.
type fabricView struct {
	fab      *ibspec.Fabric
	fabric   *ibfabric.Fabric
	findings []ibfabric.Finding
	// live holds the ports' tables as state (intent.PathFabric).
	live    intent.State
	summary string
	err     error
}

// diagRunner runs infiniband-diags and fabctl's MAD client over the
// session: from the spec's diags_dir when set, through sudo -n when the
// host says sudo. Over SSH it is an ibfabric.BatchRunner: the smpquery
// calls of a fallback read go to the SM host as one command (one SSH
// session), which runs them there in parallel.
func (s *session) diagRunner() ibfabric.Runner {
	if _, ssh := s.r.(sshRunner); ssh {
		return batchDiags{sessionDiags{s}}
	}
	return sessionDiags{s}
}

type sessionDiags struct{ s *session }

// batchDiags is sessionDiags with RunBatch.
type batchDiags struct{ sessionDiags }

// prog is the program's path on the SM host: diags_dir/name, else the
// name on PATH; fabctl's MAD client on this machine (sm_connect local
// without diags_dir) is this very fabctl.
func (d sessionDiags) prog(name string) string {
	if d.s.sm != nil && d.s.sm.DiagsDir != "" {
		return path.Join(d.s.sm.DiagsDir, name)
	}
	if _, local := d.s.r.(localRunner); local && name == ibfabric.MADProgram {
		if exe, err := os.Executable(); err == nil {
			return exe
		}
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
	return d.RunInput(ctx, nil, name, args...)
}

func (d sessionDiags) RunInput(ctx context.Context, stdin []byte, name string, args ...string) ([]byte, error) {
	var b strings.Builder
	if p := d.prefix(); p != "" {
		b.WriteString(p + " ")
	}
	b.WriteString(shq(d.prog(name)))
	for _, a := range args {
		b.WriteString(" " + shq(a))
	}
	out, errb, code, err := d.s.r.run(ctx, b.String(), stdin)
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
	v := &fabricView{live: intent.State{}}
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
	v.fabric = fab
	v.summary = fab.Summary()
	v.findings, v.err = ibfabric.Compare(f.Intent(sm.Source, sm), fab)
	names := pkeyNames(sm)
	for _, fp := range sm.Ports {
		n, p := v.port(fp)
		if p == nil || p.Peer == nil {
			continue
		}
		w := ibspec.Want(sm, fp)
		if v.miswiredSwitchPort(fp) {
			w.PKeys = nil // they follow the adapter it faces (notRead)
		}
		for k, val := range ibfabric.TableValues(n, p, w, names, false) {
			v.live[fp.Path()+k] = val
		}
	}
	return v
}

func pkeyNames(sm *intent.SubnetManager) map[uint16]string {
	m := map[uint16]string{}
	for _, p := range sm.Partitions {
		m[uint16(p.PKey&0x7fff)] = p.Name
	}
	return m
}

// port returns the discovered node and port of a fabric port (nil when
// not found).
func (v *fabricView) port(fp intent.FabricPort) (*ibfabric.Node, *ibfabric.Port) {
	if v == nil || v.fab == nil || v.fabric == nil {
		return nil, nil
	}
	r, ok := v.fab.Ref(fp)
	if !ok {
		return nil, nil
	}
	g, ok := v.fab.Topology.NodeGUID(r.Node)
	if !ok {
		return nil, nil
	}
	n := v.fabric.Nodes[g]
	if n == nil {
		return nil, nil
	}
	return n, n.Ports[r.Port]
}

// miswiredSwitchPort reports whether a switch port is cabled to another
// port than the spec says.
func (v *fabricView) miswiredSwitchPort(fp intent.FabricPort) bool {
	if !fp.Switch || v.fab == nil || v.fabric == nil {
		return false
	}
	r, ok := v.fab.Ref(fp)
	return ok && !ibfabric.CabledAsIntended(v.fab.Topology, v.fabric, r)
}

// notRead says why a fabric port's desired setting has no live value:
// its port was not reached or read, or has no such table.
func (v *fabricView) notRead(fp intent.FabricPort, attr string) string {
	where := fp.Name()
	n, p := v.port(fp)
	switch {
	case v.err != nil:
		return "the fabric was not read back: " + v.err.Error()
	case n == nil:
		return "not read: " + where + "'s node was not found in the fabric (see the findings)"
	case p == nil || p.Peer == nil:
		if p != nil && p.Err != "" {
			return "not read: " + where + ": " + p.Err
		}
		return "not read: the link at " + where + " is down (see the findings)"
	case p.Err != "":
		return "not read: " + where + ": " + p.Err
	case strings.HasPrefix(attr, "pkey/") && v.miswiredSwitchPort(fp):
		return where + " is cabled to another port than the spec says (see the findings): its P_Keys follow the adapter it faces"
	case attr == "sl2vl" && (p.Info != nil && !p.Info.HasSLMap || n.Type == ibfabric.Switch && n.Ports[0] != nil && n.Ports[0].Info != nil && !n.Ports[0].Info.HasSLMap):
		return where + " has no SL-to-VL table (PortInfo IsSLMappingSupported is 0): opensm programs none (osm_qos.c)"
	case strings.HasPrefix(attr, "vlarb_") && p.Info != nil && p.Info.VLCap <= 1:
		return where + " has one data VL (VLCap VL0): no VL arbitration to program (osm_qos.c vlarb_update)"
	}
	return "not read: " + where + ": the table was not read"
}

// unexpressible are the desired fabric settings the last read could not
// judge, with the reason.
func (lf *liveFiles) unexpressible(sm *intent.SubnetManager, desired intent.State) map[string]string {
	out := map[string]string{}
	if lf == nil || !hasFabric(sm) {
		return out
	}
	for _, fp := range sm.Ports {
		pre := fp.Path()
		for k := range desired {
			attr, ok := strings.CutPrefix(k, pre)
			if !ok {
				continue
			}
			switch {
			case lf.fabricSkipped:
				out[k] = "the InfiniBand stage of validate reads the fabric's ports"
			case lf.fabric == nil:
			case lf.fabric.err != nil:
				out[k] = lf.fabric.notRead(fp, attr)
			default:
				if _, read := lf.fabric.live[k]; read {
					continue
				}
				if strings.HasPrefix(attr, "pkey/") && !lf.fabric.miswiredSwitchPort(fp) {
					// A missing P_Key of a port whose table was read is
					// a change, not a gap.
					if _, p := lf.fabric.port(fp); p != nil && p.Peer != nil && p.PKeys != nil && p.Err == "" {
						continue
					}
				}
				out[k] = lf.fabric.notRead(fp, attr)
			}
		}
	}
	return out
}

// planFindings are the plan's findings of a read-back: what no change
// fixes (cabling, links, nodes, MTU, unreadable ports) as errors, or why
// the fabric could not be read; how it was read when fabctl's MAD client
// was not there.
func (v *fabricView) planFindings(smName string) []drivers.Finding {
	if v == nil {
		return nil
	}
	if v.err != nil {
		return []drivers.Finding{{Severity: drivers.SeverityError, Path: "fabric", Kind: string(ibfabric.KindUnreadable),
			Message: fmt.Sprintf("the fabric was not read back on %s (%v): its cabling and port tables are not judged; check fabctl or infiniband-diags there (diags_dir)", smName, v.err)}}
	}
	var out []drivers.Finding
	if v.fabric != nil && v.fabric.Note != "" {
		out = append(out, drivers.Finding{Severity: "info", Path: "fabric", Message: v.fabric.Note + "; put fabctl in diags_dir on " + smName + " for the one-process read and port-table restores"})
	}
	for _, f := range v.findings {
		if f.Kind.Restorable() || f.Kind == ibfabric.KindNotQueried {
			continue // in the state as changes, or nothing to say
		}
		p := "fabric/" + f.Node
		if f.Port > 0 {
			p += "/" + strconv.Itoa(f.Port)
		}
		out = append(out, drivers.Finding{Severity: drivers.SeverityError, Path: p, Kind: string(f.Kind),
			Message: fmt.Sprintf("%s: %s [%s]", f.Where, f.Message, f.Kind), IDs: findingIDs(f)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// findingIDs are the fabric's identifiers of a finding's node and port.
func findingIDs(f ibfabric.Finding) map[string]string {
	ids := map[string]string{}
	if f.NodeGUID != 0 {
		ids["node_guid"] = ibfabric.GUID(f.NodeGUID)
	}
	if f.PortGUID != 0 {
		ids["port_guid"] = ibfabric.GUID(f.PortGUID)
	}
	if f.LID != 0 {
		ids["lid"] = strconv.Itoa(f.LID)
	}
	if f.Port > 0 {
		ids["port"] = strconv.Itoa(f.Port)
	}
	if len(ids) == 0 {
		return nil
	}
	return ids
}

// sweepTimeout is the driver's bound on apply's wait.
func (d *Driver) sweepTimeout() time.Duration {
	if d.Opts.SweepTimeout > 0 {
		return d.Opts.SweepTimeout
	}
	return DefaultSweepTimeout
}
