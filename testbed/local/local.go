// Package local is the one-machine testbed behind `fabctl testbed`: it
// turns a spec into a running fabric on the machine that runs fabctl.
//
//   - every switch whose platform has an emulator in this build (sonic,
//     eos, nxos) is started on the spec's address (host:port; all of
//     127.0.0.0/8 is loopback) with a freshly generated host key and the
//     spec's credentials, and its key is written to <dir>/known_hosts;
//   - every host with connect = "netns:<name>" gets that network
//     namespace, and each of its NICs is one end of a veth pair whose
//     other end is in the shared namespace fab-fabric (nothing is added
//     to the root namespace).
//
// The emulators run in a background process (`fabctl testbed serve`,
// started by Up with setsid) so they outlive the command that brought
// the testbed up. Everything Up makes is recorded in <dir>/testbed.json,
// and Down removes exactly that: the namespaces it created, the serve
// process, the files and directories it wrote.
//
// Switches whose platform has no emulator yet are reported, not faked.
package local

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/internal/safefile"
	"github.com/fabctl/fabctl/spec"
)

// Files in the testbed directory.
const (
	RecordFile     = "testbed.json"
	KnownHostsFile = "known_hosts"
	LogFile        = "serve.log"
	PasswordFile   = "password" // only when the testbed generated the password
	// FabricNetns is the namespace holding the fabric side of every host link.
	FabricNetns = "fab-fabric"
)

// DefaultDir is the testbed directory of a spec path (file or directory):
// <spec dir>/.fabctl/testbed.
func DefaultDir(specPath string) string {
	d := specPath
	if fi, err := os.Stat(specPath); err == nil && !fi.IsDir() {
		d = filepath.Dir(specPath)
	}
	return filepath.Join(d, ".fabctl", "testbed")
}

// Options tune Up.
type Options struct {
	// Exe and Args start the serve process: Exe Args... (default: this
	// executable with "testbed serve --dir DIR").
	Exe  string
	Args []string
	// Getenv resolves env() secrets (nil: os.Getenv).
	Getenv func(string) string
	// Log receives progress lines (nil: discarded). Never a secret.
	Log io.Writer
	// ReadyTimeout bounds the wait for every emulator port (default
	// DefaultReadyTimeout). The wait ends early when the emulator process
	// exits, so a long bound costs nothing when something is broken.
	ReadyTimeout time.Duration
	// FabricNetns names the namespace of the fabric ends (default
	// fab-fabric; tests use their own so they never touch a running demo).
	FabricNetns string
	// YANGDir, when set, is a directory of SONiC YANG models: the SONiC
	// emulators validate every patch against them (recorded, passed to
	// the serve process).
	YANGDir string
}

// Emulator is one emulated switch.
type Emulator struct {
	Name     string `json:"name"`
	Platform string `json:"platform"`
	Address  string `json:"address"`
	Username string `json:"username"`
	// PasswordRef is the spec's reference to the password (env or file);
	// the serve process resolves it, the value is never recorded.
	PasswordKind string `json:"password_kind"`
	PasswordName string `json:"password_name"`
	Ports        int    `json:"ports"`
	// PortNames are the spec's ports the numbered ones (Ports) do not
	// name: a split port's lane, a linecard's port. The emulator has them
	// too.
	PortNames []string `json:"port_names,omitempty"`
	// Model is the spec's switch model ("" not stated): an emulator that
	// plays a chip family (eosemu) is that model.
	Model string `json:"model,omitempty"`
}

// Skipped is a switch the testbed does not run, with the reason.
type Skipped struct {
	Name     string `json:"name"`
	Platform string `json:"platform"`
	Reason   string `json:"reason"`
}

// Link is one host NIC's veth pair.
type Link struct {
	Host  string `json:"host"`
	NIC   string `json:"nic"`   // the host end, in the host's namespace
	Netns string `json:"netns"` // the host's namespace
	Peer  string `json:"peer"`  // the fabric end, in the fabric namespace
	// Switch and Port are the switch port the fabric end is (Record.Ports
	// has the same veth), "" when the spec cables the NIC to no switch.
	Switch string `json:"switch,omitempty"`
	Port   string `json:"port,omitempty"`
}

