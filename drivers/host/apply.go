package host

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/dcbnl"
	"github.com/fabctl/fabctl/internal/safefile"
	"github.com/vishvananda/netlink"
)

// snapshot is a NIC's state before a transaction, for restore.
type snapshot struct {
	NIC   string      `json:"nic"`
	MTU   int         `json:"mtu"`
	Up    bool        `json:"up"`
	Addrs []string    `json:"addresses"`
	DCB   *dcbnl.IEEE `json:"dcb,omitempty"`
	Pause *bool       `json:"pause,omitempty"`
	VLAN  *vlanSnap   `json:"vlan,omitempty"` // vlan.go
	// FWLLDP is the ice fw-lldp-agent private flag before (nicfamily.go).
	FWLLDP *bool `json:"fw_lldp,omitempty"`
}

// dcbOf returns the DCB state prepare read for a NIC (nil if none).
func (t *token) dcbOf(nic string) *dcbnl.IEEE {
	for i := range t.NICs {
		if t.NICs[i].NIC == nic {
			return t.NICs[i].DCB
		}
	}
	return nil
}

type token struct {
	NICs    []snapshot `json:"nics"`
	EnvFile string     `json:"env_file,omitempty"`
	Env     *string    `json:"env,omitempty"` // prior content; nil: file absent
	// Sys are the sysfs/configfs/procfs snapshots (sysfeat.go);
	// IRQBalance says the transaction stopped irqbalance.
	Sys        []sysSnap `json:"sys,omitempty"`
	IRQBalance bool      `json:"irqbalance_stopped,omitempty"`
}

// Apply applies the change list as one transaction. Everything the host
// cannot do is found before anything is touched; a failure part-way
// restores the NICs' prior state, or returns a PartialError.
func (d *Driver) Apply(ctx context.Context, t drivers.Target, changes []drivers.Change, _ drivers.ApplyOptions) (drivers.Result, error) {
	h, err := hostOf(t)
	if err != nil {
		return drivers.Result{}, err
	}
	if h.Connect.Kind == "ssh" {
		return d.applyRemote(ctx, t, h, changes)
	}
	s, err := open(h)
	if err != nil {
		return drivers.Result{}, err
	}
	defer s.close()
	nics := map[string]*intent.NIC{}
	for i := range h.NICs {
		nics[h.NICs[i].Name] = &h.NICs[i]
	}
	// What to do, per NIC and feature, and the pre-checks.
	todo := map[string]map[string]bool{}
	var order []string
	var problems []string
	for _, ch := range changes {
		for _, p := range ch.Paths {
			nic, f := nicOf(p), feature(p)
			if nic != "" && nics[nic] == nil {
				problems = append(problems, fmt.Sprintf("%s: not in the spec", nic))
				continue
			}
			if nic != "" && !applicable(f) {
				problems = append(problems, notBuilt(f, nic))
				continue
			}
			if todo[nic] == nil {
				todo[nic] = map[string]bool{}
				order = append(order, nic)
			}
			todo[nic][f] = true
		}
	}
	tok := token{}
	for _, nic := range order {
		if nic == "" {
			continue
		}
		snap, probs := d.prepare(s, nic, todo[nic])
		problems = append(problems, probs...)
		if snap != nil && todo[nic]["vlan"] {
			snap.VLAN, probs = prepareVLAN(s, nics[nic])
			problems = append(problems, probs...)
		}
		if snap != nil {
			tok.NICs = append(tok.NICs, *snap)
		}
	}
	sysSnaps, probs := prepareSys(s, h, todo)
	problems = dedup(append(problems, probs...))
	tok.Sys = sysSnaps
	if len(problems) > 0 {
		return drivers.Result{}, fmt.Errorf("%s: nothing applied: %s", h.Name, strings.Join(problems, "; "))
	}
	if todo[""]["nccl"] {
		tok.EnvFile = h.NCCLEnvFile
		if b, err := safefile.ReadFile(h.NCCLEnvFile, safefile.Host); err == nil {
			v := string(b)
			tok.Env = &v
		}
	}
	raw, _ := json.Marshal(tok)
	res := drivers.Result{Token: string(raw)}
	fail := func(err error) (drivers.Result, error) {
		if rerr := restore(s, h, tok); rerr != nil {
			return drivers.Result{}, &drivers.PartialError{Device: t.Device.Addr(), Err: fmt.Errorf("%v; restore: %v", err, rerr)}
		}
		return drivers.Result{}, err
	}
	if todo[""]["irqbalance"] && h.IRQBalance == "stop" {
		// Before the IRQs are pinned, or irqbalance moves them again.
		stopped, err := stopIRQBalance()
		tok.IRQBalance = stopped
		raw, _ = json.Marshal(tok)
		res.Token = string(raw)
		if err != nil {
			return fail(err)
		}
	}
	for _, nic := range order {
		if nic == "" {
			continue
		}
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		if err := applyNIC(s, nics[nic], todo[nic], tok.dcbOf(nic)); err != nil {
			return fail(err)
		}
	}
	if err := applySys(s, h, todo); err != nil {
		return fail(err)
	}
	if todo[""]["nccl"] {
		env, _, _ := ncclEnv(h)
		if err := writeEnvFile(h.NCCLEnvFile, env); err != nil {
			return fail(err)
		}
	}
	return res, nil
}

