// Package clab writes a containerlab lab for a spec (`fabctl testbed
// containerlab SPEC -o DIR`), for users with docker and vendor images:
//
//	DIR/<lab>.clab.yml            the topology: one node per switch and host,
//	                              canonical kinds only, a static management
//	                              address per node, links with the spec's MTU,
//	                              labels naming each node's spec device
//	DIR/configs/<node>/...        each switch's configuration as fabctl's
//	                              driver renders it (drivers.Renderer), used as
//	                              the node's startup config where the kind can
//	                              take it (cEOS, SONiC), for reference elsewhere
//	DIR/spec/                     the spec's files, plus fabctl-clab.fab.hcl
//	                              (credentials for the lab's nodes) and
//	                              fabctl-clab_override.fab.hcl pointing every
//	                              device at its node: fabctl plan DIR/spec
//	DIR/keyscan.sh                records the SSH nodes' host keys in
//	                              DIR/spec/known_hosts after the deploy
//
// Generate builds the files in memory (deterministic: same spec, same
// bytes); Write puts them on disk. docs/testbed.md says what such a lab
// can and cannot prove.
package clab

import (
	"bytes"
	"fmt"
	"net/netip"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2/hclwrite"
	"gopkg.in/yaml.v3"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/safefile"
	"github.com/fabctl/fabctl/spec"
)

// DefaultMgmtSubnet is the lab's management network unless told
// otherwise; nodes get addresses from .11 up, .1 is the bridge.
const DefaultMgmtSubnet = "172.100.100.0/24"

// SchemaURL is containerlab's topology schema, named in the file's
// yaml-language-server header so editors validate it.
const SchemaURL = "https://raw.githubusercontent.com/srl-labs/containerlab/main/schemas/clab.schema.json"

// Options tune a lab.
type Options struct {
	// Name is the lab name; "" is the fabric's name with '-' turned into
	// '_' (containerlab names containers clab-<lab>-<node>, so a dash in
	// the lab name is ambiguous).
	Name string
	// MgmtSubnet is the management network's IPv4 prefix ("" =
	// DefaultMgmtSubnet).
	MgmtSubnet string
	// Kinds maps a switch platform to a kind instead of the default
	// (e.g. openconfig=arista_ceos).
	Kinds map[string]string
	// Images maps a kind to the image to use instead of the default.
	Images map[string]string
	// Strict makes a link that cannot be wired in containerlab an error;
	// otherwise the link is left out and a warning says so.
	Strict bool
	// Renderers holds the drivers that render the switches' startup
	// configs (builtin.Registry()); nil renders none.
	Renderers *drivers.Registry
}

// File is one generated file, relative to the output directory.
type File struct {
	Name string
	Data []byte
	Mode os.FileMode
}

// Lab is a generated lab.
type Lab struct {
	Name string
	// Passwords are the password variables the lab's credentials read,
	// one per kind in the lab, in the credentials file's order.
	Passwords []Password
	Files     []File // by name
	Warnings  []string
	// Nodes maps a spec device address (switch.leaf1) to its node's
	// management address.
	Nodes map[string]string
	// Links is the number of the spec's links; LinksWritten of them are in
	// the topology, LinksLeftOut are not (a port the kind cannot name).
	Links, LinksWritten, LinksLeftOut int
	// PortsBeyond counts the interfaces wired beyond their image's data
	// ports (containerlab creates the veths; the NOS has no port there).
	PortsBeyond int
}

// Password is a variable a lab's credentials read its password from.
type Password struct {
	Env, Kind, User string
	// Default is the password the kind's nodes come up with.
	Default string
}

// Incomplete reports whether the lab lacks part of the spec: links left
// out, or ports the images do not have.
func (l *Lab) Incomplete() bool { return l.LinksLeftOut > 0 || l.PortsBeyond > 0 }

// Counts is the lab's completeness in words: "512 of 512 links written"
// or "256 of 512 links written, 256 left out, 96 ports beyond their
// images' data ports".
func (l *Lab) Counts() string {
	out := fmt.Sprintf("%d of %d links written", l.LinksWritten, l.Links)
	if l.LinksLeftOut > 0 {
		out += fmt.Sprintf(", %d left out", l.LinksLeftOut)
	}
	if l.PortsBeyond > 0 {
		out += fmt.Sprintf(", %d port(s) beyond their images' data ports", l.PortsBeyond)
	}
	return out
}

