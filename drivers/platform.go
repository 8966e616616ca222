package drivers

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/yangval"
)

// Transports a switch platform's driver manages it over (a spec
// switch's Driver).
const (
	TransportSSH  = "ssh"  // an SSH CLI session
	TransportGNMI = "gnmi" // gNMI over TLS
)

// Platform is what code outside a switch driver's folder knows of its
// platform: the spec loader, the testbeds (local emulators,
// containerlab) and YANG validation read it. Each switch driver package
// exports one (its Descriptor); drivers/builtin lists them. A platform's
// facts are written there once.
type Platform struct {
	// Name is the spec's platform value and the driver registry key.
	Name string
	// Title names the platform in messages ("SR Linux").
	Title string
	// New builds the platform's driver (drivers/builtin registers it
	// under Name).
	New Factory
	// Transport is what the driver manages a switch over (TransportSSH
	// or TransportGNMI).
	Transport string
	// Limits are what the driver or the platform's model refuses or
	// cannot express, as data the static checks (lint) read without a
	// render; a test of the platform's driver keeps them true.
	Limits spec.PlatformLimits
	// YANG is the model set the driver's payload is validated against
	// (zero: the payload is not YANG-modelled).
	YANG YANGModels
	// Ports is how the platform names its front-panel ports.
	Ports PortNaming
	// Emulator is the testbed emulator that plays the platform in the
	// local testbed ("" none); testbed/local maps it to a constructor.
	Emulator string
	// EmulatorPorts is how many ports the emulator has when the spec's
	// links need fewer.
	EmulatorPorts int
	// EmulatorInitial, when set, is the emulator's starting
	// configuration (a gNMI target's JSON_IETF object): what the device
	// has before fabctl configures it.
	EmulatorInitial func() []byte
	// GNMITelemetry is what telemetry subscribes to on a gNMI platform's
	// switches (nil: none; SSH CLI drivers read counters themselves,
	// CounterReader).
	GNMITelemetry *GNMITelemetry
	// ClabKind is the containerlab kind that plays the platform ("" none).
	ClabKind string
	// Clab is that kind's facts when this platform's folder defines it;
	// nil when the kind is defined by another platform's (OpenConfig is
	// played by SR Linux).
	Clab *ClabKind
	// ClabSetup is, per containerlab kind that plays the platform
	// without being defined by it, the partial startup configuration
	// (in the kind's CLI) that makes the node serve the platform, written
	// under the switch's configs directory and made the node's
	// startup-config (OpenConfig on SR Linux: the gNMI server serves the
	// OpenConfig models).
	ClabSetup map[string]ClabFile
	// InfiniBand marks an InfiniBand switch platform: New is nil (the
	// subnet manager programs the switch; see drivers/switch/ibswitch).
	InfiniBand bool
}

// Spec is the part of the platform the spec loader needs.
func (p Platform) Spec() spec.PlatformInfo {
	return spec.PlatformInfo{Name: p.Name, Title: p.Title, Transport: p.Transport, InfiniBand: p.InfiniBand, Limits: p.Limits,
		PortPattern: p.Ports.Pattern, PortSyntax: p.Ports.Syntax}
}

// YANGModels names a model set under a --yang-dir and says how libyang
// loads it for the platform.
type YANGModels struct {
	// Profile: Set is the model set and its sub-directory name
	// ("sonic", "openconfig", "srlinux"; drivers.YANGPayload.Models names
	// it); Prefer picks among same-named top-level nodes of the set
	// (ietf-interfaces and openconfig-interfaces both define
	// "interfaces"), as a device serving that origin does; the modules,
	// features and load-time rewrites libyang loads (yangval/libyang).
	yangval.Profile
	// Marker is the set's top-level module file: a directory holding it
	// holds the set.
	Marker string
}

// PortNaming is how a platform numbers its front-panel ports: Prefix,
// then the port number; ports run First, First+Step, ...
type PortNaming struct {
	Prefix string
	// OptionalSlot is an optional part after Prefix before the number
	// (NX-OS "1/": Ethernet1/N; the emulators have slot 1 only).
	OptionalSlot string
	// Lane is the separator after the number that starts a breakout
	// lane, which lives on the numbered port (Cumulus "s": swp1s0).
	Lane  string
	First int
	Step  int
	// Pattern is the whole grammar of the platform's front-panel port
	// names, a regular expression (anchored when used): the vendor's own
	// naming, cited beside each descriptor's value
	// (testdata/vendor/interface-names.txt). The spec loader refuses
	// any other port name at its file:line; the drivers check it again
	// before a name reaches a command line or a request file
	// (CheckPort), and the fuzz of rendered lines holds every platform
	// to it.
	Pattern string
	// Syntax is Pattern as people read it: "Ethernet<N>[/<lane>]".
	Syntax string
}