// Record is <dir>/testbed.json: what Up made.
type Record struct {
	Spec string `json:"spec"`
	Dir  string `json:"dir"`
	// Fabric is the spec's fabric name, and Devices the plan addresses of
	// the devices the testbed makes (switch.NAME of each emulator,
	// host.NAME of each namespace host, sm.NAME of the simulated subnet's
	// manager): what fabctl applied to them is gone with them at Down.
	Fabric     string     `json:"fabric,omitempty"`
	Devices    []string   `json:"devices,omitempty"`
	PID        int        `json:"pid"`
	Created    time.Time  `json:"created"`
	Emulators  []Emulator `json:"emulators"`
	Skipped    []Skipped  `json:"skipped,omitempty"`
	Namespaces []string   `json:"namespaces"`
	// FabricNetns is the namespace of the fabric ends (also in Namespaces).
	FabricNetns string `json:"fabric_netns"`
	Links       []Link `json:"links"`
	// Ports is the table of the switch ports' veth ends in the fabric
	// namespace (a host link's Peer or a Trunk's end), Trunks the
	// switch-to-switch links (cabling.go).
	Ports  []PortVeth `json:"ports,omitempty"`
	Trunks []Trunk    `json:"trunks,omitempty"`
	// LLDP are the lldpd agents the testbed runs; LLDPNote says why it
	// runs none when the spec has links.
	LLDP     []LLDPAgent `json:"lldp,omitempty"`
	LLDPNote string      `json:"lldp_note,omitempty"`
	// Faults are the Ethernet faults injected (testbed fault).
	Faults EthFaults `json:"eth_faults"`
	// Files and Dirs are removed by Down (directories only when empty).
	Files []string `json:"files"`
	Dirs  []string `json:"dirs,omitempty"`
	// GeneratedSecrets names the env variables whose value the testbed
	// generated (their value is in <dir>/password).
	GeneratedSecrets []string `json:"generated_secrets,omitempty"`
	// YANGDir is the SONiC YANG model directory the SONiC emulators
	// validate patches against ("" : the emulator's built-in checks).
	YANGDir string `json:"yang_dir,omitempty"`
	// IBSim is the simulated InfiniBand subnet's directory (ibsim and
	// opensm, testbed/ibsim; "" none): Down stops it (ib.go).
	IBSim string `json:"ibsim,omitempty"`
}

// Status is a testbed's record with what is live now.
type Status struct {
	Record
	Running   bool            `json:"running"`    // the serve process is alive
	Reachable map[string]bool `json:"reachable"`  // emulator name -> its port accepts TCP
	NetnsLive map[string]bool `json:"netns_live"` // namespace -> exists
	IBSimLive bool            `json:"ibsim_live,omitempty"`
}

// Healthy is true when the serve process runs, every emulator answers and
// every namespace exists.
func (s *Status) Healthy() bool {
	if !s.Running && (s.PID > 0 || len(s.Emulators) > 0) {
		return false
	}
	if s.IBSim != "" && !s.IBSimLive {
		return false
	}
	for _, ok := range s.Reachable {
		if !ok {
			return false
		}
	}
	for _, ok := range s.NetnsLive {
		if !ok {
			return false
		}
	}
	return true
}

// ErrNoTestbed is returned when the directory has no testbed record.
var ErrNoTestbed = errors.New("no testbed is up here")

func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", args...)
	}
}

