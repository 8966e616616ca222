package local

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/fabctl/fabctl/drivers/host"
	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/internal/safefile"
	"github.com/fabctl/fabctl/spec"
)

// The testbed's Ethernet cabling: every Ethernet link of the spec
// between a namespace host and a switch, or between two switches, is a
// real veth pair. A host's NIC is the host end (in its namespace); a
// switch port is a veth end in the fabric namespace. Interface names are
// at most 15 bytes (IFNAMSIZ 16 with its NUL, include/uapi/linux/if.h)
// and cannot hold '/' (net/core/dev.c dev_valid_name), so a switch
// port's veth end gets a name of its own (PortVeth) and the record keeps
// the table of which veth end is which switch port (Record.Ports).
//
// Each switch with a cabled port, and each host namespace, runs its own
// lldpd (Debian's package: lldpd(8)) limited to its interfaces (-I), on
// a control socket of its own (-u), advertising the device's name (its
// lldp_name when set) and, on a switch, each port's spec name as the
// Port ID (lldpcli(8) "configure ports IF lldp portidsubtype local
// NAME"), so what a port hears is what the real fabric's LLDP would say.

// PortVeth is one switch port's veth end in the fabric namespace.
type PortVeth struct {
	Veth   string `json:"veth"`
	Switch string `json:"switch"`
	Port   string `json:"port"`
}

// Trunk is a switch-to-switch link: a veth pair with both ends in the
// fabric namespace.
type Trunk struct {
	A string `json:"a"` // veth ends (Record.Ports names their switch ports)
	B string `json:"b"`
}

// LLDPAgent is one lldpd the testbed runs.
type LLDPAgent struct {
	// Device is the plan address it speaks for (switch.leaf1, host.h1).
	Device string `json:"device"`
	// Name is the system name it advertises.
	Name   string `json:"name"`
	Netns  string `json:"netns"`
	Socket string `json:"socket"`
	Config string `json:"config"`
	// Interfaces are the interfaces it runs on (-I); on a switch
	// PortIDs gives each one's Port ID (the spec's port name).
	Interfaces []string          `json:"interfaces"`
	PortIDs    map[string]string `json:"port_ids,omitempty"`
	PID        int               `json:"pid,omitempty"`
	// Start is the process's start time (/proc/PID/stat field 22): lldpd
	// rewrites its command line ("lldpd: monitor."), so a recycled pid
	// is told apart by it.
	Start uint64 `json:"start,omitempty"`
}

// EthFaults are the Ethernet faults `fabctl testbed fault` injected and
// has not healed (by switch port, "leaf1:Ethernet0").
type EthFaults struct {
	// Down: the port's veth end is set down (a cable pulled at the
	// switch): the host end loses carrier, the switch's configuration
	// stays up.
	Down []string `json:"down,omitempty"`
	// SpeedMbps: the speed the port reports as trained (a veth has no
	// settable speed: its host end still reads the veth's 10G).
	SpeedMbps map[string]int64 `json:"speed_mbps,omitempty"`
	// Miswired: host NIC pairs whose switch ends were swapped
	// ("h1:eth1", "h3:eth1").
	Miswired [][2]string `json:"miswired,omitempty"`
}

// The lldpd in a host's namespace answers on the socket the host driver
// reads a netns:NAME host's LLDP neighbours through,
// host.LLDPSocket(NAME) = /run/lldpd.netns-NAME.socket (docs/testbed.md).

// switchSocket is a switch's lldpd control socket.
func switchSocket(fabricNS, sw string) string {
	return "/run/lldpd." + fabricNS + "." + sw + ".socket"
}

// vethSpeedMbps is what a veth reports as its speed: the kernel's veth
// answers ETHTOOL_GLINKSETTINGS with a fixed SPEED_10000, full duplex
// (drivers/net/veth.c veth_get_link_ksettings).
const vethSpeedMbps = 10000

