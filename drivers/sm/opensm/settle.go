package opensm

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fabctl/fabctl/drivers/sm/ibfabric"
	"github.com/fabctl/fabctl/drivers/sm/ibfabric/ibmad"
	"github.com/fabctl/fabctl/drivers/sm/ibfabric/ibspec"
	"github.com/fabctl/fabctl/intent"
)

// Settling the fabric after the files: see fabric.go for why opensm
// alone does not restore a port whose table changed behind its back.

// portDiff is a fabric port whose tables differ from the desired state.
type portDiff struct {
	fp    intent.FabricPort
	attrs map[string]bool // "pkey", "sl2vl", "vlarb"
	paths []string
}

// remaining lists the fabric ports whose live tables differ from the
// desired state (the settings the read could judge).
func remaining(sm *intent.SubnetManager, desired intent.State, v *fabricView) []portDiff {
	var out []portDiff
	for _, fp := range sm.Ports {
		pre := fp.Path()
		d := portDiff{fp: fp, attrs: map[string]bool{}}
		_, p := v.port(fp)
		if p == nil || p.Peer == nil {
			continue // not read: a finding, not a change
		}
		keys := map[string]bool{}
		for k := range desired {
			if strings.HasPrefix(k, pre) {
				keys[k] = true
			}
		}
		for k := range v.live {
			if strings.HasPrefix(k, pre) {
				keys[k] = true
			}
		}
		for k := range keys {
			want, hasWant := desired[k]
			have, hasHave := v.live[k]
			if hasWant == hasHave && want == have {
				continue
			}
			attr := strings.TrimPrefix(k, pre)
			group := attr
			if strings.HasPrefix(attr, "pkey/") {
				group = "pkey"
				if p.PKeys == nil || v.miswiredSwitchPort(fp) {
					continue
				}
			} else if strings.HasPrefix(attr, "vlarb_") {
				group = "vlarb"
				if p.VLArb == nil {
					continue
				}
			} else if !hasHave {
				continue // the table was not read (unexpressible)
			}
			d.attrs[group] = true
			d.paths = append(d.paths, k)
		}
		if len(d.paths) > 0 {
			sort.Strings(d.paths)
			out = append(out, d)
		}
	}
	return out
}

// restoreItems are the MAD client's items that set a port's tables of
// the groups that differ: every P_Key block, every SL2VL table from a
// cabled input port (and port 0) of a switch port, every VL arbitration
// block in use.
func restoreItems(n *ibfabric.Node, p *ibfabric.Port, attrs map[string]bool) []ibmad.RestoreItem {
	sw := n.Type == ibfabric.Switch
	lid := p.LID
	if sw {
		lid = n.LID
	}
	var out []ibmad.RestoreItem
	if attrs["pkey"] {
		cap := n.PKeyCap
		if sw {
			cap = n.EnforceCap
		}
		for b := 0; b < (cap+31)/32; b++ {
			out = append(out, ibmad.RestoreItem{Attr: ibmad.AttrPKeyTable, LID: lid, Switch: sw, Port: p.Num, Block: b})
		}
	}
	if attrs["sl2vl"] {
		if !sw {
			out = append(out, ibmad.RestoreItem{Attr: ibmad.AttrSL2VL, LID: lid, Out: p.Num})
		} else {
			for _, in := range sortedInts(p.SL2VL) {
				out = append(out, ibmad.RestoreItem{Attr: ibmad.AttrSL2VL, LID: lid, Switch: true, In: in, Out: p.Num})
			}
		}
	}
	if attrs["vlarb"] && p.VLArb != nil {
		lo, hi := p.VLArb.LowCap, p.VLArb.HighCap
		for _, b := range []struct {
			block int
			ok    bool
		}{{1, lo > 0}, {2, lo > 32}, {3, hi > 0}, {4, hi > 32}} {
			if b.ok {
				out = append(out, ibmad.RestoreItem{Attr: ibmad.AttrVLArb, LID: lid, Switch: sw, Port: p.Num, Block: b.block})
			}
		}
	}
	return out
}

func sortedInts(m map[int][16]int) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