// plan works out, from the spec, what Up will make.
func planRecord(s *spec.Spec, fabricNS string) (*Record, error) {
	r := &Record{FabricNetns: fabricNS, Fabric: s.Fabric.Name}
	creds := map[string]*spec.Credentials{}
	for _, c := range s.Credentials {
		creds[c.Name] = c
	}
	ports, extra, err := portsNeeded(s)
	if err != nil {
		return nil, err
	}
	var bad, noPass []string
	for _, sw := range s.Switches {
		if sw.InfiniBand {
			continue // simulated with the whole subnet by ibsim (ib.go)
		}
		if emulatorFor(sw.Platform) == "" {
			r.Skipped = append(r.Skipped, Skipped{Name: sw.Name, Platform: sw.Platform,
				Reason: fmt.Sprintf("%s: no %s emulator in this build", sw.Name, sw.Platform)})
			continue
		}
		host, port, err := net.SplitHostPort(sw.Address)
		if ip := net.ParseIP(host); err != nil || port == "" || ip == nil || !ip.IsLoopback() {
			bad = append(bad, fmt.Sprintf("%s: address %q", sw.Name, sw.Address))
			continue
		}
		c := creds[sw.Credentials]
		if c == nil || c.Password == nil {
			noPass = append(noPass, fmt.Sprintf("%s (credentials %q)", sw.Name, sw.Credentials))
			continue
		}
		e := Emulator{Name: sw.Name, Platform: sw.Platform, Address: sw.Address, Username: c.Username,
			PasswordKind: c.Password.Kind, PasswordName: c.Password.Name, Ports: ports[sw.Name], PortNames: extra[sw.Name], Model: sw.Model}
		r.Emulators = append(r.Emulators, e)
		r.Devices = append(r.Devices, "switch."+sw.Name)
	}
	if len(bad) > 0 || len(noPass) > 0 {
		var why []string
		if len(bad) > 0 {
			why = append(why, "the testbed listens on a loopback host:port of each switch (127.0.0.0/8 or ::1, e.g. 127.0.0.11:2222), not "+strings.Join(bad, ", "))
		}
		if len(noPass) > 0 {
			why = append(why, "the emulators log in with a username and a password, which the credentials of "+strings.Join(noPass, ", ")+" lack")
		}
		return nil, fmt.Errorf("%s; to run a spec made for other devices, fabctl testbed copy SPEC -o DIR writes a copy that runs here (docs/testbed.md#running-an-existing-spec)", strings.Join(why, "; "))
	}
	seen := map[string]bool{}
	for _, h := range s.Hosts {
		if h.Connect.Kind != "netns" {
			continue // local and ssh hosts are not the testbed's
		}
		ns := h.Connect.Netns
		if ns == fabricNS {
			return nil, fmt.Errorf("%s: namespace %s is the testbed's fabric side", h.Name, fabricNS)
		}
		r.Devices = append(r.Devices, "host."+h.Name)
		if !seen[ns] {
			seen[ns] = true
			r.Namespaces = append(r.Namespaces, ns)
		}
		for _, n := range h.NICs {
			r.Links = append(r.Links, Link{Host: h.Name, NIC: n.Name, Netns: ns, Peer: peerName(h.Name, n.Name)})
		}
	}
	if err := planCabling(s, r); err != nil {
		return nil, err
	}
	if len(r.Links) > 0 || len(r.Trunks) > 0 {
		r.Namespaces = append(r.Namespaces, fabricNS)
	}
	return r, nil
}

// portsNeeded sizes each emulator's port list so every port the spec
// names on it exists (SONiC Ethernet0, 4, ...; EOS Ethernet1, 2, ...;
// NX-OS Ethernet1/1, 1/2, ...), and lists the spec's ports the numbered
// list does not name (a split port's lane Ethernet1/1 on EOS, a breakout
// Ethernet1 on SONiC) for the emulator to have as well. A port name its
// platform cannot have (drivers.PortNaming.Pattern) is refused: the
// testbed would otherwise start a switch that lacks it.
func portsNeeded(s *spec.Spec) (count map[string]int, extra map[string][]string, err error) {
	count, extra = map[string]int{}, map[string][]string{}
	for _, sw := range s.Switches {
		if p, ok := builtin.Platform(sw.Platform); ok {
			count[sw.Name] = p.EmulatorPorts
		}
	}
	var bad []string
	names := map[string][]string{}
	for _, sw := range s.Switches {
		if sw.InfiniBand {
			continue
		}
		p, ok := builtin.Platform(sw.Platform)
		if !ok {
			continue
		}
		for _, port := range sw.Ports {
			if !p.Ports.Valid(port.Name) {
				bad = append(bad, fmt.Sprintf("%s:%s (%s names its ports like %s)", sw.Name, port.Name, sw.Platform, portExamples(p.Ports)))
				continue
			}
			names[sw.Name] = append(names[sw.Name], port.Name)
			if need, ok := p.Ports.Count(port.Name); ok && need > count[sw.Name] {
				count[sw.Name] = need
			}
		}
	}
	if len(bad) > 0 {
		return nil, nil, fmt.Errorf("the spec names ports their platforms cannot have, so the testbed cannot emulate them: %s", strings.Join(bad, "; "))
	}
	for sw, ns := range names {
		p, _ := builtin.Platform(s.Switch(sw).Platform)
		numbered := map[string]bool{}
		for i := 0; i < count[sw]; i++ {
			numbered[p.Ports.Name(i)] = true
		}
		for _, n := range ns {
			if !numbered[n] && !slices.Contains(extra[sw], n) {
				extra[sw] = append(extra[sw], n)
			}
		}
		sort.Strings(extra[sw])
	}
	return count, extra, nil
}

