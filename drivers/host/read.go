package host

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/dcbnl"
	"github.com/fabctl/fabctl/internal/safefile"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Read returns the live state of what the spec manages on the host.
func (d *Driver) Read(ctx context.Context, t drivers.Target) (intent.State, error) {
	h, err := hostOf(t)
	if err != nil {
		return nil, err
	}
	if h.Connect.Kind == "ssh" {
		return d.readRemote(ctx, t, h)
	}
	s, err := open(h)
	if err != nil {
		return nil, err
	}
	defer s.close()
	st := intent.State{}
	unsup := map[string]string{}
	facts := map[string]string{}
	st["irqbalance"] = readIRQBalance(h.IRQBalance)
	var fs []drivers.Finding
	if h.NCCLEnvFile != "" {
		want, nfs, unresolved := ncclEnv(h)
		fs = append(fs, nfs...)
		if unresolved != "" {
			unsup["nccl/"+ncclGIDIndex] = unresolved
		}
		for k, v := range readEnvFile(h.NCCLEnvFile) {
			if k == ncclGIDIndex && h.NCCL[k] == "auto" && want[k] != "" && v == want[k] {
				v = "auto" // the index "auto" stands for on this host
			}
			st["nccl/"+k] = v
		}
	}
	for i := range h.NICs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := readNIC(s, &h.NICs[i], st, unsup, facts, &fs); err != nil {
			return nil, err
		}
	}
	sysFs, err := readSys(s, h, st, unsup) // sysfs, configfs, procfs (sysfeat.go)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.unsupported[h.Name] = unsup
	d.facts[h.Name] = facts
	d.findings[h.Name] = append(fs, sysFs...)
	d.mu.Unlock()
	return st, nil
}

func readNIC(s *session, n *intent.NIC, st intent.State, unsup, facts map[string]string, fs *[]drivers.Finding) error {
	p := "nic/" + n.Name + "/"
	link, err := s.nl.LinkByName(n.Name)
	if err != nil {
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) {
			unsup[p] = fmt.Sprintf("%s: no such network device on %s", n.Name, s.name)
			return nil // absent: the plan shows every setting as missing
		}
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	st[p+"mtu"] = strconv.Itoa(link.Attrs().MTU)
	if n.VLANName != "" {
		// The addresses are the VLAN interface's (vlan.go); the NIC's own
		// are not fabctl's then.
		if err := readVLAN(s, n, link, st, unsup); err != nil {
			return err
		}
	} else {
		addrs, err := readAddrs(s, link)
		if err != nil {
			return fmt.Errorf("%s: addresses: %w", n.Name, err)
		}
		st[p+"addresses"] = strings.Join(addrs, ",")
	}
	if n.RoCEMode == "" {
		return nil // iWARP / InfiniBand: no host DCB
	}
	ieee, err := s.dcb.IEEE(n.Name)
	switch {
	case errors.Is(err, dcbnl.ErrNotSupported):
		unsup[p+"dcb"] = n.Name + ": no DCB support in the kernel driver (EOPNOTSUPP)"
	case err != nil:
		return err
	default:
		fam := nicFamily(s, n)
		dcb := intent.State{}
		putDCBFor(dcb, p, ieee, n, fam)
		if f := dcbxFinding(n.Name, ieee); f != nil && fam == famMLX5 {
			*fs = append(*fs, *f) // ice and bnxt: readFamily says what to do
		}
		readFamily(s, n, fam, ieee, st, unsup, fs)
		if f := cmFinding(n, fam); f != nil {
			*fs = append(*fs, *f)
		}
		nicDCBFacts(facts, n, fam, ieee)
		readCableLen(n, fam, ieee, dcb, unsup)
		readMaxrate(n, fam, ieee, dcb, unsup)
		readBuffer(s, n, fam, ieee, dcb, unsup)
		if unsup[p+"dcb"] == "" {
			// The firmware owns DCB (ice LLDP agent, bnxt NVRAM DCBX):
			// its settings are listed as not expressible, not diffed.
			for k, v := range dcb {
				st[k] = v
			}
		}
	}
	if pause, err := readPause(s, n.Name); err != nil {
		unsup[p+"pause"] = err.Error()
	} else {
		st[p+"pause"] = pause
	}
	return nil // ECN, rdma_cm, IRQs: readSys
}

