package host

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// InfiniBand ports, read-only. The link and the subnet manager set
// everything here (port state, rate, LIDs, the P_Key table, the MTU), not
// fabctl, so differences are findings, never planned changes. The kernel
// shows a port under /sys/class/infiniband/<dev>/ports/<n>/ (ib_core
// sysfs.c): state "4: ACTIVE", phys_state "5: LinkUp", rate
// "400 Gb/sec (4X NDR)", lid and sm_lid "0x1", link_layer "InfiniBand",
// pkeys/<i> "0x8001" (bit 15 = full member), gids/0 (the port GUID in its
// low 64 bits). The active MTU is not in sysfs: it comes from
// ibv_query_port, which `ibv_devinfo -d <dev> -i <port>` (ibverbs-utils)
// prints as "active_mtu: 4096 (5)" when ibverbs-utils is installed.

// ibPortInfo is what sysfs (and ibv_devinfo) say about one port.
type ibPortInfo struct {
	Dev        string
	Port       int
	State      string // "ACTIVE", "INIT", "DOWN", ...
	PhysState  string // "LinkUp", "Polling", "Disabled", ...
	Rate       string // as sysfs shows it
	RateGbps   float64
	LID, SMLID int
	LinkLayer  string
	PKeys      map[int]string // base P_Key -> full | limited | both
	GUID       string         // port GUID from gids/0, canonical
	ActiveMTU  int            // 0: unknown
}

var portRE = regexp.MustCompile(`(?m)^\s*port:\s*(\d+)\s*$`)

var activeMTURE = regexp.MustCompile(`(?m)^\s*active_mtu:\s*(\d+)`)

// parseActiveMTU reads a port's "active_mtu: 4096 (5)" from ibv_devinfo
// output (ibvDevinfo, qplimits.go: `ibv_devinfo -v -d <dev>` lists every
// port after a "port: <n>" line); 0 when the port is not there.
func parseActiveMTU(out string, port int) int {
	locs := portRE.FindAllStringSubmatchIndex(out, -1)
	for i, l := range locs {
		if n, _ := strconv.Atoi(out[l[2]:l[3]]); n != port {
			continue
		}
		end := len(out)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		if m := activeMTURE.FindStringSubmatch(out[l[1]:end]); m != nil {
			v, _ := strconv.Atoi(m[1])
			return v
		}
	}
	return 0
}

// ibDeviceOf finds a NIC's RDMA device and port: the spec's device, else
// the netdev's device/infiniband directory; the port is dev_port + 1
// (mlx4 shows ib1 as dev_port 1 on port 2), else 1.
func ibDeviceOf(n *intent.NIC) (string, int) {
	dev := n.Device
	if dev == "" {
		if m, _ := filepath.Glob(filepath.Join(sysRoot, "class/net", n.Name, "device/infiniband/*")); len(m) == 1 {
			dev = filepath.Base(m[0])
		}
	}
	port := 1
	if v, ok := readTrim(filepath.Join(sysRoot, "class/net", n.Name, "dev_port")); ok {
		if p, err := strconv.Atoi(v); err == nil && p >= 0 {
			port = p + 1
		}
	}
	return dev, port
}

// afterColon turns "4: ACTIVE" into "ACTIVE".
func afterColon(s string) string {
	if _, v, ok := strings.Cut(s, ":"); ok {
		return strings.TrimSpace(v)
	}
	return strings.TrimSpace(s)
}