// lldpTxInterval is the testbed agents' transmit interval: lldpd's
// default is 30 s with a TTL of four intervals (lldpcli(8) "configure
// lldp tx-interval", "tx-hold"); 1 s brings a re-cabled port's
// neighbour in within about a second and ages a gone one out in 4 s.
const lldpTxInterval = "500ms"

// vethName names a switch port's veth end: SWITCH-PORT when it fits and
// is a valid interface name, else with the port's "Ethernet" prefix
// shortened to "e" and '/' written '_' (leaf3-e1_1), else a hashed
// "fp" name. used holds the names taken.
func vethName(sw, port string, used map[string]bool) string {
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
				return r
			}
			return '_'
		}, s)
	}
	short := port
	for _, p := range []string{"Ethernet", "ethernet-", "Eth"} {
		if strings.HasPrefix(short, p) && len(short) > len(p) {
			short = "e" + short[len(p):]
			break
		}
	}
	for _, n := range []string{clean(sw + "-" + port), clean(sw + "-" + short)} {
		if len(n) <= 15 && !used[n] {
			used[n] = true
			return n
		}
	}
	h := fnv.New32a()
	h.Write([]byte(sw + ":" + port))
	n := fmt.Sprintf("fp%08x", h.Sum32())
	for i := 0; used[n]; i++ {
		n = fmt.Sprintf("fp%08x%d", h.Sum32(), i)
	}
	used[n] = true
	return n
}

// planCabling fills r.Ports, r.Trunks, the host links' switch ends and
// r.LLDP from the spec's Ethernet links. r.Links already holds every
// NIC of the namespace hosts (fabric end named by peerName).
func planCabling(s *spec.Spec, r *Record) error {
	used := map[string]bool{}
	hostLink := map[string]int{} // host:nic -> index in r.Links
	for i, l := range r.Links {
		hostLink[l.Host+":"+l.NIC] = i
	}
	ethSwitch := func(e spec.Endpoint) bool {
		if e.Kind != spec.KindSwitch {
			return false
		}
		sw := s.Switch(e.Node)
		return sw != nil && !sw.InfiniBand
	}
	port := func(e spec.Endpoint) (string, error) {
		key := e.Node + ":" + e.Port
		for _, p := range r.Ports {
			if p.Switch+":"+p.Port == key {
				return "", fmt.Errorf("switch port %s is cabled twice", key)
			}
		}
		v := vethName(e.Node, e.Port, used)
		r.Ports = append(r.Ports, PortVeth{Veth: v, Switch: e.Node, Port: e.Port})
		return v, nil
	}
	for _, l := range s.Links {
		a, b := l.A, l.B
		switch {
		case ethSwitch(a) && ethSwitch(b):
			va, err := port(a)
			if err != nil {
				return err
			}
			vb, err := port(b)
			if err != nil {
				return err
			}
			r.Trunks = append(r.Trunks, Trunk{A: va, B: vb})
		case ethSwitch(a) || ethSwitch(b):
			sw, h := a, b
			if ethSwitch(b) {
				sw, h = b, a
			}
			i, ok := hostLink[h.Node+":"+h.Port]
			if !ok || h.Kind != spec.KindHost {
				continue // not a namespace host's NIC: not the testbed's
			}
			if r.Links[i].Switch != "" {
				return fmt.Errorf("%s:%s is cabled twice", h.Node, h.Port)
			}
			v, err := port(sw)
			if err != nil {
				return err
			}
			r.Links[i].Peer, r.Links[i].Switch, r.Links[i].Port = v, sw.Node, sw.Port
		}
	}
	// Fabric ends of NICs cabled to no switch keep their host-NIC name,
	// unless a port took it.
	for i := range r.Links {
		if r.Links[i].Switch == "" && used[r.Links[i].Peer] {
			r.Links[i].Peer = vethName(r.Links[i].Host, r.Links[i].NIC, used)
		}
	}
	return planAgents(s, r)
}

