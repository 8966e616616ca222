package cumulus

import (
	"fmt"
	"regexp"

	"github.com/fabctl/fabctl/drivers"
)

// Descriptor is the Cumulus Linux platform as the spec loader and the
// testbeds see it.
var Descriptor = drivers.Platform{
	Name:      Name,
	Title:     "Cumulus Linux",
	New:       New,
	Transport: drivers.TransportSSH,
	Limits:    limits,
	// swp1, swp2, ...; breakout lanes swpNsM live on swpN.
	Ports: drivers.PortNaming{Prefix: "swp", Lane: "s", First: 1, Step: 1,
		// swp<N>, a breakout lane swp<N>s<M> (NVUE reference: "swp1s0
		// through swp32s3"): testdata/vendor/interface-names.txt:30.
		Pattern: `swp[1-9][0-9]{0,2}(?:s[0-9])?`, Syntax: "swp<N> or swp<N>s<lane>"},
	Emulator:      "cumulus",
	EmulatorPorts: 32,
	ClabKind:      "nvidia_cumulusvx",
	// Cumulus VX (vrnetlab): swpN; breakout lanes swpNsM need the kind's
	// port-count/breakouts settings, which the schema fabctl validates
	// against does not have.
	Clab: &drivers.ClabKind{Name: "nvidia_cumulusvx", Image: "vrnetlab/nvidia_cumulusvx:5.11.0", IfName: clabIf,
		User: "cumulus", PasswordEnv: "FABCTL_CLAB_CUMULUSVX_PASSWORD", VM: true},
}

var (
	clabPortRe     = regexp.MustCompile(`^swp([1-9]\d*)$`)
	clabBreakoutRe = regexp.MustCompile(`^swp[1-9]\d*s\d+$`)
)

func clabIf(p string) (string, error) {
	if m := clabPortRe.FindStringSubmatch(p); m != nil {
		return "swp" + m[1], nil
	}
	if clabBreakoutRe.MatchString(p) {
		return "", fmt.Errorf("breakout lanes (swp<N>s<M>) need the nvidia_cumulusvx port-count/breakouts settings, which containerlab's schema does not list")
	}
	return "", fmt.Errorf("Cumulus VX ports are swp<N>")
}