func readIBPort(dev string, port int) (ibPortInfo, bool) {
	dir := filepath.Join(sysRoot, "class/infiniband", dev, "ports", strconv.Itoa(port))
	p := ibPortInfo{Dev: dev, Port: port, PKeys: map[int]string{}}
	st, ok := readTrim(filepath.Join(dir, "state"))
	if !ok {
		return p, false
	}
	p.State = afterColon(st)
	if v, ok := readTrim(filepath.Join(dir, "phys_state")); ok {
		p.PhysState = afterColon(v)
	}
	if v, ok := readTrim(filepath.Join(dir, "rate")); ok {
		p.Rate = v
		if f := strings.Fields(v); len(f) > 0 {
			p.RateGbps, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	for name, dst := range map[string]*int{"lid": &p.LID, "sm_lid": &p.SMLID} {
		if v, ok := readTrim(filepath.Join(dir, name)); ok {
			n, _ := strconv.ParseInt(v, 0, 32)
			*dst = int(n)
		}
	}
	p.LinkLayer, _ = readTrim(filepath.Join(dir, "link_layer"))
	if ents, err := os.ReadDir(filepath.Join(dir, "pkeys")); err == nil {
		for _, e := range ents {
			v, ok := readTrim(filepath.Join(dir, "pkeys", e.Name()))
			if !ok {
				continue
			}
			k, err := strconv.ParseUint(v, 0, 16)
			if err != nil || k&0x7fff == 0 {
				continue // 0x0000: an empty table slot
			}
			base, m := int(k&0x7fff), "limited"
			if k&0x8000 != 0 {
				m = "full"
			}
			if have := p.PKeys[base]; have != "" && have != m {
				m = "both"
			}
			p.PKeys[base] = m
		}
	}
	if v, ok := readTrim(filepath.Join(dir, "gids", "0")); ok {
		// fe80:0000:0000:0000:0c42:a103:0000:0b01: the GUID is the last four groups.
		if g := strings.Split(v, ":"); len(g) == 8 {
			p.GUID, _ = spec.ParseGUID(strings.Join(g[4:], ":"))
		}
	}
	if out, err := ibvDevinfo(dev); err == nil {
		p.ActiveMTU = parseActiveMTU(out, port)
	}
	return p, true
}

// ibFindings compares an InfiniBand NIC's port with what the spec
// expects of it.
func ibFindings(n *intent.NIC) []drivers.Finding {
	if n.IB == nil {
		return nil
	}
	path := "nic/" + n.Name + "/ib"
	warn := func(format string, args ...any) drivers.Finding {
		return drivers.Finding{Severity: "warning", Path: path, Message: n.Name + ": " + fmt.Sprintf(format, args...)}
	}
	info := func(format string, args ...any) drivers.Finding {
		return drivers.Finding{Severity: "info", Path: path, Message: n.Name + ": " + fmt.Sprintf(format, args...)}
	}
	dev, port := ibDeviceOf(n)
	if dev == "" {
		return []drivers.Finding{warn("no RDMA device: the spec names none and /sys/class/net/%s/device/infiniband has none (is the HCA driver loaded?)", n.Name)}
	}
	p, ok := readIBPort(dev, port)
	if !ok {
		return []drivers.Finding{warn("no InfiniBand port %s/%d in sysfs (/sys/class/infiniband/%s/ports/%d): the device is missing or named differently", dev, port, dev, port)}
	}
	where := fmt.Sprintf("%s port %d", dev, port)
	var fs []drivers.Finding
	if p.LinkLayer != "" && p.LinkLayer != "InfiniBand" {
		// An HCA in Ethernet mode: nothing else here applies.
		return append(fs, warn("%s runs link layer %s, not InfiniBand: the HCA is in Ethernet mode (mlxconfig LINK_TYPE_P%d=IB and a reboot)", where, p.LinkLayer, port))
	}
	if n.IB.GUID != "" && p.GUID != "" && p.GUID != n.IB.GUID {
		fs = append(fs, warn("%s has port GUID %s, the spec says guid = %s: opensm's partitions name the wrong port", where, p.GUID, n.IB.GUID))
	}
	active := p.State == "ACTIVE"
	switch {
	case p.PhysState != "" && p.PhysState != "LinkUp":
		fs = append(fs, warn("%s link is %s (state %s): no link to the switch; check the cable and the switch port", where, p.PhysState, p.State))
	case !active && p.SMLID == 0:
		fs = append(fs, warn("%s is %s with no subnet manager (sm_lid 0): it stays there until an SM configures it; is opensm running?", where, p.State))
	case !active:
		fs = append(fs, warn("%s is %s (subnet manager at LID %d): not yet configured", where, p.State, p.SMLID))
	case p.LID == 0 || p.SMLID == 0:
		fs = append(fs, warn("%s is ACTIVE but has LID %d, SM LID %d", where, p.LID, p.SMLID))
	}
	if n.Speed > 0 && p.RateGbps > 0 && p.RateGbps*1e9 < float64(n.Speed) {
		fs = append(fs, warn("%s trained at %s, the spec says %s: a degraded cable, a slower peer or fewer lanes", where, p.Rate, n.Speed))
	}
	if active && n.IB.PKeys != nil {
		var missing, wrong, extra []string
		for _, k := range sortedPKeys(n.IB.PKeys) {
			want, have := n.IB.PKeys[k], p.PKeys[k]
			switch {
			case have == "":
				missing = append(missing, fmt.Sprintf("%s (%s)", intent.PKeyString(k), want))
			case have != want && have != "both":
				wrong = append(wrong, fmt.Sprintf("%s %s, the spec says %s", intent.PKeyString(k), have, want))
			}
		}
		for _, k := range sortedPKeys(p.PKeys) {
			if _, ok := n.IB.PKeys[k]; !ok {
				extra = append(extra, fmt.Sprintf("%s (%s)", intent.PKeyString(k), p.PKeys[k]))
			}
		}
		if len(missing) > 0 {
			fs = append(fs, warn("%s's P_Key table lacks %s: the subnet manager has not applied these partitions (opensm not rerun since partitions.conf changed, or a GUID in the spec is wrong)", where, strings.Join(missing, ", ")))
		}
		if len(wrong) > 0 {
			fs = append(fs, warn("%s holds %s", where, strings.Join(wrong, "; ")))
		}
		if len(extra) > 0 {
			fs = append(fs, info("%s holds P_Keys the spec does not give it: %s", where, strings.Join(extra, ", ")))
		}
	}
	switch {
	case p.ActiveMTU == 0:
		fs = append(fs, info("active MTU of %s not checked: it is not in sysfs and ibv_devinfo (ibverbs-utils) did not report it", where))
	case n.IB.MTU > 0 && p.ActiveMTU < n.IB.MTU:
		fs = append(fs, warn("%s has active MTU %d, below its partitions' IPoIB group MTU %d: the port cannot join those groups", where, p.ActiveMTU, n.IB.MTU))
	case n.RDMAMTU > 0 && p.ActiveMTU < n.RDMAMTU:
		fs = append(fs, warn("%s has active MTU %d, below the fabric's rdma_mtu %d: connections through it run at %d", where, p.ActiveMTU, n.RDMAMTU, p.ActiveMTU))
	}
	return fs
}

func sortedPKeys(m map[int]string) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}