// planAgents lists the lldpd instances: one per switch with a cabled
// port, one per host namespace.
func planAgents(s *spec.Spec, r *Record) error {
	bySwitch := map[string]*LLDPAgent{}
	for _, p := range r.Ports {
		a := bySwitch[p.Switch]
		if a == nil {
			name := p.Switch
			if sw := s.Switch(p.Switch); sw != nil && sw.LLDPName != "" {
				name = sw.LLDPName
			}
			a = &LLDPAgent{Device: "switch." + p.Switch, Name: name, Netns: r.FabricNetns,
				Socket: switchSocket(r.FabricNetns, p.Switch), PortIDs: map[string]string{}}
			bySwitch[p.Switch] = a
		}
		a.Interfaces = append(a.Interfaces, p.Veth)
		a.PortIDs[p.Veth] = p.Port
	}
	byNS := map[string]*LLDPAgent{}
	var order []*LLDPAgent
	for _, p := range r.Ports {
		if a := bySwitch[p.Switch]; a != nil {
			order = append(order, a)
			delete(bySwitch, p.Switch)
		}
	}
	for _, l := range r.Links {
		a := byNS[l.Netns]
		if a == nil {
			name := l.Host
			if h := s.Host(l.Host); h != nil && h.LLDPName != "" {
				name = h.LLDPName
			}
			a = &LLDPAgent{Device: "host." + l.Host, Name: name, Netns: l.Netns, Socket: host.LLDPSocket(l.Netns)}
			byNS[l.Netns] = a
			order = append(order, a)
		}
		a.Interfaces = append(a.Interfaces, l.NIC)
	}
	for _, a := range order {
		if err := lldpConfigSafe(a); err != nil {
			return err
		}
		r.LLDP = append(r.LLDP, *a)
	}
	return nil
}

// lldpConfigSafe refuses a name that would not stay one word of an
// lldpcli command (the spec's names are checked already; this keeps a
// hand-edited record from reaching lldpcli as another command).
func lldpConfigSafe(a *LLDPAgent) error {
	words := append([]string{a.Name}, a.Interfaces...)
	for _, v := range a.PortIDs {
		words = append(words, v)
	}
	for _, w := range words {
		if w == "" || strings.ContainsFunc(w, func(r rune) bool {
			return r <= ' ' || r == '"' || r == '\'' || r == '\\' || r == '#' || r == ',' || r == 0x7f
		}) {
			return fmt.Errorf("%s: %q cannot be given to lldpd (a blank, quote, comma or control character)", a.Device, w)
		}
	}
	return nil
}

// createTrunk makes a switch-to-switch veth pair in the fabric
// namespace, both ends up with the fabric MTU.
func createTrunk(t Trunk, fabricNS string, f *spec.Fabric) error {
	h, err := nsHandle(fabricNS)
	if err != nil {
		return err
	}
	defer h.Close()
	if err := h.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: t.A}, PeerName: t.B}); err != nil {
		return err
	}
	for _, n := range []string{t.A, t.B} {
		l, err := h.LinkByName(n)
		if err != nil {
			return err
		}
		if err := h.LinkSetMTU(l, fabricMTU(f)); err != nil {
			return err
		}
		if err := h.LinkSetUp(l); err != nil {
			return err
		}
	}
	return nil
}

// nsHandle is an rtnetlink handle in a named namespace (its sockets
// stay there once the namespace's fd is closed).
func nsHandle(name string) (*netlink.Handle, error) {
	ns, err := netns.GetFromName(name)
	if err != nil {
		return nil, fmt.Errorf("network namespace %s: %w", name, err)
	}
	defer ns.Close()
	return netlink.NewHandleAt(ns)
}

func fabricMTU(f *spec.Fabric) int {
	if f != nil && f.MTU > 0 {
		return f.MTU
	}
	return 9000
}

// lldpdMissing says why the testbed runs no LLDP agent ("" when lldpd
// and lldpcli are installed).
func lldpdMissing() string {
	for _, b := range []string{"lldpd", "lldpcli"} {
		if _, err := exec.LookPath(b); err != nil {
			return "lldpd is not installed (Debian package lldpd: apt-get install lldpd)"
		}
	}
	return ""
}

