package lint

import "github.com/fabctl/fabctl/spec"

// nicMaxSpeed is the fastest port speed of each NIC model fabctl knows,
// from the vendors' own product documentation. Models without a vendor
// figure here (e810, bluefield-3) and the software devices (rxe, siw run
// at whatever their netdev runs) are not checked.
var nicMaxSpeed = map[string]struct {
	max    spec.BitRate
	source string
}{
	// "ConnectX-6 Virtual Protocol Interconnect adapter cards provide up to two ports of 200Gb/s."
	"connectx-6": {200e9, "NVIDIA ConnectX-6 Ethernet adapter cards user manual, Introduction (https://docs.nvidia.com/networking/display/ConnectX6EN/Introduction)"},
	// Products: ConnectX-6 Dx 25GbE, 100GbE and 200GbE adapter cards.
	"connectx-6dx": {200e9, "NVIDIA ConnectX-6 Dx Ethernet adapter cards for OCP Spec 3.0 user manual, Products Overview (25GbE, 100GbE, 200GbE cards)"},
	// "Single-port 400Gb/s or 200Gb/s ... Dual-port 100 or 200Gb/s"; "NDR 400Gb/s and 400GbE".
	"connectx-7": {400e9, "NVIDIA ConnectX-7 adapter cards user manual, Introduction (https://docs.nvidia.com/networking/display/ConnectX7VPI/Introduction)"},
	// "InfiniBand and Ethernet networking at up to 800 gigabits per second (Gb/s)".
	"connectx-8": {800e9, "NVIDIA ConnectX-8 SuperNIC user manual, Introduction (https://docs.nvidia.com/networking/display/connectx8supernic/introduction)"},
	// "Up to 200 Gigabit Ethernet"; "an RDMA intelligent network adapter supporting up to 200Gb/s".
	"bluefield-2": {200e9, "NVIDIA BlueField-2 DPU user guide, Introduction (https://docs.nvidia.com/networking/display/bluefield2dpuenug/introduction)"},
}

var ruleHOST5 = Rule{
	ID:    "HOST-5",
	Title: "A link is not faster than the NIC model at its end",
	Rationale: `A link's speed feeds the headroom (BUF), ECN threshold and bandwidth checks and the traffic
test's expected rate; a speed the NIC cannot run (4000G for 400G, a typo, or a model copied from
another rack) makes every one of them wrong and the traffic test's "percent of line rate" meaningless,
and no switch port will come up at it. The rule compares each link's speed with the fastest port
speed the vendor documents for the model of a host NIC at its end (ConnectX-6/6 Dx and BlueField-2
200 Gb/s, ConnectX-7 400 Gb/s, ConnectX-8 800 Gb/s). NICs without a model, software devices (rxe,
siw) and models without a vendor figure in fabctl's table are not checked.`,
	Reference: "NVIDIA adapter user manuals: ConnectX-6 (https://docs.nvidia.com/networking/display/ConnectX6EN/Introduction), ConnectX-6 Dx for OCP 3.0, ConnectX-7 (https://docs.nvidia.com/networking/display/ConnectX7VPI/Introduction), ConnectX-8 SuperNIC (https://docs.nvidia.com/networking/display/connectx8supernic/introduction), BlueField-2 DPU (https://docs.nvidia.com/networking/display/bluefield2dpuenug/introduction)",
	Check:     checkHOST5,
}

func checkHOST5(c *Context) {
	s := c.Spec
	for _, l := range s.Links {
		if l.Speed <= 0 {
			continue
		}
		a, b := Ends(s, l)
		for _, e := range []End{a, b} {
			if e.NIC == nil {
				continue
			}
			m, ok := nicMaxSpeed[e.NIC.Model]
			if !ok || l.Speed <= m.max {
				continue
			}
			rng := l.Src.Attr("speed")
			c.Reportf(Error, rng, l.Address(), linkScopes(s, l), "Link faster than its NIC",
				"link %s runs at %s, but host %q NIC %s is a %s, whose ports run at most %s (%s). Correct the link's speed (a typo?) or the NIC's model.",
				l.Address(), l.Speed, e.Host.Name, e.NIC.Name, e.NIC.Model, m.max, m.source)
		}
	}
}