// portExamples names a platform's first two numbered ports.
func portExamples(n drivers.PortNaming) string {
	return n.Name(0) + ", " + n.Name(1)
}

// peerName is the fabric end of a host NIC: "<host>-<nic>", or a short
// hashed name when that is over the kernel's 15 characters.
func peerName(host, nic string) string {
	n := host + "-" + nic
	if len(n) <= 15 {
		return n
	}
	h := fnv.New32a()
	h.Write([]byte(n))
	return fmt.Sprintf("fab%08x", h.Sum32())
}

// Up brings the testbed of a spec up in dir.
func Up(specPath, dir string, opts Options) (*Status, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("the local testbed needs root (network namespaces and veth pairs)")
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.ReadyTimeout <= 0 {
		opts.ReadyTimeout = DefaultReadyTimeout
	}
	s, diags := spec.Load(specPath, spec.LoadOptions{Platforms: builtin.SpecPlatforms()})
	if diags.HasErrors() {
		return nil, fmt.Errorf("spec %s: %s", specPath, diags.Error())
	}
	absSpec, err := filepath.Abs(specPath)
	if err != nil {
		return nil, err
	}
	if dir == "" {
		dir = DefaultDir(specPath)
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, RecordFile)); err == nil {
		return nil, fmt.Errorf("a testbed is already up in %s (fabctl testbed down --dir %s)", dir, dir)
	}
	if opts.FabricNetns == "" {
		opts.FabricNetns = FabricNetns
	}
	r, err := planRecord(s, opts.FabricNetns)
	if err != nil {
		return nil, err
	}
	r.Spec, r.Dir, r.Created = absSpec, dir, time.Now().UTC()
	if opts.YANGDir != "" {
		yd, err := filepath.Abs(opts.YANGDir)
		if err != nil {
			return nil, err
		}
		if fi, err := os.Stat(yd); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("--yang-dir %s: not a directory of YANG models", opts.YANGDir)
		}
		r.YANGDir = yd
	}
	for _, ns := range r.Namespaces {
		if netnsExists(ns) {
			return nil, fmt.Errorf("network namespace %s exists already and was not made by this testbed: remove it (ip netns del %s) or change the spec", ns, ns)
		}
	}
	for _, e := range r.Emulators {
		if c, err := net.DialTimeout("tcp", e.Address, 200*time.Millisecond); err == nil {
			c.Close()
			return nil, fmt.Errorf("%s: %s is already in use by another process", e.Name, e.Address)
		}
	}

	// From here on, undo everything on failure.
	ok := false
	defer func() {
		if !ok {
			_ = teardown(r, nil)
		}
	}()
	if err := mkdirAll(r, dir); err != nil {
		return nil, err
	}
	env, err := resolvePasswords(r, opts)
	if err != nil {
		return nil, err
	}
	for _, ns := range r.Namespaces {
		if err := createNetns(ns); err != nil {
			return nil, fmt.Errorf("create network namespace %s: %w", ns, err)
		}
	}
	for _, l := range r.Links {
		if err := createLink(l, r.FabricNetns, s.Fabric); err != nil {
			return nil, fmt.Errorf("%s: veth %s (netns %s) <-> %s (netns %s): %w", l.Host, l.NIC, l.Netns, l.Peer, r.FabricNetns, err)
		}
	}
	for _, t := range r.Trunks {
		if err := createTrunk(t, r.FabricNetns, s.Fabric); err != nil {
			return nil, fmt.Errorf("veth %s <-> %s (netns %s): %w", t.A, t.B, r.FabricNetns, err)
		}
	}
	if err := startAgents(r, opts.Log); err != nil {
		return nil, err
	}
	if err := upIB(s, r, opts); err != nil {
		return nil, err
	}
	if len(r.Emulators) > 0 {
		if err := startServe(r, env, opts); err != nil {
			return nil, err
		}
	} else {
		r.Files = append(r.Files, filepath.Join(r.Dir, RecordFile)) // Down removes it too
		if err := writeRecord(r); err != nil {
			return nil, err
		}
	}
	for _, sk := range r.Skipped {
		logf(opts.Log, "skipped %s", sk.Reason)
	}
	ok = true
	return Stat(dir)
}