var portRes sync.Map // Pattern -> *regexp.Regexp

// CheckPort checks name against the platform's port grammar (Pattern):
// nil when it is one of the platform's port names.
func (n PortNaming) CheckPort(name string) error {
	if n.Pattern == "" {
		return nil
	}
	re, ok := portRes.Load(n.Pattern)
	if !ok {
		re, _ = portRes.LoadOrStore(n.Pattern, regexp.MustCompile(`^(?:`+n.Pattern+`)$`))
	}
	if !re.(*regexp.Regexp).MatchString(name) {
		return fmt.Errorf("%q is not a port name of this platform (%s)", name, n.Syntax)
	}
	return nil
}

// Valid reports whether the platform can have a port of that name.
func (n PortNaming) Valid(port string) bool { return n.CheckPort(port) == nil }

// Name is the name of the i-th port (from 0).
func (n PortNaming) Name(i int) string {
	return n.Prefix + strconv.Itoa(n.First+i*n.Step)
}

// Count is how many ports a port list needs so that port exists: the
// port's position (from 1); ok is false when port is not named this way.
func (n PortNaming) Count(port string) (int, bool) {
	if !strings.HasPrefix(port, n.Prefix) {
		return 0, false
	}
	num := strings.TrimPrefix(port, n.Prefix)
	if n.OptionalSlot != "" {
		num = strings.TrimPrefix(num, n.OptionalSlot)
	}
	if n.Lane != "" {
		num, _, _ = strings.Cut(num, n.Lane)
	}
	v, err := strconv.Atoi(num)
	if err != nil {
		return 0, false
	}
	step := n.Step
	if step <= 0 {
		step = 1
	}
	return (v-n.First)/step + 1, true
}

// ClabKind is what fabctl knows of one containerlab kind: the image it
// defaults to, the node type, how the kind names a spec port in the
// topology file, how many data ports its image has, and how fabctl logs
// into it.
type ClabKind struct {
	Name  string
	Image string
	Type  string
	// IfName translates a spec port name into the kind's interface name
	// in the topology file.
	IfName func(port string) (string, error)
	// Ports is the number of data ports the default image has (0: no
	// fixed number); a spec port beyond it gets a warning.
	Ports int
	// Index is a port's number among the image's data ports (1-based)
	// for the Ports check.
	Index func(clabIf string) int
	// User is the kind's default login; PasswordEnv the variable the
	// generated credentials read its password from.
	User, PasswordEnv string
	// GNMI: fabctl drives the kind over gNMI (port 57400, TLS from the
	// lab's CA) instead of SSH.
	GNMI bool
	// VM: a vrnetlab virtual machine in a container (needs KVM).
	VM bool
	// Startup hooks a switch's rendered configuration file into its node
	// the way the kind takes it (nil: the file is written, not hooked
	// in); file is the rendered file's path in the lab directory
	// (configs/<switch>/<rendered name>).
	Startup func(file string) ClabStartup
}

// ClabStartup is how a node of a containerlab kind takes a rendered
// configuration file: the path it is written at, and what the node gets.
type ClabStartup struct {
	// File is the path the file is written at ("": the path given).
	File string
	// StartupConfig is the node's startup-config ("": none).
	StartupConfig string
	// Binds and Exec are added to the node's binds and exec commands.
	Binds, Exec []string
}

// ClabFile is a file a platform adds to its switch's node: its name in
// the switch's configs directory and its text.
type ClabFile struct {
	Name, Text string
}

var clabEthNumRe = regexp.MustCompile(`^eth(\d+)`)

// ClabEthIndex is the number of a containerlab ethN interface name, the
// ClabKind.Index of kinds whose data ports are eth1, eth2, ...
func ClabEthIndex(s string) int {
	m := clabEthNumRe.FindStringSubmatch(s)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