// File returns the named file's content, or nil.
func (l *Lab) File(name string) []byte {
	for _, f := range l.Files {
		if f.Name == name {
			return f.Data
		}
	}
	return nil
}

// TopologyFile is the name of the topology file in the output directory.
func (l *Lab) TopologyFile() string { return l.Name + ".clab.yml" }

// The topology file, in containerlab's field order.
type topoFile struct {
	Name     string   `yaml:"name"`
	Prefix   string   `yaml:"prefix"`
	Mgmt     topoMgmt `yaml:"mgmt"`
	Topology topology `yaml:"topology"`
}

type topoMgmt struct {
	Network    string `yaml:"network"`
	IPv4Subnet string `yaml:"ipv4-subnet"`
}

type topology struct {
	Kinds map[string]kindDefaults `yaml:"kinds"`
	Nodes map[string]*node        `yaml:"nodes"`
	Links []link                  `yaml:"links,omitempty"`
}

type kindDefaults struct {
	Image string `yaml:"image"`
}

// A node's type is set on the node, beside its kind: containerlab's
// schema checks the type against the kind's list only there.
type node struct {
	Kind          string            `yaml:"kind"`
	Type          string            `yaml:"type,omitempty"`
	MgmtIPv4      string            `yaml:"mgmt-ipv4"`
	StartupConfig string            `yaml:"startup-config,omitempty"`
	Binds         []string          `yaml:"binds,omitempty"`
	Exec          []string          `yaml:"exec,omitempty"`
	Labels        map[string]string `yaml:"labels"`
}

type link struct {
	Endpoints []string `yaml:"endpoints,flow"`
	MTU       int      `yaml:"mtu"`
}

// Label keys mapping a node back to the spec.
const (
	LabelFabric   = "fabctl.dev/fabric"
	LabelDevice   = "fabctl.dev/device" // switch.leaf1, host.gpu01
	LabelRole     = "fabctl.dev/role"
	LabelPlatform = "fabctl.dev/platform"
	LabelAddress  = "fabctl.dev/spec-address"
)

// member is one spec device becoming a node.
type member struct {
	dev  intent.Device
	kind *kind
	sw   *intent.Switch
	host *intent.Host
	node *node
	mgmt string
}