func mkdirAll(r *Record, dir string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	r.Dirs = append(r.Dirs, missing...) // deepest first: removed in this order
	return nil
}

// resolvePasswords checks every emulator's password resolves, generating
// the ones that are not set. It returns extra environment entries for the
// serve process.
func resolvePasswords(r *Record, opts Options) ([]string, error) {
	var env []string
	generated := map[string]string{}
	for _, e := range r.Emulators {
		switch e.PasswordKind {
		case "env":
			if opts.Getenv(e.PasswordName) != "" {
				env = append(env, e.PasswordName+"="+opts.Getenv(e.PasswordName))
				continue
			}
			if _, done := generated[e.PasswordName]; done {
				continue
			}
			pw, err := newPassword()
			if err != nil {
				return nil, err
			}
			generated[e.PasswordName] = pw
			env = append(env, e.PasswordName+"="+pw)
			r.GeneratedSecrets = append(r.GeneratedSecrets, e.PasswordName)
		case "file":
			if _, err := os.Stat(e.PasswordName); err == nil {
				continue
			}
			pw, err := newPassword()
			if err != nil {
				return nil, err
			}
			// Created, never overwritten, never through a link: the path
			// is the spec's file() reference.
			f, err := safefile.CreateExclusive(e.PasswordName, 0o600, safefile.Secret)
			if err == nil {
				_, err = f.Write([]byte(pw + "\n"))
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
			if err != nil {
				return nil, fmt.Errorf("%s: password file: %w", e.Name, err)
			}
			r.Files = append(r.Files, mustAbs(e.PasswordName))
			logf(opts.Log, "generated a password in %s (the spec's file() reference)", e.PasswordName)
		default:
			return nil, fmt.Errorf("%s: password kind %q", e.Name, e.PasswordKind)
		}
	}
	if len(generated) > 0 {
		// One password file: the names share it when there are several.
		var pw string
		names := make([]string, 0, len(generated))
		for n := range generated {
			names = append(names, n)
		}
		sort.Strings(names)
		pw = generated[names[0]]
		for i, kv := range env {
			if k, _, _ := strings.Cut(kv, "="); generated[k] != "" {
				env[i] = k + "=" + pw
			}
		}
		p := filepath.Join(r.Dir, PasswordFile)
		if err := safefile.WriteFile(p, []byte(pw+"\n"), 0o600, safefile.Testbed); err != nil {
			return nil, err
		}
		r.Files = append(r.Files, p)
		for _, n := range names {
			logf(opts.Log, "%s is not set: the testbed generated a password; before plan/apply run\n  export %s=\"$(cat %s)\"", n, n, p)
		}
	}
	return env, nil
}

func newPassword() (string, error) {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func mustAbs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

func netnsExists(name string) bool {
	_, err := os.Stat(filepath.Join("/var/run/netns", name))
	return err == nil
}

// createNetns creates a named namespace without moving this process into
// it (netns.NewNamed switches the calling thread, which is put back).
func createNetns(name string) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		return err
	}
	defer orig.Close()
	ns, err := netns.NewNamed(name)
	if err != nil {
		if serr := netns.Set(orig); serr != nil {
			panic("testbed: cannot return to the original network namespace: " + serr.Error())
		}
		return err
	}
	ns.Close()
	if err := netns.Set(orig); err != nil {
		panic("testbed: cannot return to the original network namespace: " + err.Error())
	}
	return nil
}

