package clab

import (
	"fmt"
	"regexp"
	"strconv"
)

// kind is what fabctl knows of one containerlab kind: the image it
// defaults to, the node type, how the kind names a spec port in the
// topology file, how many data ports its image has, and how fabctl logs
// into it.
type kind struct {
	Name  string
	Image string
	Type  string
	// ifName translates a spec port name into the kind's interface name
	// in the topology file.
	ifName func(port string) (string, error)
	// Ports is the number of data ports the default image has (0: no
	// fixed number); a spec port beyond it gets a warning.
	Ports int
	// Index is a port's number among the image's data ports (1-based)
	// for the Ports check.
	index func(clabIf string) int
	// User is the kind's default login; PasswordEnv the variable the
	// generated credentials read its password from.
	User, PasswordEnv string
	// GNMI: fabctl drives the kind over gNMI (port 57400, TLS from the
	// lab's CA) instead of SSH.
	GNMI bool
	// VM: a vrnetlab virtual machine in a container (needs KVM).
	VM bool
}

// The kinds fabctl generates, all canonical names from containerlab's
// schema enum (short aliases such as srl, ceos and cvx are not in it).
var kinds = map[string]*kind{
	// SR Linux: e1-N is ethernet-1/N, e1-C-N the breakout ethernet-1/C/N.
	// Nokia documents PFC on the 7220 IXR-H4/H5/D4/D5 and 7250 IXR only,
	// not on containerlab's default ixr-d2l: the IXR-D5 type has the
	// PFC data model (srl_nokia-qos pfc) fabctl renders.
	"nokia_srlinux": {Name: "nokia_srlinux", Image: "ghcr.io/nokia/srlinux:latest", Type: "ixr-d5",
		ifName: srlIf, User: "admin", PasswordEnv: "FABCTL_CLAB_SRLINUX_PASSWORD", GNMI: true},
	// cEOS: ethN is EthernetN, ethC_L the port-split EthernetC/L.
	"arista_ceos": {Name: "arista_ceos", Image: "ceos:4.32.2F", ifName: ceosIf,
		User: "admin", PasswordEnv: "FABCTL_CLAB_CEOS_PASSWORD"},
	// SONiC virtual switch: ethK is Ethernet(4(K-1)) (four lanes per
	// port); the image's default HWSKU (Force10-S6000) has 32 ports.
	"sonic-vs": {Name: "sonic-vs", Image: "docker-sonic-vs:latest", ifName: sonicIf, Ports: 32, index: ethIndex,
		User: "admin", PasswordEnv: "FABCTL_CLAB_SONIC_PASSWORD"},
	// Nexus 9000v (vrnetlab): ethN is Ethernet1/N, 64 ports; breakout
	// ports (Ethernet1/C/N) do not exist on it.
	"cisco_n9kv": {Name: "cisco_n9kv", Image: "vrnetlab/cisco_n9kv:10.4.3", ifName: n9kvIf, Ports: 64, index: ethIndex,
		User: "admin", PasswordEnv: "FABCTL_CLAB_N9KV_PASSWORD", VM: true},
	// Cumulus VX (vrnetlab): swpN; breakout lanes swpNsM need the kind's
	// port-count/breakouts settings, which the schema fabctl validates
	// against does not have.
	"nvidia_cumulusvx": {Name: "nvidia_cumulusvx", Image: "vrnetlab/nvidia_cumulusvx:5.11.0", ifName: cumulusIf,
		User: "cumulus", PasswordEnv: "FABCTL_CLAB_CUMULUSVX_PASSWORD", VM: true},
	// Hosts: the spec's NIC names are the container's interface names.
	"linux": {Name: "linux", Image: "ghcr.io/hellt/network-multitool:latest", ifName: linuxIf, User: "root"},
}