// Generate builds the lab of a loaded, compiled spec. specFiles are the
// spec's files (spec.ReadFiles), copied into DIR/spec.
func Generate(s *spec.Spec, f *intent.Fabric, specFiles []spec.File, o Options) (*Lab, error) {
	if s.Fabric.Transport == spec.InfiniBand {
		return nil, fmt.Errorf("fabric %q is InfiniBand: containerlab runs Ethernet NOS containers and Linux containers, which have no InfiniBand (no HCAs, no subnet manager to program), so there is no lab to generate; test InfiniBand specs on hardware or with the VM testbed", s.Fabric.Name)
	}
	lab := &Lab{Name: o.Name, Nodes: map[string]string{}}
	if lab.Name == "" {
		lab.Name = strings.ReplaceAll(s.Fabric.Name, "-", "_")
	}
	if !labNameRe.MatchString(lab.Name) {
		return nil, fmt.Errorf("lab name %q: use letters, digits, '_' and '.' (containerlab names containers clab-<lab>-<node>)", lab.Name)
	}
	subnet := o.MgmtSubnet
	if subnet == "" {
		subnet = DefaultMgmtSubnet
	}
	pfx, err := netip.ParsePrefix(subnet)
	if err != nil || !pfx.Addr().Is4() {
		return nil, fmt.Errorf("management subnet %q: want an IPv4 prefix such as %s", subnet, DefaultMgmtSubnet)
	}
	pfx = pfx.Masked()

	// Members: switches then hosts, each by name.
	var members []*member
	for _, sw := range f.Switches {
		kn := platformKinds[sw.Platform]
		if k, ok := o.Kinds[sw.Platform]; ok {
			kn = k
		}
		k := kinds[kn]
		if k == nil || kn == "linux" {
			return nil, fmt.Errorf("switch %s: no containerlab kind for platform %q (kinds fabctl generates: %s)", sw.Name, sw.Platform, strings.Join(switchKinds(), ", "))
		}
		members = append(members, &member{dev: sw.Device, kind: k, sw: sw})
	}
	for _, h := range f.Hosts {
		members = append(members, &member{dev: h.Device, kind: kinds["linux"], host: h})
	}
	sort.SliceStable(members, func(i, j int) bool {
		if members[i].dev.Kind != members[j].dev.Kind {
			return members[i].dev.Kind == intent.KindSwitch
		}
		return members[i].dev.Name < members[j].dev.Name
	})
	byName := map[string]*member{}
	addr := pfx.Addr()
	for i := 0; i < 10; i++ { // .1 is the bridge; nodes from .11
		addr = addr.Next()
	}
	for _, m := range members {
		if !nodeNameRe.MatchString(m.dev.Name) {
			return nil, fmt.Errorf("%s %s: containerlab node names use letters, digits, '-', '_' and '.'", m.dev.Kind, m.dev.Name)
		}
		if prev := byName[m.dev.Name]; prev != nil {
			return nil, fmt.Errorf("switch and host both named %q: containerlab needs one name per node", m.dev.Name)
		}
		addr = addr.Next()
		if !pfx.Contains(addr) || addr == lastAddr(pfx) {
			return nil, fmt.Errorf("management subnet %s has too few addresses for %d nodes (from .11 up)", pfx, len(members))
		}
		m.mgmt = addr.String()
		byName[m.dev.Name] = m
		lab.Nodes[m.dev.Addr()] = m.mgmt
	}

	topo := topoFile{Name: lab.Name, Prefix: "clab",
		Mgmt:     topoMgmt{Network: "fabctl-" + lab.Name, IPv4Subnet: pfx.String()},
		Topology: topology{Kinds: map[string]kindDefaults{}, Nodes: map[string]*node{}}}
	var files []File
	for _, m := range members {
		n := &node{Kind: m.kind.Name, Type: m.kind.Type, MgmtIPv4: m.mgmt, Labels: map[string]string{
			LabelFabric: s.Fabric.Name, LabelDevice: m.dev.Addr()}}
		if m.dev.Role != "" {
			n.Labels[LabelRole] = m.dev.Role
		}
		if m.sw != nil {
			n.Labels[LabelPlatform] = m.sw.Platform
		}
		if m.dev.Address != "" {
			n.Labels[LabelAddress] = m.dev.Address
		}
		img := m.kind.Image
		if i, ok := o.Images[m.kind.Name]; ok {
			img = i
		}
		topo.Topology.Kinds[m.kind.Name] = kindDefaults{Image: img}
		m.node = n
		topo.Topology.Nodes[m.dev.Name] = n
		switch {
		case m.sw != nil:
			fs, err := switchConfigs(m, o.Renderers)
			if err != nil {
				return nil, err
			}
			files = append(files, fs...)
		case m.host != nil:
			n.Exec = hostExec(m.host, s.Fabric.Transport)
		}
	}

	// Links.
	used := map[string]string{} // node:iface -> spec endpoint
	portMTU := map[string]int{}
	for _, sw := range f.Switches {
		for _, p := range sw.Ports {
			portMTU[sw.Name+":"+p.Name] = p.MTU
		}
	}
	for _, h := range f.Hosts {
		for _, n := range h.NICs {
			portMTU[h.Name+":"+n.Name] = n.MTU
		}
	}
	ports := map[string]map[string]bool{} // node -> clab interfaces in use
	// Links left out, grouped by node and reason so a pod of breakout
	// ports gives one warning per switch, not one per link.
	type leftOut struct {
		why   string
		links []string
	}
	var left []*leftOut
	leftBy := map[string]*leftOut{}
	lab.Links = len(s.Links)
	for _, l := range s.Links {
		var eps []string
		var why []string
		for _, e := range []spec.Endpoint{l.A, l.B} {
			m := byName[e.Node]
			if m == nil {
				return nil, fmt.Errorf("%s: endpoint %s is not a node of the lab", l.Address(), e)
			}
			ifn, err := m.kind.IfName(e.Port)
			if err == nil && len(ifn) > 15 {
				err = fmt.Errorf("the interface name %s is longer than Linux's 15 characters", ifn)
			}
			if err != nil {
				why = append(why, fmt.Sprintf("%s (%s): %v", e, m.kind.Name, err))
				continue
			}
			ep := e.Node + ":" + ifn
			if prev, dup := used[ep]; dup {
				return nil, fmt.Errorf("%s: %s and %s both become %s", l.Address(), prev, e, ep)
			}
			used[ep] = e.String()
			eps = append(eps, ep)
			if ports[e.Node] == nil {
				ports[e.Node] = map[string]bool{}
			}
			ports[e.Node][ifn] = true
		}
		if len(why) > 0 {
			if o.Strict {
				return nil, fmt.Errorf("link %s--%s cannot be wired in containerlab: %s", l.A, l.B, strings.Join(why, "; "))
			}
			key := strings.Join(why, "; ")
			if i := strings.Index(key, " ("); i > 0 {
				// The reason without the port: "leaf2 (nvidia_cumulusvx): breakout lanes ...".
				node, _, _ := strings.Cut(key[:i], ":")
				key = node + key[i:]
				if j := strings.Index(key, "; "); j > 0 {
					key = key[:j]
				}
			}
			lo := leftBy[key]
			if lo == nil {
				lo = &leftOut{why: key}
				leftBy[key] = lo
				left = append(left, lo)
			}
			lo.links = append(lo.links, l.A.String()+"--"+l.B.String())
			lab.LinksLeftOut++
			continue
		}
		// The link carries the larger IP MTU of its two ends: veth's MTU
		// is the L3 MTU, and each NOS adds its own L2 overhead.
		mtu := max(portMTU[l.A.String()], portMTU[l.B.String()])
		if mtu == 0 {
			mtu = s.Fabric.MTU
		}
		topo.Topology.Links = append(topo.Topology.Links, link{Endpoints: eps, MTU: mtu})
		lab.LinksWritten++
	}
	for _, lo := range left {
		ex := lo.links
		more := ""
		if len(ex) > 3 {
			ex, more = ex[:3], fmt.Sprintf(" and %d more", len(lo.links)-3)
		}
		lab.Warnings = append(lab.Warnings, fmt.Sprintf("%d link(s) left out of the lab, %s: %s%s",
			len(lo.links), lo.why, strings.Join(ex, ", "), more))
	}
	for _, m := range members {
		if m.kind.Ports == 0 {
			continue
		}
		var over []string
		for ifn := range ports[m.dev.Name] {
			if m.kind.Index(ifn) > m.kind.Ports {
				over = append(over, ifn)
			}
		}
		if len(over) > 0 {
			lab.PortsBeyond += len(over)
			sort.Slice(over, func(i, j int) bool { return m.kind.Index(over[i]) < m.kind.Index(over[j]) })
			span := over[0]
			if len(over) > 1 {
				span += " ... " + over[len(over)-1]
			}
			lab.Warnings = append(lab.Warnings, fmt.Sprintf("%s: the %s image has %d data ports; %d interface(s) are beyond them (%s): containerlab creates the veths, the NOS has no port for them",
				m.dev.Name, m.kind.Name, m.kind.Ports, len(over), span))
		}
	}

	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# yaml-language-server: $schema=%s\n", SchemaURL)
	fmt.Fprintf(&buf, "# Generated by fabctl testbed containerlab from fabric %q: do not edit, generate again.\n", s.Fabric.Name)
	fmt.Fprintf(&buf, "# Deploy: containerlab deploy -t %s ; then sh keyscan.sh and fabctl plan spec\n", lab.TopologyFile())
	for _, w := range lab.Warnings {
		fmt.Fprintf(&buf, "# WARNING: %s\n", w)
	}
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(topo); err != nil {
		return nil, err
	}
	enc.Close()
	files = append(files, File{Name: lab.TopologyFile(), Data: buf.Bytes(), Mode: 0o644})

	sf, err := specFilesFor(lab, s, members, specFiles)
	if err != nil {
		return nil, err
	}
	files = append(files, sf...)
	files = append(files, keyscan(members))
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	lab.Files = files
	return lab, nil
}

