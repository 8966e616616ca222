package drivers

import (
	"slices"
	"strings"

	"github.com/fabctl/fabctl/intent"
)

// FactPorts is the device fact (PathFacts) naming the ports the device
// has, one per line, sorted: Read returns it when what it reads anyway
// lists the device's interfaces (a SONiC CONFIG_DB PORT table, an EOS or
// NX-OS running-config's interface sections). The planner then refuses a
// spec port the device lacks before anything is applied, naming the
// nearest existing ports. A driver whose read does not list them (a
// configuration tree that holds only the configured interfaces) leaves
// it out, and the plan does not guess.
const FactPorts = PathFacts + "ports"

// PutPorts records the device's port names in a live state (FactPorts).
func PutPorts(st intent.State, names []string) {
	s := slices.Clone(names)
	slices.Sort(s)
	st[FactPorts] = strings.Join(slices.Compact(s), "\n")
}

// Ports returns the port names a live state records (FactPorts), and
// whether it records them.
func Ports(live intent.State) ([]string, bool) {
	v, ok := live[FactPorts]
	if !ok {
		return nil, false
	}
	if v == "" {
		return []string{}, true
	}
	return strings.Split(v, "\n"), true
}
