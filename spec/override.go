package spec

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/fabctl/fabctl/internal/ident"
)

// Override files (`*_override.fab.hcl`, Terraform's convention) change
// how fabctl reaches devices a spec already declares, without touching
// the spec's own files: a lab built from the spec (`fabctl testbed
// containerlab` writes one) points the drivers at the lab's management
// addresses and credentials with one. They are read after the rest of
// the spec is decoded and may only name existing switches and hosts:
//
//	switch "leaf1" {
//	  address     = "172.100.100.11"
//	  credentials = "clab-ceos"       # a credentials block of an ordinary file
//	}
//	host "gpu01" {
//	  connect = "ssh"
//	  address = "172.100.100.31"
//	}
//
// Values are literals: an override says where a device is, it computes
// nothing. Blocks, attributes and names outside this list are errors.

// OverrideSuffix marks override files.
const OverrideSuffix = "_override.fab.hcl"

// IsOverrideFile reports whether name is an override file.
func IsOverrideFile(name string) bool { return strings.HasSuffix(name, OverrideSuffix) }

var overrideSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
	{Type: "switch", LabelNames: []string{"name"}},
	{Type: "host", LabelNames: []string{"name"}},
}}

var overrideAttrs = map[string][]string{
	"switch": {"address", "credentials", "driver", overrideAccept, unmanagedAttr},
	"host":   {"address", "connect", "credentials", "sudo", overrideAccept, unmanagedAttr},
}

// overrideAccept and unmanagedAttr are the override attributes that are
// not strings: what the device reached this way cannot express (a
// testbed's veth host has no DCB), a map of literal strings added to the
// block's own accept_not_in_effect (docs/spec.md#accept_not_in_effect),
// and the settings fabctl leaves as that device runs them, added to the
// block's own unmanaged (docs/spec.md#unmanaged).
const overrideAccept = "accept_not_in_effect"

// applyOverrides applies override files to a decoded spec.
func applyOverrides(s *Spec, files []File) hcl.Diagnostics {
	var diags hcl.Diagnostics
	seen := map[string]hcl.Range{}
	for _, f := range files {
		hf, d := hclsyntax.ParseConfig(f.Data, f.Name, hcl.InitialPos)
		diags = append(diags, d...)
		if hf == nil || d.HasErrors() {
			continue
		}
		if s.Files != nil {
			s.Files[f.Name] = hf
		}
		content, d := hf.Body.Content(overrideSchema)
		diags = append(diags, d...)
		if content == nil {
			continue
		}
		for _, b := range content.Blocks {
			name := b.Labels[0]
			key := b.Type + "." + name
			if prev, dup := seen[key]; dup {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Duplicate override",
					Detail:  fmt.Sprintf("%s %q is overridden twice (first at %s). Keep one block.", b.Type, name, prev),
					Subject: b.DefRange.Ptr()})
				continue
			}
			seen[key] = b.DefRange
			diags = append(diags, s.applyOverride(b)...)
		}
	}
	return diags
}

func (s *Spec) applyOverride(b *hcl.Block) hcl.Diagnostics {
	name := b.Labels[0]
	var sw *Switch
	var h *Host
	var names []string
	switch b.Type {
	case "switch":
		if sw = s.Switch(name); sw == nil {
			for _, x := range s.Switches {
				names = append(names, x.Name)
			}
		}
	case "host":
		if h = s.Host(name); h == nil {
			for _, x := range s.Hosts {
				names = append(names, x.Name)
			}
		}
	}
	if sw == nil && h == nil {
		detail := fmt.Sprintf("An override may only change a %s the spec declares; there is no %s %q.", b.Type, b.Type, name)
		if sg := suggest(name, names); sg != "" {
			detail += fmt.Sprintf(" Did you mean %q?", sg)
		}
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Override of an unknown " + b.Type, Detail: detail, Subject: b.LabelRanges[0].Ptr()}}
	}
	allowed := overrideAttrs[b.Type]
	var schema hcl.BodySchema
	for _, a := range allowed {
		schema.Attributes = append(schema.Attributes, hcl.AttributeSchema{Name: a})
	}
	content, diags := b.Body.Content(&schema)
	if content == nil {
		return diags
	}
	keys := make([]string, 0, len(content.Attributes))
	for k := range content.Attributes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		a := content.Attributes[k]
		if k == overrideAccept || k == unmanagedAttr {
			diags = append(diags, overrideReasons(b.Type, name, a, sw, h)...)
			continue
		}
		if k == "sudo" { // how the login runs the agent: true or false, literally
			_, literal := a.Expr.(*hclsyntax.LiteralValueExpr)
			v, d := a.Expr.Value(nil)
			if !literal || d.HasErrors() || v.IsNull() || !v.IsKnown() || v.Type() != cty.Bool {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Override values are literals",
					Detail: fmt.Sprintf("host %q: sudo must be true or false; override files compute nothing.", name), Subject: a.Expr.Range().Ptr()})
				continue
			}
			h.Sudo = v.True()
			continue
		}
		v, d := a.Expr.Value(nil)
		if d.HasErrors() || v.IsNull() || !v.IsKnown() || v.Type() != cty.String {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Override values are literal strings",
				Detail: fmt.Sprintf("%s %q: %s must be a quoted string; override files compute nothing.", b.Type, name, k), Subject: a.Expr.Range().Ptr()})
			continue
		}
		val := v.AsString()
		rng := a.Expr.Range()
		if k == "credentials" && s.CredentialsByName(val) == nil {
			var creds []string
			for _, c := range s.Credentials {
				creds = append(creds, c.Name)
			}
			detail := fmt.Sprintf("%s %q: no credentials block %q.", b.Type, name, val)
			if sg := suggest(val, creds); sg != "" {
				detail += fmt.Sprintf(" Did you mean %q?", sg)
			}
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unknown credentials", Detail: detail, Subject: &rng})
			continue
		}
		if k == "address" {
			if err := ident.Address(val); err != nil {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid address",
					Detail: fmt.Sprintf("%s %q: address %q %s.", b.Type, name, val, err), Subject: &rng})
				continue
			}
		}
		switch {
		case sw != nil && k == "address":
			sw.Address = val
		case sw != nil && k == "credentials":
			sw.Credentials = val
		case sw != nil && k == "driver":
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unsupported argument",
				Detail: fmt.Sprintf("switch %q: %s", name, driverRemoved(s.platforms)), Subject: &rng})
			continue
		case h != nil && k == "address":
			h.Address = val
		case h != nil && k == "credentials":
			h.Credentials = val
		case h != nil && k == "connect":
			c, ok := ParseConnect(val)
			if !ok {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid value for connect",
					Detail: fmt.Sprintf("host %q: connect = %q; use \"ssh\", \"local\", \"netns:<namespace>\" or \"ssh+netns:<namespace>\".", name, val), Subject: &rng})
				continue
			}
			if c.Netns != "" {
				if err := ident.Name(c.Netns, 255); err != nil {
					diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid network namespace",
						Detail: fmt.Sprintf("host %q: namespace %q %s.", name, c.Netns, err), Subject: &rng})
					continue
				}
			}
			h.Connect = c
		}
	}
	return diags
}