// smTables is what a port would hold set to the SM's records: a copy of
// the port with its tables of the restored groups replaced.
func smTables(n *ibfabric.Node, p *ibfabric.Port, items []ibmad.RestoreItem, res []ibmad.RestoreResult) (*ibfabric.Port, error) {
	q := *p
	var pkeys []uint16
	sl2vl := map[int][16]int{}
	var va *ibfabric.VLArb
	for i, it := range items {
		r := res[i]
		if r.Error != "" {
			return nil, fmt.Errorf("%s", r.Error)
		}
		b, err := hex.DecodeString(r.SM)
		if err != nil {
			return nil, fmt.Errorf("the MAD client's record: %w", err)
		}
		switch it.Attr {
		case ibmad.AttrPKeyTable:
			keys, err := ibmad.DecodePKeyBlock(b)
			if err != nil {
				return nil, err
			}
			for _, k := range keys {
				if k&0x7fff != 0 {
					pkeys = append(pkeys, k)
				}
			}
			if pkeys == nil {
				pkeys = []uint16{}
			}
		case ibmad.AttrSL2VL:
			t, err := ibmad.DecodeSL2VL(b)
			if err != nil {
				return nil, err
			}
			sl2vl[it.In] = t
		case ibmad.AttrVLArb:
			ws, err := ibmad.DecodeVLArbBlock(b)
			if err != nil {
				return nil, err
			}
			if va == nil {
				va = &ibfabric.VLArb{LowCap: p.VLArb.LowCap, HighCap: p.VLArb.HighCap, High: []ibfabric.VLWeight{}, Low: []ibfabric.VLWeight{}}
			}
			size := va.LowCap
			if it.Block >= 3 {
				size = va.HighCap
			}
			used := min(size, 32)
			if it.Block == 2 || it.Block == 4 {
				used = size - 32
			}
			for _, w := range ws[:max(0, min(used, len(ws)))] {
				if w.Weight == 0 {
					continue
				}
				vw := ibfabric.VLWeight{VL: w.VL, Weight: w.Weight}
				if it.Block >= 3 {
					va.High = append(va.High, vw)
				} else {
					va.Low = append(va.Low, vw)
				}
			}
		}
	}
	if pkeys != nil {
		q.PKeys = pkeys
	}
	if len(sl2vl) > 0 {
		q.SL2VL = sl2vl
	}
	if va != nil {
		q.VLArb = va
	}
	return &q, nil
}

// runRestore runs `fabctl ibmad restore` (dry: read only) on the SM host.
func runRestore(ctx context.Context, s *session, smKey uint64, items []ibmad.RestoreItem, dry bool) ([]ibmad.RestoreResult, error) {
	r, ok := s.diagRunner().(ibfabric.InputRunner)
	if !ok {
		return nil, fmt.Errorf("the runner cannot send requests")
	}
	in, err := json.Marshal(items)
	if err != nil {
		return nil, err
	}
	args := []string{"ibmad", "restore", "--sm-key", strconv.FormatUint(smKey, 10)}
	if dry {
		args = append(args, "--dry")
	}
	out, err := r.RunInput(ctx, in, ibfabric.MADProgram, args...)
	if err != nil {
		return nil, fmt.Errorf("fabctl ibmad restore on %s: %w", s.name, err)
	}
	var res []ibmad.RestoreResult
	if err := json.Unmarshal(out, &res); err != nil || len(res) != len(items) {
		return nil, fmt.Errorf("fabctl ibmad restore on %s: %d answers to %d requests (%v)", s.name, len(res), len(items), err)
	}
	return res, nil
}

