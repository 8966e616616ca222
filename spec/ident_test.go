package spec

import (
	"strings"
	"testing"
)

// identPlatforms are testPlatforms with the port grammars of
// drivers/builtin.SpecPlatforms() for the platforms these tests use.
var identPlatforms = []PlatformInfo{
	{Name: "sonic", Transport: "ssh", PortPattern: `Ethernet(?:0|[1-9][0-9]{0,3})`, PortSyntax: "Ethernet<N>"},
	{Name: "cumulus", Transport: "ssh", PortPattern: `swp[1-9][0-9]{0,2}(?:s[0-9])?`, PortSyntax: "swp<N> or swp<N>s<lane>"},
	{Name: "eos", Transport: "ssh", PortPattern: `Ethernet[1-9][0-9]{0,2}(?:/[1-9][0-9]{0,2}){0,2}`, PortSyntax: "Ethernet<N>[/<lane>]"},
	{Name: "nxos", Transport: "ssh", PortPattern: `Ethernet[1-9][0-9]?/[1-9][0-9]{0,2}(?:/[1-9][0-9]?)?`, PortSyntax: "Ethernet<slot>/<port>"},
	{Name: "openconfig", Transport: "gnmi", PortPattern: `[A-Za-z][A-Za-z0-9_./:-]{0,63}`, PortSyntax: "a letter, then letters, digits, _ . / : -"},
}

// Issue 37: every spec string that reaches a device, a host path or a
// command line is checked at load against the grammar of what it names;
// a value outside it is an error at its file:line. The cases are the
// audit's (a port label carrying a second CLI line, "; touch FILE" for
// NVUE's bash prompt, NUL, ESC, right-to-left override and spaces in
// labels, newlines in address and username, a NIC label ../../etc/x, a
// port named Ethernet{{.TargetName}}) and their neighbours.
func TestIdentifiersRefused(t *testing.T) {
	for _, c := range []struct {
		name, old, new string
		line           int
		want           string
	}{
		{"port with a newline", `"leaf1:Ethernet0"`, `"leaf1:Ethernet0\nhostname PWNED-EOS"`, 22, "line break"},
		{"port from jsondecode", `"leaf1:Ethernet0"`, `jsondecode("\"leaf1:Ethernet0\\nhostname x\"")`, 22, "line break"},
		{"port for a bash prompt", `"leaf1:Ethernet0"`, `"leaf1:swp2 ; touch FILE ;"`, 22, `holds ' '`},
		{"port with NUL", `"leaf1:Ethernet0"`, `"leaf1:Ethernet0\u0000"`, 22, "control character"},
		{"port with ESC", `"leaf1:Ethernet0"`, `"leaf1:Ethernet0\u001b[2J"`, 22, "control character"},
		{"port with RLO", `"leaf1:Ethernet0"`, `"leaf1:Ethernet\u202e0"`, 22, "control character"},
		{"port of another platform", `"leaf1:Ethernet0"`, `"leaf1:swp1"`, 22, "Ethernet<N>"},
		{"port template", `"leaf1:Ethernet0"`, `"leaf1:Ethernet{{.TargetName}}"`, 22, "gnmic"},
		{"address with a newline", `address     = "192.0.2.1"`, `address     = "192.0.2.1\nhostname x"`, 11, "Invalid address"},
		{"address with a space", `address     = "192.0.2.1"`, `address     = "192.0.2.1 -oProxyCommand=x"`, 11, "holds ' '"},
		{"address with a bad port", `address     = "192.0.2.1"`, `address     = "192.0.2.1:0"`, 11, "from 1 to 65535"},
		{"host address", `address = "192.0.2.10"`, `address = "-oProxyCommand=sh"`, 15, "starts or ends with '-'"},
		{"username with a newline", `username = "admin"`, `username = "admin\nenable"`, 6, "Invalid user name"},
		{"username option", `username = "admin"`, `username = "-l"`, 6, "starts with '-'"},
		{"NIC label a path", `nic "eth1"`, `nic "../../etc/x"`, 16, "Invalid interface name"},
		{"NIC label too long", `nic "eth1"`, `nic "enp1s0f0np0verylong"`, 16, "IFNAMSIZ"},
		{"NIC device", `device    = "mlx5_0"`, `device    = "mlx5_0;reboot"`, 17, "Invalid RDMA device name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(base, c.old, c.new, 1)
			if src == base {
				t.Fatalf("%q not in base", c.old)
			}
			if c.name == "NIC label a path" || c.name == "NIC label too long" {
				src = strings.Replace(src, `"h1:eth1"`, `"h1:`+strings.TrimSuffix(strings.TrimPrefix(c.new, `nic "`), `"`)+`"`, 1)
			}
			_, diags := load(t, src, LoadOptions{Platforms: identPlatforms})
			if !diags.HasErrors() {
				t.Fatalf("accepted")
			}
			found := false
			for _, d := range diags {
				if d.Subject != nil && d.Subject.Start.Line == c.line && d.Subject.Filename == "t.fab.hcl" && strings.Contains(d.Summary+" "+d.Detail, c.want) {
					found = true
				}
			}
			if !found {
				t.Errorf("no error at t.fab.hcl:%d saying %q:\n%v", c.line, c.want, diags)
			}
		})
	}
}

