package spec

import (
	"fmt"
	"regexp"
	"strconv"
	"sync"

	"github.com/hashicorp/hcl/v2"

	"github.com/fabctl/fabctl/internal/ident"
)

// Typed identifiers. Every spec string that reaches a device, a host
// path or a command line is checked here, as it is decoded (and again
// when an override file sets it), against the grammar of what it names: a switch port
// against its platform's port names (PlatformInfo.PortPattern, from the
// vendor's naming), a NIC against Linux's interface names, an address
// against IP addresses and RFC 1123 host names, a user name against
// POSIX's portable user names, free text against printable text without
// CLI or shell metacharacters (internal/ident has each grammar and its
// source). A value outside its grammar is an error at its file:line: a
// port label holding a newline or "; touch FILE", an address holding a
// line break, a NIC label "../../etc/x" or a port named
// "Ethernet{{.TargetName}}" never reaches plan, render or a device, and
// a saved plan carrying such a spec fails when apply loads its embedded
// spec again.

// portREs caches the platforms' port grammars, compiled.
var portREs sync.Map // PortPattern -> *regexp.Regexp

func portRegexp(pattern string) (*regexp.Regexp, error) {
	if re, ok := portREs.Load(pattern); ok {
		return re.(*regexp.Regexp), nil
	}
	re, err := regexp.Compile(`^(?:` + pattern + `)$`)
	if err != nil {
		return nil, err
	}
	portREs.Store(pattern, re)
	return re, nil
}

// identChecker checks identifiers, remembering verdicts: a pod names the
// same ports and NICs on every switch and host. Each loader has its own
// (stream workers decode in parallel); the checks run as each object is
// decoded, while its strings are still in the cache.
type identChecker struct {
	l         *loader
	platforms map[string]PlatformInfo
	ports     map[string]map[string]string // platform -> name -> "" or why not
	netdevs   map[string]error
}

// ids is the loader's identifier checker.
func (l *loader) ids() *identChecker {
	if l.idc == nil {
		c := &identChecker{l: l, platforms: map[string]PlatformInfo{}, ports: map[string]map[string]string{}, netdevs: map[string]error{}}
		for _, p := range l.opts.Platforms {
			c.platforms[p.Name] = p
		}
		l.idc = c
	}
	return l.idc
}

func (c *identChecker) credentials(cr *Credentials) {
	if cr.Username != "" {
		if err := ident.UserName(cr.Username); err != nil {
			c.fail(err, cr.Src.Attr("username"), "Invalid user name", fmt.Sprintf("credentials %q: username %q", cr.Name, cr.Username))
		}
	}
}

// switchAttrs checks a switch's own attributes (its ports are checked
// as they are decoded or implied: port).
func (c *identChecker) switchAttrs(sw *Switch) {
	c.lldpName("switch", sw.Name, sw.LLDPName, sw.Src)
	if sw.Address != "" {
		if err := ident.Address(sw.Address); err != nil {
			c.fail(err, sw.Src.Attr("address"), "Invalid address", fmt.Sprintf("switch %q: address %q", sw.Name, sw.Address))
		}
	}
	if sw.Src.Has("role") {
		if err := ident.Name(sw.Role, 64); err != nil {
			c.fail(err, sw.Src.Attr("role"), "Invalid role", fmt.Sprintf("switch %q: role %q", sw.Name, sw.Role))
		}
	}
	for _, a := range sw.ACLs {
		if err := ident.Name(a.Name, 64); err != nil {
			c.fail(err, a.Src.Block, "Invalid ACL name", fmt.Sprintf("switch %q: acl %q", sw.Name, a.Name))
		}
	}
}

// hostAttrs checks a host's own attributes (its NICs: nic).
func (c *identChecker) hostAttrs(h *Host) {
	c.lldpName("host", h.Name, h.LLDPName, h.Src)
	if h.Address != "" {
		if err := ident.Address(h.Address); err != nil {
			c.fail(err, h.Src.Attr("address"), "Invalid address", fmt.Sprintf("host %q: address %q", h.Name, h.Address))
		}
	}
	if h.Src.Has("role") && h.Role != "" {
		if err := ident.Name(h.Role, 64); err != nil {
			c.fail(err, h.Src.Attr("role"), "Invalid role", fmt.Sprintf("host %q: role %q", h.Name, h.Role))
		}
	}
	if h.Connect.Netns != "" {
		if err := ident.Name(h.Connect.Netns, 255); err != nil {
			c.fail(err, h.Src.Attr("connect"), "Invalid network namespace", fmt.Sprintf("host %q: namespace %q (a file under /run/netns)", h.Name, h.Connect.Netns))
		}
	}
	if h.NCCLEnvFile != "" {
		if err := ident.Path(h.NCCLEnvFile); err != nil {
			c.fail(err, h.Src.Attr("nccl_env_file"), "Invalid path", fmt.Sprintf("host %q: nccl_env_file %q", h.Name, h.NCCLEnvFile))
		}
	}
}

