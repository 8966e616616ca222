package sonic

import (
	"fmt"
	"path"
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
	Limits:    limits,
	YANG:      drivers.YANGModels{Profile: yangProfile, Marker: "sonic-port.yang"},
	// Ethernet0, Ethernet4, ...: four lanes per port.
	Ports: drivers.PortNaming{Prefix: "Ethernet", First: 0, Step: 4,
		// SONiC names ports Ethernet<N> by first lane (port_config.ini's
		// name column; sonic-port.yang "e.g., Ethernet0"):
		// testdata/vendor/interface-names.txt:10-13.
		Pattern: `Ethernet(?:0|[1-9][0-9]{0,3})`, Syntax: "Ethernet<N>"},
	Emulator:      "sonic",
	EmulatorPorts: 32,
	ClabKind:      "sonic-vs",
	// SONiC virtual switch: ethK is Ethernet(4(K-1)) (four lanes per
	// port); the image's default HWSKU (Force10-S6000) has 32 ports.
	Clab: &drivers.ClabKind{Name: "sonic-vs", Image: "docker-sonic-vs:latest", IfName: clabIf, Ports: 32, Index: drivers.ClabEthIndex,
		User: "admin", PasswordEnv: "FABCTL_CLAB_SONIC_PASSWORD", Startup: clabStartup},
}

// clabStartup: fabctl's CONFIG_DB holds only what it manages; a sonic-vs
// startup config replaces config_db.json. It is bound into the container
// and merged into CONFIG_DB once the database answers.
func clabStartup(file string) drivers.ClabStartup {
	in := "/etc/fabctl/" + path.Base(file)
	return drivers.ClabStartup{Binds: []string{file + ":" + in + ":ro"},
		Exec: []string{"bash -c 'for i in $(seq 120); do sonic-db-cli PING >/dev/null 2>&1 && break; sleep 2; done; config load -y " + in + "'"}}
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
