package eos

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/fabctl/fabctl/drivers"
)

// Descriptor is the EOS platform as the spec loader and the testbeds see
// it.
var Descriptor = drivers.Platform{
	Name:      Name,
	Title:     "Arista EOS",
	New:       New,
	Transport: drivers.TransportSSH,
	Limits:    limits,
	// Ethernet1, Ethernet2, ... (Ethernet1/2 is a split lane).
	Ports: drivers.PortNaming{Prefix: "Ethernet", First: 1, Step: 1,
		// Ethernet<port>, a lane of a split port Ethernet<port>/<lane>,
		// on a modular system Ethernet<slot>/<port>[/<lane>] (EOS User
		// Manual, Layer 1 Profiles; 7200 series interfaces; arista.eos):
		// testdata/vendor/interface-names.txt:16-20.
		Pattern: `Ethernet[1-9][0-9]{0,2}(?:/[1-9][0-9]{0,2}){0,2}`, Syntax: "Ethernet<N>[/<lane>] or Ethernet<slot>/<port>[/<lane>]"},
	Emulator:      "eos",
	EmulatorPorts: 8,
	ClabKind:      "arista_ceos",
	// cEOS: ethN is EthernetN, ethC_L the port-split EthernetC/L.
	Clab: &drivers.ClabKind{Name: "arista_ceos", Image: "ceos:4.32.2F", IfName: clabIf,
		User: "admin", PasswordEnv: "FABCTL_CLAB_CEOS_PASSWORD", Startup: clabStartup},
}

// clabStartup: the rendered configuration is a partial startup config,
// which containerlab merges with the configuration it generates
// (management, users).
func clabStartup(file string) drivers.ClabStartup {
	partial := strings.TrimSuffix(file, ".cfg") + ".partial.cfg"
	return drivers.ClabStartup{File: partial, StartupConfig: partial}
}

var clabPortRe = regexp.MustCompile(`^Ethernet([1-9]\d*)(?:/([1-9]\d*))?$`)

func clabIf(p string) (string, error) {
	m := clabPortRe.FindStringSubmatch(p)
	if m == nil {
		return "", fmt.Errorf("cEOS ports are Ethernet<N> or Ethernet<N>/<lane>, N from 1")
	}
	if m[2] != "" {
		return "eth" + m[1] + "_" + m[2], nil
	}
	return "eth" + m[1], nil
}