var (
	labNameRe  = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._]*$`)
	nodeNameRe = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]*$`)
)

func lastAddr(p netip.Prefix) netip.Addr {
	a := p.Addr().As4()
	bits := p.Bits()
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	v |= (1 << (32 - bits)) - 1
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

func switchKinds() []string {
	var out []string
	for k := range kinds {
		if k != "linux" {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// switchConfigs renders a switch's configuration with its driver and
// hooks it into the node the way its kind takes it.
func switchConfigs(m *member, reg *drivers.Registry) ([]File, error) {
	if reg == nil {
		return nil, nil
	}
	drv, err := reg.New(drivers.For(m.dev))
	if err != nil {
		return nil, fmt.Errorf("switch %s: %w", m.dev.Name, err)
	}
	r, ok := drv.(drivers.Renderer)
	if !ok {
		return nil, nil
	}
	rendered, err := r.Render(drivers.Target{Device: m.dev, Intent: m.sw})
	if err != nil {
		return nil, fmt.Errorf("switch %s: rendering its configuration: %w", m.dev.Name, err)
	}
	dir := path.Join("configs", m.dev.Name)
	var out []File
	for _, rf := range rendered {
		name := path.Join(dir, rf.Name)
		if m.kind.Startup != nil {
			st := m.kind.Startup(name)
			if st.File != "" {
				name = st.File
			}
			if st.StartupConfig != "" {
				m.node.StartupConfig = st.StartupConfig
			}
			m.node.Binds = append(m.node.Binds, st.Binds...)
			m.node.Exec = append(m.node.Exec, st.Exec...)
		}
		out = append(out, File{Name: name, Data: rf.Data, Mode: 0o644})
	}
	if setup, ok := platformSetups[m.sw.Platform][m.kind.Name]; ok {
		name := path.Join(dir, setup.Name)
		m.node.StartupConfig = name
		out = append(out, File{Name: name, Mode: 0o644, Data: []byte(setup.Text)})
	}
	return out, nil
}

// hostExec sets a host's NICs up as the spec says (MTU, addresses) and
// puts a software RDMA device on each: Soft-RoCE (rxe) for RoCE,
// Soft-iWARP (siw) for iWARP, named as the spec's RDMA device so the host
// driver finds it. No modprobe in the container (and no bind of the
// machine's /lib/modules, which not every machine has): `rdma link add
// ... type rxe|siw` makes the kernel load the module itself (Linux
// drivers/infiniband/core/nldev.c nldev_newlink: request_module
// "rdma-link-<type>"; rdma_rxe and siw declare MODULE_ALIAS_RDMA_LINK
// "rxe" and "siw" in sw/rxe/rxe.c and sw/siw/siw_main.c).
func hostExec(h *intent.Host, tr spec.Transport) []string {
	typ := "rxe"
	if tr == spec.IWARP {
		typ = "siw"
	}
	var out []string
	for _, n := range h.NICs {
		out = append(out, fmt.Sprintf("ip link set dev %s mtu %d", n.Name, n.MTU))
		for _, a := range n.Addresses {
			out = append(out, fmt.Sprintf("ip address add %s dev %s", a, n.Name))
		}
		out = append(out, "ip link set dev "+n.Name+" up")
		dev := n.Device
		if dev == "" {
			dev = typ + "_" + n.Name
		}
		out = append(out, fmt.Sprintf("rdma link add %s type %s netdev %s", dev, typ, n.Name))
	}
	return out
}

// credentialsName is the generated credentials block of a kind.
func credentialsName(k *kind) string {
	if k.Name == "linux" {
		return "clab-hosts"
	}
	return "clab-" + strings.ReplaceAll(k.Name, "_", "-")
}

// specFilesFor copies the spec's files into spec/ and adds the lab's
// credentials and the override pointing every device at its node.
func specFilesFor(lab *Lab, s *spec.Spec, members []*member, specFiles []spec.File) ([]File, error) {
	const credsFile, overFile = "fabctl-clab.fab.hcl", "fabctl-clab" + spec.OverrideSuffix
	var out []File
	seen := map[string]bool{}
	for _, sf := range specFiles {
		base := filepath.Base(sf.Name)
		if base == credsFile || base == overFile || seen[base] {
			return nil, fmt.Errorf("spec file %s: the lab's spec directory already has a file of that name", sf.Name)
		}
		seen[base] = true
		out = append(out, File{Name: path.Join("spec", base), Data: sf.Data, Mode: 0o644})
	}
	var c, ov bytes.Buffer
	fmt.Fprintf(&c, "# Generated by fabctl testbed containerlab for lab %q: how fabctl logs into its nodes.\n", lab.Name)
	fmt.Fprintf(&c, "# Passwords come from the environment (containerlab's defaults are in docs/testbed.md);\n")
	fmt.Fprintf(&c, "# host keys from known_hosts, which ../keyscan.sh writes after the deploy.\n")
	done := map[string]bool{}
	for _, m := range members {
		k := m.kind
		name := credentialsName(k)
		if done[name] {
			continue
		}
		done[name] = true
		fmt.Fprintf(&c, "\ncredentials %q {\n  username = %q\n", name, k.User)
		lab.Passwords = append(lab.Passwords, Password{Env: k.PasswordEnv, Kind: k.Name, User: k.User, Default: defaultPasswords[k.Name]})
		switch {
		case k.GNMI:
			fmt.Fprintf(&c, "  password = env(%q)\n  ca_file  = %q\n", k.PasswordEnv, "../clab-"+lab.Name+"/.tls/ca/ca.pem")
		default:
			fmt.Fprintf(&c, "  password    = env(%q)\n  known_hosts = \"known_hosts\"\n", k.PasswordEnv)
		}
		c.WriteString("}\n")
	}
	fmt.Fprintf(&ov, "# Generated by fabctl testbed containerlab for lab %q: every device of the spec at its\n", lab.Name)
	fmt.Fprintf(&ov, "# node's management address (override files: docs/spec.md).\n")
	for _, m := range members {
		fmt.Fprintf(&ov, "\n%s %q {\n", m.dev.Kind, m.dev.Name)
		a := m.mgmt
		if m.kind.GNMI {
			a += ":57400"
		}
		if m.host != nil {
			// The host image's login is admin with passwordless sudo
			// (kinds.go): the agent runs through sudo -n.
			fmt.Fprintf(&ov, "  connect     = \"ssh\"\n  sudo        = true\n")
		}
		fmt.Fprintf(&ov, "  address     = %q\n  credentials = %q\n}\n", a, credentialsName(m.kind))
	}
	// Formatted as fabctl fmt writes HCL.
	out = append(out, File{Name: path.Join("spec", credsFile), Data: hclwrite.Format(c.Bytes()), Mode: 0o644},
		File{Name: path.Join("spec", overFile), Data: hclwrite.Format(ov.Bytes()), Mode: 0o644})
	return out, nil
}

// keyscan is the script recording the SSH nodes' host keys.
func keyscan(members []*member) File {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n# Generated by fabctl testbed containerlab. Run after `containerlab deploy`: records the\n")
	b.WriteString("# SSH host keys of the lab's nodes in spec/known_hosts, which the lab's credentials verify\n")
	b.WriteString("# against. The nodes are on this machine's management bridge; check the keys against\n")
	b.WriteString("# the nodes' consoles if the lab runs elsewhere.\nset -e\ncd \"$(dirname \"$0\")\"\n")
	var addrs []string
	for _, m := range members {
		if !m.kind.GNMI {
			addrs = append(addrs, m.mgmt)
		}
	}
	b.WriteString("ssh-keyscan -T 10 " + strings.Join(addrs, " ") + " > spec/known_hosts\n")
	return File{Name: "keyscan.sh", Data: []byte(b.String()), Mode: 0o755}
}

// Write writes the lab's files under dir (created when missing).
// Existing files of the same names are replaced; nothing else in dir is
// touched.
func (l *Lab) Write(dir string) error {
	for _, f := range l.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := safefile.WriteFile(p, f.Data, f.Mode, safefile.Output); err != nil {
			return err
		}
		if err := os.Chmod(p, f.Mode); err != nil {
			return err
		}
	}
	return nil
}