// LLDPLogFile is the agents' shared log in the testbed directory.
const LLDPLogFile = "lldpd.log"

// startAgents starts every agent of the record: its config file, then
// `ip netns exec NS lldpd -d -d` in a session of its own, recorded by
// pid (Down stops exactly those).
func startAgents(r *Record, log io.Writer) error {
	if len(r.LLDP) == 0 {
		return nil
	}
	if why := lldpdMissing(); why != "" {
		r.LLDPNote = why + ": the testbed's ports hear no LLDP neighbours, and its switches report their links unread"
		r.LLDP = nil
		logf(log, "%s", r.LLDPNote)
		return nil
	}
	logPath := filepath.Join(r.Dir, LLDPLogFile)
	lf, err := safefile.Create(logPath, 0o600, safefile.Testbed)
	if err != nil {
		return err
	}
	defer lf.Close()
	r.Files = append(r.Files, logPath)
	for i := range r.LLDP {
		a := &r.LLDP[i]
		if _, err := os.Stat(a.Socket); err == nil {
			if lldpAnswers(a.Socket) {
				return fmt.Errorf("%s: an lldpd already answers on %s", a.Device, a.Socket)
			}
			_ = os.Remove(a.Socket) // stale: its lldpd is gone
		}
		// lldpd has its lldpcli read -O as its unprivileged user
		// (_lldpd), which a testbed directory under a private home may
		// not let in: the config lives beside the socket in /run.
		a.Config = strings.TrimSuffix(a.Socket, ".socket") + ".conf"
		if err := safefile.WriteFile(a.Config, []byte(agentConfig(a)), 0o644, safefile.Testbed); err != nil {
			return err
		}
		r.Files = append(r.Files, a.Config, a.Socket)
		cmd := exec.Command("ip", "netns", "exec", a.Netns, "lldpd", "-d", "-d", "-k",
			"-u", a.Socket, "-I", strings.Join(a.Interfaces, ","), "-C", strings.Join(a.Interfaces, ","), "-O", a.Config)
		cmd.Stdout, cmd.Stderr = lf, lf
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("%s: start lldpd: %w", a.Device, err)
		}
		a.PID = cmd.Process.Pid
		a.Start = procStart(a.PID)
		go func() { _ = cmd.Wait() }() // reaped when this process lives on
	}
	deadline := time.Now().Add(10 * time.Second)
	for i := range r.LLDP {
		for !lldpAnswers(r.LLDP[i].Socket) {
			if time.Now().After(deadline) {
				return fmt.Errorf("%s: lldpd did not answer on %s within 10s; %s says:\n%s", r.LLDP[i].Device, r.LLDP[i].Socket, logPath, tail(logPath, 10))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	logf(log, "LLDP: %d lldpd agents (tx-interval %ss)", len(r.LLDP), lldpTxInterval)
	return nil
}

// agentConfig is the lldpcli commands an agent reads at start (-O):
// lldpcli(8) "configure system hostname", "configure lldp
// tx-interval", "configure ports IF lldp portidsubtype local VALUE".
func agentConfig(a *LLDPAgent) string {
	var b strings.Builder
	fmt.Fprintf(&b, "configure system hostname %s\n", a.Name)
	fmt.Fprintf(&b, "configure lldp tx-interval %s\n", lldpTxInterval)
	for _, ifc := range a.Interfaces {
		if p, ok := a.PortIDs[ifc]; ok {
			fmt.Fprintf(&b, "configure ports %s lldp portidsubtype local %s\n", ifc, p)
		}
	}
	return b.String()
}

// lldpAnswers reports whether an lldpd answers on socket.
func lldpAnswers(socket string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, "lldpcli", "-u", socket, "show", "configuration").Run() == nil
}

// lldpNeighbors runs `lldpcli -u SOCKET -f json show neighbors` and
// parses it (linktruth.ParseLLDPCLI).
func lldpNeighbors(ctx context.Context, socket string) (map[string][]linktruth.Neighbor, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "lldpcli", "-u", socket, "-f", "json", "show", "neighbors").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			return nil, fmt.Errorf("lldpcli -u %s: %v: %s", socket, err, strings.TrimSpace(string(ee.Stderr)))
		}
		return nil, fmt.Errorf("lldpcli -u %s: %w", socket, err)
	}
	return linktruth.ParseLLDPCLI(out)
}