// createLink makes one veth pair from inside the fabric namespace, its NIC end
// created directly in the host's namespace (no end ever appears in the
// root namespace). The fabric end is up with the fabric MTU; the NIC end
// is left as the kernel makes it (down, MTU 1500) for fabctl to configure.
func createLink(l Link, fabricNS string, f *spec.Fabric) error {
	fab, err := netns.GetFromName(fabricNS)
	if err != nil {
		return err
	}
	defer fab.Close()
	hostNS, err := netns.GetFromName(l.Netns)
	if err != nil {
		return err
	}
	defer hostNS.Close()
	h, err := netlink.NewHandleAt(fab)
	if err != nil {
		return err
	}
	defer h.Close()
	mtu := fabricMTU(f)
	v := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: l.Peer}, PeerName: l.NIC,
		PeerNamespace: netlink.NsFd(int(hostNS))}
	if err := h.LinkAdd(v); err != nil {
		return err
	}
	peer, err := h.LinkByName(l.Peer)
	if err != nil {
		return err
	}
	if err := h.LinkSetMTU(peer, mtu); err != nil {
		return err
	}
	return h.LinkSetUp(peer)
}

// DefaultReadyTimeout is how long Up waits for the emulators by default. The
// VM testbed's guest (qemu TCG) on a busy 2-core host took more than 20 s
// only to start the serve process (the demo's `testbed up` took 7.7 s, 16.6 s,
// then failed at 20 s with nothing logged yet: load 19, 2026-11-29).
const DefaultReadyTimeout = 2 * time.Minute

// startServe starts the serve process, records it and waits until every
// emulator answers.
func startServe(r *Record, env []string, opts Options) error {
	exe, args := opts.Exe, opts.Args
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return err
		}
	}
	if args == nil {
		args = []string{"testbed", "serve", "--dir", r.Dir}
	}
	logPath := filepath.Join(r.Dir, LogFile)
	lf, err := safefile.Create(logPath, 0o600, safefile.Testbed)
	if err != nil {
		return err
	}
	defer lf.Close()
	r.Files = append(r.Files, logPath, filepath.Join(r.Dir, KnownHostsFile), filepath.Join(r.Dir, RecordFile))
	if gnmiTargets(r) {
		// serve removes them when it stops; Down removes them too when it
		// died without cleaning up (the keys must not outlive the testbed).
		pki := filepath.Join(r.Dir, gnmiPKIDir)
		for _, f := range []string{"ca.pem", "server.pem", "server-key.pem", "client.pem", "client-key.pem"} {
			r.Files = append(r.Files, filepath.Join(pki, f))
		}
		r.Files = append(r.Files, filepath.Join(r.Dir, GNMICAFile))
		r.Dirs = append([]string{pki}, r.Dirs...)
	}
	// The record is written before the process starts: serve reads it.
	if err := writeRecord(r); err != nil {
		return err
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the emulators (%s): %w", exe, err)
	}
	r.PID = cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // reaps it when this process lives on (tests)
	if err := writeRecord(r); err != nil {
		return err
	}
	deadline := time.Now().Add(opts.ReadyTimeout)
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("the emulator process exited (%v) before it was ready; %s says:\n%s", err, logPath, tail(logPath, 20))
		default:
		}
		if ready(r) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the emulators did not answer within %s (a slower machine can wait longer: testbed up --ready-timeout); %s says:\n%s", opts.ReadyTimeout, logPath, tail(logPath, 20))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// gnmiTargets reports whether the testbed runs gNMI targets.
func gnmiTargets(r *Record) bool {
	for _, e := range r.Emulators {
		if emulatorFor(e.Platform) == gnmiEmulator {
			return true
		}
	}
	return false
}