// ParseConnect parses a host's connect value: "ssh", "local",
// "netns:NAME" or "ssh+netns:NAME" (over SSH, then inside a namespace on
// that host: testbed hosts).
func ParseConnect(conn string) (Connect, bool) {
	switch {
	case conn == "ssh" || conn == "local" || conn == ConnectNone:
		return Connect{Kind: conn}, true
	case strings.HasPrefix(conn, "netns:") && len(conn) > len("netns:"):
		return Connect{Kind: "netns", Netns: strings.TrimPrefix(conn, "netns:")}, true
	case strings.HasPrefix(conn, "ssh+netns:") && len(conn) > len("ssh+netns:"):
		return Connect{Kind: "ssh", Netns: strings.TrimPrefix(conn, "ssh+netns:")}, true
	}
	return Connect{}, false
}

// overrideReasons adds an override's accept_not_in_effect or unmanaged
// (literal keys and reasons, checked as the spec's own) to the device's,
// and refuses a key the device then has in both.
func overrideReasons(typ, name string, a *hcl.Attribute, sw *Switch, h *Host) hcl.Diagnostics {
	rng := a.Expr.Range()
	attr := a.Name
	bad := func(detail string) hcl.Diagnostics {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid " + attr + " override",
			Detail: fmt.Sprintf("%s %q: %s", typ, name, detail), Subject: &rng}}
	}
	v, d := a.Expr.Value(nil)
	if d.HasErrors() || v.IsNull() || !v.IsKnown() || !(v.Type().IsObjectType() || v.Type().IsMapType()) || !v.IsWhollyKnown() {
		return bad(attr + " must be a map of quoted strings, { \"<setting>\" = \"<reason>\" }; override files compute nothing.")
	}
	add := Acceptances{}
	for it := v.ElementIterator(); it.Next(); {
		kv, rv := it.Element()
		k := kv.AsString()
		if rv.IsNull() || rv.Type() != cty.String {
			return bad(fmt.Sprintf("%s[%q] must be a quoted string.", attr, k))
		}
		why := validAcceptKey(k)
		if attr == unmanagedAttr {
			why = settingKeyProblem(typ, k)
		}
		if why != "" {
			return bad(fmt.Sprintf("%s key %q %s.", attr, k, why))
		}
		if strings.TrimSpace(rv.AsString()) == "" {
			if attr == unmanagedAttr {
				return bad(fmt.Sprintf("%s[%q] is empty: say why fabctl leaves the setting as the device runs it.", attr, k))
			}
			return bad(fmt.Sprintf("%s[%q] is empty: say why the setting may stay out of effect.", attr, k))
		}
		if p := unmanagedPort(k); attr == unmanagedAttr && sw != nil && p != "" && sw.Port(p) == nil {
			return bad(fmt.Sprintf("%s key %q names port %q, which the switch does not have.", attr, k, p))
		}
		if n := unmanagedNIC(k); attr == unmanagedAttr && h != nil && n != "" && h.NIC(n) == nil {
			return bad(fmt.Sprintf("%s key %q names nic %q, which the host does not have.", attr, k, n))
		}
		add[k] = rv.AsString()
	}
	var accept, unmanaged *Acceptances
	if sw != nil {
		accept, unmanaged = &sw.Accept, &sw.Unmanaged
	} else {
		accept, unmanaged = &h.Accept, &h.Unmanaged
	}
	dst := accept
	if attr == unmanagedAttr {
		dst = unmanaged
	}
	if *dst == nil {
		*dst = Acceptances{}
	}
	for k, why := range add {
		(*dst)[k] = why
	}
	if both := bothWays(*unmanaged, *accept); len(both) > 0 {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Setting both unmanaged and accepted",
			Detail: bothWaysDetail(fmt.Sprintf("%s %q", typ, name), both[0]), Subject: &rng}}
	}
	return nil
}