// reconfigurePorts re-applies a switch agent's Port IDs: lldpd keeps a
// port's settings with the interface, so a veth end renamed by a fault
// is a new port to it. It waits (a few seconds at most) until the agent
// reports each port's ID.
func reconfigurePorts(ctx context.Context, a *LLDPAgent) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		pending := 0
		for _, ifc := range a.Interfaces {
			p, ok := a.PortIDs[ifc]
			if !ok {
				continue
			}
			if portIDIs(ctx, a.Socket, ifc, p) {
				continue
			}
			pending++
			_ = exec.CommandContext(ctx, "lldpcli", "-u", a.Socket, "configure", "ports", ifc, "lldp", "portidsubtype", "local", p).Run()
		}
		if pending == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: lldpd did not take its ports' IDs within 5s", a.Device)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// portIDIs reports whether the agent on socket advertises port id on ifc
// (lldpcli -f json show interfaces ports IFC: the local port as the
// neighbours' are shown).
func portIDIs(ctx context.Context, socket, ifc, id string) bool {
	out, err := exec.CommandContext(ctx, "lldpcli", "-u", socket, "-f", "json", "show", "interfaces", "ports", ifc).Output()
	if err != nil {
		return false
	}
	m, err := linktruth.ParseLLDPCLI(out)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(m[ifc], func(n linktruth.Neighbor) bool { return n.PortIDSubtype == "local" && n.PortID == id })
}

// stopAgents stops the recorded agents (only a live lldpd on the
// recorded socket is signalled: a recycled pid never is).
func stopAgents(r *Record, log io.Writer) []error {
	var errs []error
	var stopping []int
	for _, a := range r.LLDP {
		if a.PID <= 0 || !isAgent(a.PID, a.Start) {
			continue
		}
		if err := syscall.Kill(a.PID, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("stop lldpd of %s (pid %d): %w", a.Device, a.PID, err))
			continue
		}
		stopping = append(stopping, a.PID)
	}
	deadline := time.Now().Add(3 * time.Second)
	for _, a := range r.LLDP {
		for slices.Contains(stopping, a.PID) && isAgent(a.PID, a.Start) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if slices.Contains(stopping, a.PID) && isAgent(a.PID, a.Start) {
			_ = syscall.Kill(a.PID, syscall.SIGKILL)
		}
	}
	if len(stopping) > 0 {
		logf(log, "stopped %d lldpd agents", len(stopping))
	}
	return errs
}

// isAgent is true when pid is a live lldpd (or the ip netns exec about
// to become one) started at start.
func isAgent(pid int, start uint64) bool {
	comm, state, st := procStat(pid)
	return state != "" && state != "Z" && (comm == "lldpd" || comm == "ip") && st == start
}

// procStart is a process's start time (0 when unknown).
func procStart(pid int) uint64 {
	_, _, st := procStat(pid)
	return st
}

// procStat reads a process's command name, state and start time
// (/proc/PID/stat fields 2, 3 and 22; proc(5)); "" state when it is gone.
func procStat(pid int) (comm, state string, start uint64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", "", 0
	}
	i, j := strings.LastIndexByte(string(b), ')'), strings.IndexByte(string(b), '(')
	if i < 0 || j < 0 || j > i {
		return "", "", 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return "", "", 0
	}
	start, _ = strconv.ParseUint(f[19], 10, 64)
	return string(b[j+1 : i]), f[0], start
}