// settle brings the fabric ports to the desired state: it re-reads the
// fabric; a port whose SM record is what the spec asks is set to that
// record; when a record is not (opensm has not applied its files yet),
// opensm gets SIGHUP once and fabctl waits for its sweep, at most
// timeout. It returns whether it signalled opensm, and an error naming
// the ports that still differ.
func settle(ctx context.Context, s *session, desired intent.State, pids []int, hupped bool, timeout time.Duration, smKey uint64) (bool, error) {
	sm := s.sm
	deadline := time.Now().Add(timeout)
	tries := map[string]int{}
	for {
		v := readFabric(ctx, s, ibfabric.All)
		if v == nil {
			return hupped, nil
		}
		if v.err != nil {
			if time.Now().After(deadline) || ctx.Err() != nil {
				return hupped, fmt.Errorf("the fabric could not be read back: %v", v.err)
			}
			if err := sleep(ctx, sweepPoll); err != nil {
				return hupped, err
			}
			continue
		}
		rem := remaining(sm, desired, v)
		if len(rem) == 0 {
			return hupped, nil
		}
		var behind []string
		var set []ibmad.RestoreItem
		for _, d := range rem {
			n, p := v.port(d.fp)
			items := restoreItems(n, p, d.attrs)
			if len(items) == 0 {
				behind = append(behind, d.fp.Name()+": no table to restore")
				continue
			}
			res, err := runRestore(ctx, s, smKey, items, true)
			if err != nil {
				return hupped, fmt.Errorf("%s: %w", d.fp.Name(), err)
			}
			after, err := smTables(n, p, items, res)
			if err != nil {
				behind = append(behind, fmt.Sprintf("%s: %v", d.fp.Name(), err))
				continue
			}
			if why := matches(sm, d, n, after, desired); why != "" {
				behind = append(behind, d.fp.Name()+": "+why)
				continue
			}
			if tries[d.fp.Path()]++; tries[d.fp.Path()] > 2 {
				return hupped, fmt.Errorf("%s: set to the subnet manager's record twice, the port reads back otherwise: %s", d.fp.Name(), strings.Join(d.paths, ", "))
			}
			for i, it := range items {
				if res[i].SM != res[i].Before {
					set = append(set, it)
				}
			}
		}
		if len(set) > 0 {
			res, err := runRestore(ctx, s, smKey, set, false)
			if err != nil {
				return hupped, err
			}
			for i, r := range res {
				if r.Error != "" {
					return hupped, fmt.Errorf("restore LID %d attribute 0x%04x: %s", set[i].LID, set[i].Attr, r.Error)
				}
			}
			continue // read back
		}
		if len(behind) == 0 {
			continue
		}
		if !hupped && len(pids) > 0 {
			if err := s.hup(ctx, pids); err != nil {
				return hupped, err
			}
			hupped = true
			continue
		}
		if time.Now().After(deadline) || len(pids) == 0 {
			more := ""
			if len(behind) > 3 {
				more = fmt.Sprintf("; and %d more", len(behind)-3)
				behind = behind[:3]
			}
			why := fmt.Sprintf("within %s of SIGHUP", timeout)
			if len(pids) == 0 {
				why = "and opensm is not running"
			}
			return hupped, fmt.Errorf("opensm has not programmed the fabric as the spec asks %s (its records: %s%s); check opensm's log on %s", why, strings.Join(behind, "; "), more, s.name)
		}
		if err := sleep(ctx, sweepPoll); err != nil {
			return hupped, err
		}
	}
}

// matches says why a port set to its SM records would still differ from
// the desired state ("" when it would not).
func matches(sm *intent.SubnetManager, d portDiff, n *ibfabric.Node, after *ibfabric.Port, desired intent.State) string {
	vals := ibfabric.TableValues(n, after, ibspec.Want(sm, d.fp), pkeyNames(sm), false)
	pre := d.fp.Path()
	var bad []string
	for _, k := range d.paths {
		attr := strings.TrimPrefix(k, pre)
		group := attr
		if strings.HasPrefix(attr, "pkey/") {
			group = "pkey"
		} else if strings.HasPrefix(attr, "vlarb_") {
			group = "vlarb"
		}
		if !d.attrs[group] {
			continue
		}
		if want, have := desired[k], vals[attr]; want != have {
			bad = append(bad, fmt.Sprintf("%s %q (the spec: %q)", attr, have, want))
		}
	}
	return strings.Join(bad, ", ")
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// saKey is the SM_Key the SA wants for trusted queries (PKeyTableRecord):
// opensm.conf's sa_key, else opensm's default 1 (opensm/osm_subnet.c
// osm_subn_set_default_opt: sa_key = OSM_DEFAULT_SA_KEY; the option is
// read with opts_parse_net64, strtoull base 0: hex with 0x, else decimal).
func saKey(lf *liveFiles) uint64 {
	if lf == nil {
		return 1
	}
	v := parseOpenSMConf(lf.conf.Data)["sa_key"]
	if v == "" {
		return 1
	}
	k, err := strconv.ParseUint(strings.ToLower(v), 0, 64)
	if err != nil {
		return 1
	}
	return k
}
