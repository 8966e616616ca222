package sonic

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/fabctl/fabctl/drivers"
)

// Descriptor is the SONiC platform as the spec loader, the testbeds and
// YANG validation see it.
var Descriptor = drivers.Platform{
	Name:      Name,
	Title:     "SONiC",
	New:       New,
	Transport: drivers.TransportSSH,
	YANG:      drivers.YANGModels{Profile: yangProfile, Marker: "sonic-port.yang"},
	// Ethernet0, Ethernet4, ...: four lanes per port.
	Ports:         drivers.PortNaming{Prefix: "Ethernet", First: 0, Step: 4},
	Emulator:      "sonic",
	EmulatorPorts: 32,
	ClabKind:      "sonic-vs",
	// SONiC virtual switch: ethK is Ethernet(4(K-1)) (four lanes per
	// port); the image's default HWSKU (Force10-S6000) has 32 ports.
	Clab: &drivers.ClabKind{Name: "sonic-vs", Image: "docker-sonic-vs:latest", IfName: clabIf, Ports: 32, Index: drivers.ClabEthIndex,
		User: "admin", PasswordEnv: "FABCTL_CLAB_SONIC_PASSWORD"},
}

var clabPortRe = regexp.MustCompile(`^Ethernet(\d+)$`)

func clabIf(p string) (string, error) {
	m := clabPortRe.FindStringSubmatch(p)
	if m == nil {
		return "", fmt.Errorf("SONiC ports are Ethernet<N>")
	}
	n, _ := strconv.Atoi(m[1])
	if n%4 != 0 {
		return "", fmt.Errorf("sonic-vs has four lanes per port (Ethernet0, Ethernet4, ...)")
	}
	return "eth" + strconv.Itoa(n/4+1), nil
}
