package nxos

import (
	"fmt"
	"regexp"

	"github.com/fabctl/fabctl/drivers"
)

// Descriptor is the NX-OS platform as the spec loader and the testbeds
// see it.
var Descriptor = drivers.Platform{
	Name:      Name,
	Title:     "Cisco NX-OS",
	New:       New,
	Transport: drivers.TransportSSH,
	Limits:    limits,
	// Ethernet1/1, Ethernet1/2, ... (the emulator has slot 1 only).
	Ports: drivers.PortNaming{Prefix: "Ethernet", OptionalSlot: "1/", First: 1, Step: 1,
		// Ethernet<slot>/<port>, a breakout Ethernet<slot>/<port>/<n>
		// (real NX-OS running-config; Cisco NX-API "Configuring
		// Breakout": ethernet 1/1/1): testdata/vendor/interface-names.txt:23-26.
		Pattern: `Ethernet[1-9][0-9]?/[1-9][0-9]{0,2}(?:/[1-9][0-9]?)?`, Syntax: "Ethernet<slot>/<port>[/<breakout>]"},
	Emulator:      "nxos",
	EmulatorPorts: 8,
	ClabKind:      "cisco_n9kv",
	// Nexus 9000v (vrnetlab): ethN is Ethernet1/N, 64 ports; breakout
	// ports (Ethernet1/C/N) do not exist on it.
	Clab: &drivers.ClabKind{Name: "cisco_n9kv", Image: "vrnetlab/cisco_n9kv:10.4.3", IfName: clabIf, Ports: 64, Index: drivers.ClabEthIndex,
		User: "admin", PasswordEnv: "FABCTL_CLAB_N9KV_PASSWORD", VM: true, Startup: clabStartup},
}

// clabStartup: containerlab copies a cisco_n9kv node's startup-config
// into the vrnetlab container's /config/startup-config.cfg, which
// vrnetlab applies once NX-OS has booted (containerlab
// nodes/vr_n9kv/vr-n9kv.go: PreDeploy, LoadStartupConfigFileVr).
func clabStartup(file string) drivers.ClabStartup {
	return drivers.ClabStartup{StartupConfig: file}
}

var (
	clabPortRe     = regexp.MustCompile(`^Ethernet1/([1-9]\d*)$`)
	clabBreakoutRe = regexp.MustCompile(`^Ethernet1/\d+/\d+$`)
)

func clabIf(p string) (string, error) {
	if m := clabPortRe.FindStringSubmatch(p); m != nil {
		return "eth" + m[1], nil
	}
	if clabBreakoutRe.MatchString(p) {
		return "", fmt.Errorf("the Nexus 9000v has no breakout ports (Ethernet1/<cage>/<n>), only Ethernet1/1-64")
	}
	return "", fmt.Errorf("Nexus 9000v ports are Ethernet1/<N>")
}