func (c *identChecker) nic(host string, n *NIC) {
	c.netdev(n.Name, func() hcl.Range { return n.Src.Block }, func() string { return fmt.Sprintf("host %q: nic %q", host, n.Name) })
	if n.Device != "" {
		if err := ident.RDMADevice(n.Device); err != nil {
			c.fail(err, n.Src.Attr("device"), "Invalid RDMA device name", fmt.Sprintf("nic %s:%s: device %q", host, n.Name, n.Device))
		}
	}
	if n.VLANInterface != "" && n.VLANInterface != n.Name+"."+strconv.Itoa(n.VLAN) {
		c.netdev(n.VLANInterface, func() hcl.Range { return n.Src.Attr("vlan_interface") }, func() string {
			return fmt.Sprintf("nic %s:%s: vlan_interface %q", host, n.Name, n.VLANInterface)
		})
	}
}

func (c *identChecker) infiniband(ib *InfiniBandConfig) {
	for _, x := range []struct{ attr, v string }{{"opensm_conf", ib.OpenSMConf}, {"opensm_pid_file", ib.OpenSMPIDFile}, {"diags_dir", ib.DiagsDir}} {
		if x.v != "" {
			if err := ident.Line(x.v); err != nil {
				c.fail(err, ib.Src.Attr(x.attr), "Invalid path", fmt.Sprintf("infiniband %s %q", x.attr, x.v))
			}
		}
	}
}

func (c *identChecker) errf(rng hcl.Range, summary, format string, args ...any) {
	c.l.errf(&rng, summary, format, args...)
}

// fail reports err (a value outside its grammar) on rng: what, then why.
// Callers format what only on failure: the checks run over every NIC
// and port of a pod, and formatting (boxing the arguments) allocates.
func (c *identChecker) fail(err error, rng hcl.Range, summary, what string) {
	c.errf(rng, summary, "%s %s.", what, err)
}

// netdev checks an interface name (verdicts remembered by name); what
// describes it, on failure only.
func (c *identChecker) netdev(name string, rng func() hcl.Range, what func() string) {
	err, ok := c.netdevs[name]
	if !ok {
		err = ident.Netdev(name)
		c.netdevs[name] = err
	}
	if err != nil {
		c.fail(err, rng(), "Invalid interface name", what())
	}
}

// port checks a switch port's name (the safe class, then the platform's
// grammar) and description.
func (c *identChecker) port(sw *Switch, p *Port) {
	verdicts := c.ports[sw.Platform]
	if verdicts == nil {
		verdicts = map[string]string{}
		c.ports[sw.Platform] = verdicts
	}
	why, ok := verdicts[p.Name]
	if !ok {
		why = portProblem(c.platforms[sw.Platform], p.Name)
		verdicts[p.Name] = why
	}
	if p.Description != "" {
		if err := ident.Description(p.Description); err != nil {
			c.fail(err, p.Src.Attr("description"), "Invalid description", fmt.Sprintf("port %s:%s: description %q", sw.Name, p.Name, p.Description))
		}
	}
	if why != "" {
		c.errf(p.Src.Block, "Invalid port name", "switch %q (platform %s): port %q %s.", sw.Name, sw.Platform, p.Name, why)
	}
}

// portProblem says why name is not a port name of platform p ("" when
// it is one): the safe class every port name is in (ident.Port), then
// the platform's grammar.
func portProblem(p PlatformInfo, name string) string {
	if i := ident.Template(name); i >= 0 {
		return fmt.Sprintf("holds \"{{\" at byte %d, which gnmic reads as a template action in the request file fabctl writes", i)
	}
	if err := ident.Port(name); err != nil {
		return err.Error()
	}
	if p.PortPattern == "" {
		return ""
	}
	re, err := portRegexp(p.PortPattern)
	if err != nil {
		return "cannot be checked: the platform's port grammar does not compile: " + err.Error()
	}
	if !re.MatchString(name) {
		return "is not a port name of this platform: " + p.PortSyntax
	}
	return ""
}

// lldpName checks a device's lldp_name: the LLDP System Name TLV is the
// system's fully qualified domain name (IEEE 802.1AB-2016 8.5.6), so a
// host name by RFC 1123.
func (c *identChecker) lldpName(kind, name, lldp string, src Source) {
	if !src.Has("lldp_name") {
		return
	}
	if err := ident.HostName(lldp); err != nil {
		c.fail(err, src.Attr("lldp_name"), "Invalid LLDP system name", fmt.Sprintf("%s %q: lldp_name %q", kind, name, lldp))
	}
}