func readAddrs(s *session, link netlink.Link) ([]string, error) {
	list, err := s.nl.AddrList(link, netlink.FAMILY_ALL)
	// The kernel marks a dump that raced with an address change
	// (NLM_F_DUMP_INTR, netlink.ErrDumpInterrupted: a link coming up adds
	// its IPv6 link-local address meanwhile): dump again.
	for i := 0; i < 3 && errors.Is(err, netlink.ErrDumpInterrupted); i++ {
		list, err = s.nl.AddrList(link, netlink.FAMILY_ALL)
	}
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(list))
	for _, a := range list {
		if a.Scope != unix.RT_SCOPE_UNIVERSE || a.IPNet == nil {
			continue // link-local and host-scope addresses are the kernel's
		}
		pf, err := netip.ParsePrefix(a.IPNet.String())
		if err != nil {
			continue
		}
		out = append(out, pf.String())
	}
	sort.Strings(out)
	return out, nil
}

// putDCB writes the DCB part of a NIC's state as Flatten does, for a NIC
// whose classes are not known (the DCB watch): every TC a priority maps to
// is reported under its own number.
func putDCB(st intent.State, p string, ieee *dcbnl.IEEE) { putDCBFor(st, p, ieee, nil, famMLX5) }

// putDCBFor writes the DCB part of a NIC's state as Flatten does: a class
// on priority c is tc/c, read from the TC its priority maps to (prio_tc[c]:
// c itself in fabctl's layout); lossless when PFC is on for c. Other TCs
// some priority maps to are reported under their own number, so a changed
// prio_tc is drift, except when the driver forces the layout (ice in DSCP
// mode makes prio_tc the identity: ice_dcbnl_setapp, ice_dcbnl_setets).
// A code point without a DSCP entry reads as the family's default
// (dscpDefaults).
func putDCBFor(st intent.State, p string, ieee *dcbnl.IEEE, n *intent.NIC, fam family) {
	forced := fam == famICE
	var pfcEn uint8
	if ieee.PFC != nil {
		pfcEn = ieee.PFC.Enable
	}
	var prios []string
	for i := 0; i < 8; i++ {
		if pfcEn&(1<<i) != 0 {
			prios = append(prios, strconv.Itoa(i))
		}
	}
	st[p+"pfc"] = strings.Join(prios, ",")
	tbl := dcbnl.DSCPApps(ieee.Apps)
	trust := "pcp"
	for _, v := range tbl {
		if v >= 0 {
			trust = "dscp" // mlx5: DSCP app entries imply DSCP trust
			break
		}
	}
	st[p+"trust"] = trust
	if trust == "dscp" {
		var table [64]int
		def := dscpDefaults(fam, ieee)
		for i, v := range tbl {
			if v >= 0 {
				table[i] = v
			} else {
				// No entry: the NIC keeps its default mapping (desiredApps).
				table[i] = def[i]
			}
		}
		intent.PutDSCP(st, p, &table)
	}
	if ieee.ETS == nil {
		return
	}
	e := ieee.ETS
	put := func(key, tc int) {
		k := p + "tc/" + strconv.Itoa(key) + "/"
		st[k+"lossless"] = strconv.FormatBool(pfcEn&(1<<key) != 0)
		if e.TCTSA[tc] == dcbnl.TSAETS {
			st[k+"sched"] = "ets"
			st[k+"bandwidth"] = strconv.Itoa(int(e.TCTxBW[tc]))
		} else {
			st[k+"sched"] = "strict"
		}
	}
	reached := [8]bool{}
	if n != nil {
		for _, c := range n.TCs {
			if c.TC < 0 || c.TC > 7 || e.PrioTC[c.TC] > 7 {
				continue
			}
			put(c.TC, int(e.PrioTC[c.TC]))
			reached[e.PrioTC[c.TC]] = true
		}
		if forced && trust == "dscp" {
			return
		}
	}
	for _, tc := range e.PrioTC {
		if tc < 8 && !reached[tc] {
			reached[tc] = true
			put(int(tc), int(tc))
		}
	}
}

func readPause(s *session, name string) (string, error) {
	e, err := s.ethtool()
	if err != nil {
		return "", fmt.Errorf("%s: ethtool: %w", name, err)
	}
	pp, err := e.GetPause(name)
	if err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) {
			return "", fmt.Errorf("%s: global pause not supported by the driver (EOPNOTSUPP)", name)
		}
		return "", fmt.Errorf("%s: ethtool get pause: %w", name, err)
	}
	return strconv.FormatBool(pp.RxPause != 0 || pp.TxPause != 0), nil
}

// readIRQBalance reports the desired value when it holds ("keep" always
// holds: fabctl never starts irqbalance), "running" when "stop" is wanted
// and an irqbalance process exists.
func readIRQBalance(want string) string {
	if want != "stop" {
		return want
	}
	if irqbalanceRunning() {
		return "running"
	}
	return "stop"
}

func readEnvFile(path string) map[string]string {
	out := map[string]string{}
	f, err := safefile.Open(path, safefile.Host)
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out
}