func ready(r *Record) bool {
	if _, err := os.Stat(filepath.Join(r.Dir, KnownHostsFile)); err != nil {
		return false
	}
	for _, e := range r.Emulators {
		if !reachable(e.Address) {
			return false
		}
	}
	return true
}

func reachable(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func tail(path string, n int) string {
	b, err := safefile.ReadFile(path, safefile.Testbed)
	if err != nil {
		return "(no log)"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  " + strings.Join(lines, "\n  ")
}

func writeRecord(r *Record) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return safefile.WriteFile(filepath.Join(r.Dir, RecordFile), append(b, '\n'), 0o600, safefile.Testbed)
}

// ReadRecord reads <dir>/testbed.json.
func ReadRecord(dir string) (*Record, error) {
	b, err := safefile.ReadFile(filepath.Join(dir, RecordFile), safefile.Testbed)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s has no %s", ErrNoTestbed, dir, RecordFile)
	}
	if err != nil {
		return nil, err
	}
	r := &Record{}
	if err := json.Unmarshal(b, r); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, RecordFile), err)
	}
	return r, nil
}

// Stat reports a testbed's record and what of it is live.
func Stat(dir string) (*Status, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	r, err := ReadRecord(abs)
	if err != nil {
		return nil, err
	}
	st := &Status{Record: *r, Reachable: map[string]bool{}, NetnsLive: map[string]bool{}}
	st.Running = r.PID > 0 && isServe(r.PID, r.Dir)
	for _, e := range r.Emulators {
		st.Reachable[e.Name] = reachable(e.Address)
	}
	for _, ns := range r.Namespaces {
		st.NetnsLive[ns] = netnsExists(ns)
	}
	st.IBSimLive = ibLive(r)
	return st, nil
}

// isServe is true when pid is a live (not zombie) serve process of dir:
// a recycled pid is never signalled.
func isServe(pid int, dir string) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	if i := strings.LastIndexByte(string(stat), ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	args := strings.Split(string(cmdline), "\x00")
	hasServe, hasDir := false, false
	for _, a := range args {
		switch a {
		case "serve":
			hasServe = true
		case dir:
			hasDir = true
		}
	}
	return hasServe && hasDir
}

// Down removes what Up made in dir: the serve process, the namespaces
// (and with them the veth pairs), the files and the directories it
// created (when empty). It continues past errors and returns them joined.
func Down(dir string, log io.Writer) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	r, err := ReadRecord(abs)
	if err != nil {
		return err
	}
	return teardown(r, log)
}

func teardown(r *Record, log io.Writer) error {
	var errs []error
	if r.PID > 0 && isServe(r.PID, r.Dir) {
		if err := syscall.Kill(r.PID, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("stop the emulators (pid %d): %w", r.PID, err))
		}
		deadline := time.Now().Add(5 * time.Second)
		for isServe(r.PID, r.Dir) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if isServe(r.PID, r.Dir) {
			_ = syscall.Kill(r.PID, syscall.SIGKILL)
			time.Sleep(100 * time.Millisecond)
		}
		logf(log, "stopped the emulators (pid %d)", r.PID)
	}
	errs = append(errs, stopAgents(r, log)...)
	if err := downIB(r, func(f string, a ...any) { logf(log, f, a...) }); err != nil {
		errs = append(errs, err)
	}
	for _, ns := range r.Namespaces {
		if !netnsExists(ns) {
			continue
		}
		if err := netns.DeleteNamed(ns); err != nil {
			errs = append(errs, fmt.Errorf("delete network namespace %s: %w", ns, err))
			continue
		}
		logf(log, "deleted network namespace %s", ns)
	}
	for _, f := range r.Files {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	_ = os.Remove(filepath.Join(r.Dir, RecordFile+".tmp"))
	for _, d := range r.Dirs {
		if err := os.Remove(d); err != nil && !errors.Is(err, os.ErrNotExist) {
			// not empty: something else lives there now (a state dir); leave it
			logf(log, "kept %s (not empty)", d)
		}
	}
	return errors.Join(errs...)
}
