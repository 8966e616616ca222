package plan

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// CheckSecrets resolves, before any device is contacted, every secret
// reference of the credentials the selected devices log in with: an
// env("NAME") that is not set or a file("PATH") that cannot be read is
// one error naming it (with where the spec asks for it and the devices
// that need it), not one connection error per device. The drivers
// resolve the same references with the same resolver when they connect
// (spec.SecretRef.Resolve), so a reference this check passes is one they
// can read.
//
// targets and excludes select the devices as --target and --exclude do
// (Selected); getenv resolves env() references.
func CheckSecrets(s *spec.Spec, fab *intent.Fabric, targets, excludes []string, getenv func(string) string) error {
	if s == nil || fab == nil {
		return nil
	}
	creds := map[string]*spec.Credentials{}
	for _, c := range s.Credentials {
		creds[c.Name] = c
	}
	users := map[string][]string{} // credentials name -> device addresses
	for _, u := range Units(fab) {
		d := u.Device
		if d.Credentials == "" || !Selected(d, targets, excludes) {
			continue
		}
		// Switches always log in; hosts and subnet managers only over SSH.
		if d.Kind != intent.KindSwitch && d.Driver != "ssh" {
			continue
		}
		users[d.Credentials] = append(users[d.Credentials], d.Addr())
	}
	type missing struct {
		ref     spec.SecretRef
		why     string
		uses    []string // `password of credentials "x" (file:line)`
		devices []string
	}
	byRef := map[string]*missing{}
	var order []string
	names := make([]string, 0, len(users))
	for n := range users {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		c := creds[n]
		if c == nil {
			continue // the loader reports an unknown credentials name
		}
		for _, r := range c.Secrets() {
			why := secretProblem(*r.Ref, getenv)
			if why == "" {
				continue
			}
			key := r.Ref.Kind + "\x00" + r.Ref.Path()
			m := byRef[key]
			if m == nil {
				m = &missing{ref: *r.Ref, why: why}
				byRef[key] = m
				order = append(order, key)
			}
			use := fmt.Sprintf("%s of credentials %q", r.Attr, c.Name)
			if r.Ref.Src.Filename != "" {
				use += fmt.Sprintf(" (%s:%d)", r.Ref.Src.Filename, r.Ref.Src.Start.Line)
			}
			m.uses = append(m.uses, use)
			m.devices = append(m.devices, users[n]...)
		}
	}
	if len(order) == 0 {
		return nil
	}
	var b strings.Builder
	for i, key := range order {
		m := byRef[key]
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "secret %s %s: it is the %s, needed by %s",
			m.ref, m.why, strings.Join(m.uses, " and the "), deviceList(m.devices))
		if m.ref.Kind == "env" {
			fmt.Fprintf(&b, "; set it (export %s=...) and run again", m.ref.Name)
		}
	}
	b.WriteString("\nno device was contacted")
	return fmt.Errorf("%s", b.String())
}

// secretProblem is why a reference cannot be resolved ("" when it can):
// the resolver the transports use (spec.SecretRef.Resolve), so what this
// check passes is what they send. The value is dropped at once.
func secretProblem(r spec.SecretRef, getenv func(string) string) string {
	_, err := r.Resolve(getenv)
	var se *spec.SecretError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &se):
		return se.Problem
	}
	return err.Error()
}

// deviceList is "switch.leaf1", "switch.leaf1 and switch.leaf2" or
// "7 devices (switch.leaf1, switch.leaf2, switch.leaf3, ...)".
func deviceList(ds []string) string {
	sort.Strings(ds)
	out := ds[:0]
	for i, d := range ds {
		if i == 0 || d != ds[i-1] {
			out = append(out, d)
		}
	}
	switch {
	case len(out) == 1:
		return out[0]
	case len(out) == 2:
		return out[0] + " and " + out[1]
	case len(out) <= 4:
		return fmt.Sprintf("%d devices (%s)", len(out), strings.Join(out, ", "))
	}
	return fmt.Sprintf("%d devices (%s, ...)", len(out), strings.Join(out[:3], ", "))
}
