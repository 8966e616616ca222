package spec

import (
	"fmt"
	"regexp"
	"sync"

	"github.com/hashicorp/hcl/v2"

	"github.com/fabctl/fabctl/internal/ident"
)

// Typed identifiers. Every spec string that reaches a device, a host
// path or a command line is checked here, after loading (overrides
// included), against the grammar of what it names: a switch port
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
// same ports and NICs on every switch and host.
type identChecker struct {
	diags     hcl.Diagnostics
	platforms map[string]PlatformInfo
	ports     map[[2]string]string // platform, name -> "" or why not
	netdevs   map[string]error
}

// checkIdentifiers checks every identifier of s (see above).
func checkIdentifiers(s *Spec, platforms []PlatformInfo) hcl.Diagnostics {
	if s == nil {
		return nil
	}
	c := &identChecker{platforms: map[string]PlatformInfo{}, ports: map[[2]string]string{}, netdevs: map[string]error{}}
	for _, p := range platforms {
		c.platforms[p.Name] = p
	}
	for _, cr := range s.Credentials {
		if cr.Username != "" {
			c.check(ident.UserName(cr.Username), cr.Src.Attr("username"), "Invalid user name", "credentials %q: username %q", cr.Name, cr.Username)
		}
	}
	for _, sw := range s.Switches {
		if sw == nil {
			continue
		}
		if sw.Address != "" {
			c.check(ident.Address(sw.Address), sw.Src.Attr("address"), "Invalid address", "switch %q: address %q", sw.Name, sw.Address)
		}
		if sw.Src.Has("role") {
			c.check(ident.Name(sw.Role, 64), sw.Src.Attr("role"), "Invalid role", "switch %q: role %q", sw.Name, sw.Role)
		}
		for _, p := range sw.Ports {
			c.port(sw, p)
			if p.Description != "" {
				c.check(ident.Description(p.Description), p.Src.Attr("description"), "Invalid description", "port %s:%s: description %q", sw.Name, p.Name, p.Description)
			}
		}
		for _, a := range sw.ACLs {
			c.check(ident.Name(a.Name, 64), a.Src.Block, "Invalid ACL name", "switch %q: acl %q", sw.Name, a.Name)
		}
	}
	for _, h := range s.Hosts {
		if h == nil {
			continue
		}
		if h.Address != "" {
			c.check(ident.Address(h.Address), h.Src.Attr("address"), "Invalid address", "host %q: address %q", h.Name, h.Address)
		}
		if h.Src.Has("role") && h.Role != "" {
			c.check(ident.Name(h.Role, 64), h.Src.Attr("role"), "Invalid role", "host %q: role %q", h.Name, h.Role)
		}
		if h.Connect.Netns != "" {
			c.check(ident.Name(h.Connect.Netns, 255), h.Src.Attr("connect"), "Invalid network namespace", "host %q: namespace %q (a file under /run/netns)", h.Name, h.Connect.Netns)
		}
		if h.NCCLEnvFile != "" {
			c.check(ident.Path(h.NCCLEnvFile), h.Src.Attr("nccl_env_file"), "Invalid path", "host %q: nccl_env_file %q", h.Name, h.NCCLEnvFile)
		}
		for _, n := range h.NICs {
			c.netdev(n.Name, n.Src.Block, "host %q: nic %q", h.Name, n.Name)
			if n.Device != "" {
				c.check(ident.RDMADevice(n.Device), n.Src.Attr("device"), "Invalid RDMA device name", "nic %s:%s: device %q", h.Name, n.Name, n.Device)
			}
			if n.VLANInterface != "" && n.VLANInterface != n.Name+"."+fmt.Sprint(n.VLAN) {
				c.netdev(n.VLANInterface, n.Src.Attr("vlan_interface"), "nic %s:%s: vlan_interface %q", h.Name, n.Name, n.VLANInterface)
			}
		}
	}
	if ib := s.InfiniBand; ib != nil {
		for _, x := range []struct{ attr, v string }{{"opensm_conf", ib.OpenSMConf}, {"opensm_pid_file", ib.OpenSMPIDFile}, {"diags_dir", ib.DiagsDir}} {
			if x.v != "" {
				c.check(ident.Line(x.v), ib.Src.Attr(x.attr), "Invalid path", "infiniband %s %q", x.attr, x.v)
			}
		}
	}
	return c.diags
}

func (c *identChecker) errf(rng hcl.Range, summary, format string, args ...any) {
	c.diags = append(c.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(format, args...), Subject: rng.Ptr()})
}

// check reports err (a value outside its grammar) on rng: what, then why.
func (c *identChecker) check(err error, rng hcl.Range, summary, what string, args ...any) {
	if err == nil {
		return
	}
	c.errf(rng, summary, "%s %s.", fmt.Sprintf(what, args...), err)
}

func (c *identChecker) netdev(name string, rng hcl.Range, what string, args ...any) {
	err, ok := c.netdevs[name]
	if !ok {
		err = ident.Netdev(name)
		c.netdevs[name] = err
	}
	c.check(err, rng, "Invalid interface name", what, args...)
}

// port checks a switch port's name: the safe class, then the platform's
// grammar.
func (c *identChecker) port(sw *Switch, p *Port) {
	key := [2]string{sw.Platform, p.Name}
	why, ok := c.ports[key]
	if !ok {
		why = portProblem(c.platforms[sw.Platform], p.Name)
		c.ports[key] = why
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