// The same on other attributes and platforms, with a spec of their own.
func TestIdentifiersRefusedMore(t *testing.T) {
	const sw = `
fabric "t" {}
switch "s" {
  platform = "%s"
  address  = "192.0.2.1"
  port "%s" {
    description = %s
  }
  acl "%s" {
    action = "permit"
  }
}
`
	for _, c := range []struct {
		platform, port, desc, acl, want string
	}{
		{"openconfig", "Ethernet{{.TargetName}}", `"x"`, "a", "gnmic"},
		{"cumulus", "swp1", `"to spine1? yes"`, "a", `holds '?'`},
		{"cumulus", "swp1", `"a\nb"`, "a", "printable text"},
		{"cumulus", "swp1", `"x"`, "acl;1", "Invalid ACL name"},
		{"nxos", "Ethernet1", `"x"`, "a", "Ethernet<slot>/<port>"},
		{"eos", "Ethernet0", `"x"`, "a", "Ethernet<N>"},
	} {
		src := strings.Replace(sw, "%s", c.platform, 1)
		src = strings.Replace(src, "%s", c.port, 1)
		src = strings.Replace(src, "%s", c.desc, 1)
		src = strings.Replace(src, "%s", c.acl, 1)
		_, diags := load(t, src, LoadOptions{Platforms: identPlatforms})
		if !diags.HasErrors() || !strings.Contains(diags.Error(), c.want) {
			t.Errorf("%s port %q description %s acl %q: want %q, got %v", c.platform, c.port, c.desc, c.acl, c.want, diags)
		}
	}
}

// Names of every shape the grammars take load: breakouts, slots, IPv6
// with a port, host names, directory users.
func TestIdentifiersAccepted(t *testing.T) {
	for _, c := range []struct{ platform, port, addr, user string }{
		{"sonic", "Ethernet0", "192.0.2.1", "admin"},
		{"sonic", "Ethernet252", "leaf1.pod1.example.com:22", "svc.fabctl@corp.example"},
		{"eos", "Ethernet1/1", "[2001:db8::1]:2222", "admin"},
		{"eos", "Ethernet3/1/4", "2001:db8::1", "admin"},
		{"nxos", "Ethernet1/49/1", "192.0.2.1:22", "admin"},
		{"cumulus", "swp1s3", "leaf-1", "cumulus"},
		{"openconfig", "ethernet-1/1", "192.0.2.1", "admin"},
	} {
		src := strings.NewReplacer(`platform    = "sonic"`, `platform    = "`+c.platform+`"`,
			`"leaf1:Ethernet0"`, `"leaf1:`+c.port+`"`, `address     = "192.0.2.1"`, `address     = "`+c.addr+`"`,
			`username = "admin"`, `username = "`+c.user+`"`).Replace(base)
		if _, diags := load(t, src, LoadOptions{Platforms: identPlatforms}); diags.HasErrors() {
			t.Errorf("%+v: %v", c, diags)
		}
	}
}
