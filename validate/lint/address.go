package lint

// Model addresses of the objects findings are about, and their lint_ignore
// scopes.

import "github.com/fabctl/fabctl/spec"

// hostNICAddress is the model address of a host NIC.
func hostNICAddress(h *spec.Host, n *spec.NIC) string { return "host." + h.Name + ".nic." + n.Name }

// hostNICScopes are the lint_ignore maps of a NIC, innermost first.
func hostNICScopes(h *spec.Host, n *spec.NIC) []spec.LintIgnores {
	return []spec.LintIgnores{n.Ignore, h.Ignore}
}

// switchPortAddress is the model address of a switch port.
func switchPortAddress(sw *spec.Switch, p *spec.Port) string {
	return "switch." + sw.Name + ".port." + p.Name
}

// trafficClassAddress is the model address of a traffic class.
func trafficClassAddress(c *spec.Class) string { return "class." + c.Name }

// fabricAddress is the fabric block's address ("fabric", as the MTU/QOS
// rules use it).
const fabricAddress = "fabric"

// switchAddress is a switch's address, e.g. switch.leaf1.
func switchAddress(sw *spec.Switch) string { return "switch." + sw.Name }