// platformKinds maps fabctl's switch platforms to kinds. OpenConfig is
// not a NOS: an openconfig switch is played by SR Linux, whose
// OpenConfig mapping covers part of openconfig-qos (classifiers,
// forwarding groups, queue management, interfaces).
var platformKinds = map[string]string{
	"sonic":      "sonic-vs",
	"eos":        "arista_ceos",
	"nxos":       "cisco_n9kv",
	"cumulus":    "nvidia_cumulusvx",
	"srlinux":    "nokia_srlinux",
	"openconfig": "nokia_srlinux",
}

var (
	srlRe     = regexp.MustCompile(`^ethernet-(\d+)/(\d+)(?:/(\d+))?$`)
	ceosRe    = regexp.MustCompile(`^Ethernet([1-9]\d*)(?:/([1-9]\d*))?$`)
	sonicRe   = regexp.MustCompile(`^Ethernet(\d+)$`)
	n9kvRe    = regexp.MustCompile(`^Ethernet1/([1-9]\d*)$`)
	n9kvBrkRe = regexp.MustCompile(`^Ethernet1/\d+/\d+$`)
	swpRe     = regexp.MustCompile(`^swp([1-9]\d*)$`)
	swpBrkRe  = regexp.MustCompile(`^swp[1-9]\d*s\d+$`)
	linuxRe   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
	ethNumRe  = regexp.MustCompile(`^eth(\d+)`)
)

func srlIf(p string) (string, error) {
	m := srlRe.FindStringSubmatch(p)
	if m == nil {
		return "", fmt.Errorf("SR Linux ports are ethernet-<slot>/<port>[/<breakout>]")
	}
	if m[3] != "" {
		return "e" + m[1] + "-" + m[2] + "-" + m[3], nil
	}
	return "e" + m[1] + "-" + m[2], nil
}

func ceosIf(p string) (string, error) {
	m := ceosRe.FindStringSubmatch(p)
	if m == nil {
		return "", fmt.Errorf("cEOS ports are Ethernet<N> or Ethernet<N>/<lane>, N from 1")
	}
	if m[2] != "" {
		return "eth" + m[1] + "_" + m[2], nil
	}
	return "eth" + m[1], nil
}

func sonicIf(p string) (string, error) {
	m := sonicRe.FindStringSubmatch(p)
	if m == nil {
		return "", fmt.Errorf("SONiC ports are Ethernet<N>")
	}
	n, _ := strconv.Atoi(m[1])
	if n%4 != 0 {
		return "", fmt.Errorf("sonic-vs has four lanes per port (Ethernet0, Ethernet4, ...)")
	}
	return "eth" + strconv.Itoa(n/4+1), nil
}

func n9kvIf(p string) (string, error) {
	if m := n9kvRe.FindStringSubmatch(p); m != nil {
		return "eth" + m[1], nil
	}
	if n9kvBrkRe.MatchString(p) {
		return "", fmt.Errorf("the Nexus 9000v has no breakout ports (Ethernet1/<cage>/<n>), only Ethernet1/1-64")
	}
	return "", fmt.Errorf("Nexus 9000v ports are Ethernet1/<N>")
}

func cumulusIf(p string) (string, error) {
	if m := swpRe.FindStringSubmatch(p); m != nil {
		return "swp" + m[1], nil
	}
	if swpBrkRe.MatchString(p) {
		return "", fmt.Errorf("breakout lanes (swp<N>s<M>) need the nvidia_cumulusvx port-count/breakouts settings, which containerlab's schema does not list")
	}
	return "", fmt.Errorf("Cumulus VX ports are swp<N>")
}

func linuxIf(p string) (string, error) {
	switch {
	case p == "eth0":
		return "", fmt.Errorf("eth0 is the container's management interface")
	case p == "lo" || !linuxRe.MatchString(p):
		return "", fmt.Errorf("not a Linux interface name")
	}
	return p, nil
}

func ethIndex(s string) int {
	m := ethNumRe.FindStringSubmatch(s)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
