package clab

import (
	"fmt"
	"regexp"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/builtin"
)

// kind is what fabctl knows of one containerlab kind (drivers.ClabKind).
type kind = drivers.ClabKind

// kinds are the kinds fabctl generates, all canonical names from
// containerlab's schema enum (short aliases such as srl, ceos and cvx are
// not in it): the switch kinds the platforms' descriptors define
// (drivers.Platform.Clab), and linux for hosts.
var kinds = func() map[string]*kind {
	m := map[string]*kind{
		// Hosts: the spec's NIC names are the container's interface names.
		"linux": {Name: "linux", Image: "ghcr.io/hellt/network-multitool:latest", IfName: linuxIf, User: "root"},
	}
	for _, p := range builtin.Platforms() {
		if p.Clab != nil {
			m[p.Clab.Name] = p.Clab
		}
	}
	return m
}()

// platformKinds maps fabctl's switch platforms to the kinds that play
// them (drivers.Platform.ClabKind).
var platformKinds = func() map[string]string {
	m := map[string]string{}
	for _, p := range builtin.Platforms() {
		if p.ClabKind != "" {
			m[p.Name] = p.ClabKind
		}
	}
	return m
}()

// platformSetups are, per switch platform, the partial startup
// configurations kinds that play it need (drivers.Platform.ClabSetup).
var platformSetups = func() map[string]map[string]drivers.ClabFile {
	m := map[string]map[string]drivers.ClabFile{}
	for _, p := range builtin.Platforms() {
		if len(p.ClabSetup) > 0 {
			m[p.Name] = p.ClabSetup
		}
	}
	return m
}()

var linuxRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

func linuxIf(p string) (string, error) {
	switch {
	case p == "eth0":
		return "", fmt.Errorf("eth0 is the container's management interface")
	case p == "lo" || !linuxRe.MatchString(p):
		return "", fmt.Errorf("not a Linux interface name")
	}
	return p, nil
}