func dedup(v []string) []string {
	seen := map[string]bool{}
	out := v[:0]
	for _, s := range v {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// prepare snapshots a NIC and checks that every feature to apply is
// possible on it.
func (d *Driver) prepare(s *session, nic string, feats map[string]bool) (*snapshot, []string) {
	link, err := s.nl.LinkByName(nic)
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: no such network device on %s", nic, s.name)}
	}
	snap := &snapshot{NIC: nic, MTU: link.Attrs().MTU, Up: link.Attrs().Flags&unixIFFUp != 0}
	if snap.Addrs, err = readAddrs(s, link); err != nil {
		return nil, []string{fmt.Sprintf("%s: addresses: %v", nic, err)}
	}
	var probs []string
	if feats["ets"] || feats["pfc"] || feats["app"] || feats["cable_len"] || feats["maxrate"] || feats["buffer"] {
		ieee, err := s.dcb.IEEE(nic)
		if err != nil {
			probs = append(probs, err.Error())
		} else {
			snap.DCB = ieee
		}
	}
	if feats["firmware_lldp"] {
		on, has, err := fwLLDP(s, nic)
		switch {
		case err != nil:
			probs = append(probs, fmt.Sprintf("%s: ethtool private flags: %v", nic, err))
		case !has:
			probs = append(probs, fmt.Sprintf("%s: no %s private flag", nic, iceLLDPFlag))
		default:
			snap.FWLLDP = &on
		}
	}
	if feats["pause"] {
		v, err := readPause(s, nic)
		if err != nil {
			probs = append(probs, err.Error())
		} else {
			b := v == "true"
			snap.Pause = &b
		}
	}
	return snap, probs
}

const unixIFFUp = 1 // net.FlagUp

// applyNIC applies a NIC's netlink features. cur is its DCB state as the
// transaction's prepare read it: ETS, PFC and APP are each set from it
// (read-modify-write, one feature per message) without reading again.
func applyNIC(s *session, n *intent.NIC, feats map[string]bool, cur *dcbnl.IEEE) error {
	link, err := s.nl.LinkByName(n.Name)
	if err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	if feats["mtu"] {
		if err := s.nl.LinkSetMTU(link, n.MTU); err != nil {
			return fmt.Errorf("%s: set mtu %d: %w", n.Name, n.MTU, err)
		}
		if err := s.nl.LinkSetUp(link); err != nil {
			return fmt.Errorf("%s: set up: %w", n.Name, err)
		}
	}
	if feats["addresses"] {
		if err := setAddrs(s, link, n.Addresses); err != nil {
			return err
		}
	}
	if feats["vlan"] { // after the NIC's MTU: a VLAN's MTU cannot exceed it
		if err := applyVLAN(s, n); err != nil {
			return err
		}
	}
	if feats["firmware_lldp"] && n.FirmwareLLDP != nil {
		// ice: before any DCB write, which EINVALs while the agent runs.
		if err := setFWLLDP(s, n.Name, *n.FirmwareLLDP); err != nil {
			return err
		}
	}
	if (feats["ets"] || feats["pfc"] || feats["app"] || feats["cable_len"] || feats["maxrate"] || feats["buffer"]) && cur == nil {
		if cur, err = s.dcb.IEEE(n.Name); err != nil {
			return err
		}
	}
	fam := famMLX5
	if feats["ets"] || feats["pfc"] || feats["app"] {
		fam = nicFamily(s, n)
	}
	if fam == famBNXT && cur.DCBX != nil && *cur.DCBX&dcbnl.DCBXHost == 0 {
		// bnxt_dcbnl_ieee_set*: -EINVAL unless IEEE + HOST DCBX.
		if err := s.dcb.SetDCBX(n.Name, dcbnl.DCBXHost|dcbnl.DCBXVerIEEE); err != nil {
			return fmt.Errorf("%s: dcb dcbx set dev %s host ieee (bnxt needs host DCBX): %w", n.Name, n.Name, err)
		}
	}
	setETS := func(cur *dcbnl.IEEE) error {
		want := etsFor(n, fam, cur)
		var e dcbnl.ETS
		if cur.ETS != nil {
			e = *cur.ETS
		}
		before := e
		e.PrioTC, e.TCTSA, e.TCTxBW = want.PrioTC, want.TCTSA, want.TCTxBW
		if fam == famICE && hasDSCPApp(cur) {
			e.PrioTC = before.PrioTC // DSCP mode: ice keeps prio_tc (ice_dcbnl_setets)
		}
		if e != before || cur.ETS == nil {
			return s.dcb.SetETS(n.Name, &e)
		}
		return nil
	}
	if fam == famICE && feats["app"] {
		// ice: the first DSCP entry resets ETS (ice_dcbnl_setapp), so the
		// APP table goes first and ETS is checked again after it.
		if err := setAppsOrdered(s, n.Name, cur, iceApps(n, cur), true); err != nil {
			return err
		}
		fresh, err := s.dcb.IEEE(n.Name)
		if err != nil {
			return err
		}
		if err := setETS(fresh); err != nil {
			return err
		}
		cur = fresh
	} else if feats["ets"] {
		if err := setETS(cur); err != nil {
			return err
		}
	}
	if feats["maxrate"] {
		m := desiredMaxrate(n)
		if cur.Maxrate == nil || *cur.Maxrate != m {
			if err := s.dcb.SetMaxrate(n.Name, &m); err != nil {
				return err
			}
		}
	}
	if feats["buffer"] {
		// Before PFC and the cable length: in manual buffer mode mlx5
		// checks the lossless buffers against them (mlx5e_dcbnl_ieee_setpfc).
		if err := applyBuffer(s, n, cur); err != nil {
			return err
		}
	}
	if feats["pfc"] || feats["cable_len"] {
		var p dcbnl.PFC
		if cur.PFC != nil {
			p = *cur.PFC // keeps the delay (cable length) unless the spec sets it
		}
		before := p
		p.Enable = desiredPFC(n)
		if feats["cable_len"] && n.CableLength > 0 {
			p.Delay = uint16(math.Ceil(float64(n.CableLength)))
		}
		if p.Enable != before.Enable || p.Delay != before.Delay || cur.PFC == nil {
			if err := s.dcb.SetPFC(n.Name, &p); err != nil {
				return err
			}
		}
	}
	if feats["app"] && fam != famICE {
		if err := setAppsOrdered(s, n.Name, cur, desiredAppsFor(n, fam), false); err != nil {
			return err
		}
	}
	if fam == famICE && (feats["ets"] || feats["pfc"] || feats["app"]) {
		// ice resets the netdev after every DCB write that changes
		// something (ice_dcb_nl.c ice_dcbnl_devreset: dev_close +
		// dev_open), and the kernel flushes the IPv6 addresses of the NIC
		// and of its VLAN interface on the way down (unless
		// keep_addr_on_down): put the spec's back.
		if err := reassertAddrs(s, n); err != nil {
			return err
		}
	}
	if feats["pause"] {
		if err := setPause(s, n.Name, n.Pause); err != nil {
			return err
		}
	}
	return nil
}

// reassertAddrs sets the spec's addresses again on the interface that
// carries them (the NIC, or its VLAN interface).
func reassertAddrs(s *session, n *intent.NIC) error {
	name := n.Name
	if n.VLANName != "" {
		name = n.VLANName
	}
	link, err := s.nl.LinkByName(name)
	if err != nil {
		if n.VLANName != "" {
			return nil // no VLAN interface (yet): nothing was flushed on it
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	return setAddrs(s, link, n.Addresses)
}

func setAddrs(s *session, link netlink.Link, want []string) error {
	name := link.Attrs().Name
	have, err := readAddrs(s, link)
	if err != nil {
		return fmt.Errorf("%s: addresses: %w", name, err)
	}
	add, del := addrDelta(strings.Join(have, ","), strings.Join(want, ","))
	for _, a := range del {
		addr, err := netlink.ParseAddr(a)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := s.nl.AddrDel(link, addr); err != nil {
			return fmt.Errorf("%s: ip addr del %s: %w", name, a, err)
		}
	}
	for _, a := range add {
		addr, err := netlink.ParseAddr(a)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := s.nl.AddrAdd(link, addr); err != nil {
			return fmt.Errorf("%s: ip addr add %s: %w", name, a, err)
		}
	}
	return nil
}

// setApps makes the DSCP APP entries exactly want: delete stale entries,
// add missing ones (non-DSCP entries are left alone).
func setApps(s *session, nic string, want []dcbnl.App) error {
	st, err := s.dcb.IEEE(nic)
	if err != nil {
		return err
	}
	return setAppsFrom(s, nic, st, want)
}

// setAppsFrom is setApps from a state just read.
func setAppsFrom(s *session, nic string, st *dcbnl.IEEE, want []dcbnl.App) error {
	return setAppsOrdered(s, nic, st, want, false)
}

// hasDSCPApp says whether a NIC has DSCP APP entries (DSCP trust).
func hasDSCPApp(st *dcbnl.IEEE) bool {
	for _, a := range st.Apps {
		if a.Selector == dcbnl.SelDSCP {
			return true
		}
	}
	return false
}

// managedApp says whether fabctl owns an APP entry: the DSCP table, and
// the RoCE entries (UDP 4791, Ethertype 0x8915) when want has one.
func managedApp(a dcbnl.App, want []dcbnl.App) bool {
	if a.Selector == dcbnl.SelDSCP {
		return true
	}
	for _, w := range want {
		if w.Selector == a.Selector && w.Protocol == a.Protocol {
			return true
		}
	}
	return false
}

// setAppsOrdered makes fabctl's APP entries exactly want. deleteFirst
// (ice) deletes stale entries before adding: ice refuses a DSCP that is
// already mapped ("already user mapped", ice_dcbnl_setapp).
func setAppsOrdered(s *session, nic string, st *dcbnl.IEEE, want []dcbnl.App, deleteFirst bool) error {
	var err error
	wantSet := map[dcbnl.App]bool{}
	for _, a := range want {
		wantSet[a] = true
	}
	haveSet := map[dcbnl.App]bool{}
	var del []dcbnl.App
	for _, a := range st.Apps {
		if !managedApp(a, want) {
			continue
		}
		haveSet[a] = true
		if !wantSet[a] {
			del = append(del, a)
		}
	}
	var add []dcbnl.App
	for _, a := range want {
		if !haveSet[a] {
			add = append(add, a)
		}
	}
	if deleteFirst {
		if err := s.dcb.DelApps(nic, del); err != nil {
			return err
		}
		return s.dcb.AddApps(nic, add)
	}
	// Add before delete: on mlx5 deleting the last DSCP entry switches the
	// port back to PCP trust for a moment.
	if err := s.dcb.AddApps(nic, add); err != nil {
		return err
	}
	if len(add) > 0 && len(del) > 0 {
		// mlx5 keeps one priority per DSCP: adding 26:5 already removed
		// 26:4, and deleting it again fails with ENOENT. The generic
		// table keeps both. Delete what is still there.
		if st, err = s.dcb.IEEE(nic); err != nil {
			return err
		}
		present := map[dcbnl.App]bool{}
		for _, a := range st.Apps {
			present[a] = true
		}
		kept := del[:0]
		for _, a := range del {
			if present[a] {
				kept = append(kept, a)
			}
		}
		del = kept
	}
	return s.dcb.DelApps(nic, del)
}

func setPause(s *session, nic string, on bool) error {
	e, err := s.ethtool()
	if err != nil {
		return fmt.Errorf("%s: ethtool: %w", nic, err)
	}
	pp, err := e.GetPause(nic)
	if err != nil {
		return fmt.Errorf("%s: ethtool get pause: %w", nic, err)
	}
	v := uint32(0)
	if on {
		v = 1
	}
	pp.RxPause, pp.TxPause = v, v
	if _, err := e.SetPause(nic, pp); err != nil {
		return fmt.Errorf("%s: ethtool set pause: %w", nic, err)
	}
	return nil
}

func writeEnvFile(path string, env map[string]string) error {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("# written by fabctl: NCCL settings for this fabric\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, env[k])
	}
	// Atomic through an unpredictable temporary name (safefile): the
	// agent runs as root, and a link planted at a predictable name in the
	// file's directory would redirect the write.
	if err := safefile.WriteFile(path, []byte(b.String()), 0o644, safefile.Host); err != nil {
		return fmt.Errorf("nccl env file: %w", err)
	}
	return nil
}

// Confirm: the host driver commits at once; nothing is pending.
func (d *Driver) Confirm(ctx context.Context, t drivers.Target, r drivers.Result) error { return nil }
