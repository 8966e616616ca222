package difftest

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// The generator of the differential property test: a random fabric with
// one leaf of every switch platform (each cabled to two hosts and to a
// SONiC spine), its classes, watchdog, MTUs, overrides and link
// attributes drawn from values around the edges the platforms' models
// and renderers draw (MTU maxima, whole and fractional percentages, the
// watchdog ranges, thresholds of kilobytes to gigabytes). Most draws are
// refused by lint; the property is about the ones it accepts.

// fabricGen is one generated fabric, as fields the shrinker can simplify
// one at a time (a zero field is the simplest choice: the spec leaves the
// attribute out).
type fabricGen struct {
	Transport string // rocev2 | rocev1 | iwarp
	MTU       int    // fabric mtu (0: default)
	RDMAMTU   int    // fabric rdma_mtu (0: default)
	CC        string // congestion_control ("": default)
	Classes   []classGen
	Watchdog  *watchdogGen
	Leaves    []leafGen
	SpineMTU  int // spine switch mtu (0: none)
	CableLen  string
	Speed     string
	VLANTags  int // on the host links
}

type classGen struct {
	Name      string
	Role      string
	Priority  int
	DSCP      []int
	Default   bool
	Lossless  bool
	Strict    bool
	Bandwidth int
	ECN       *ecnGen
}

type ecnGen struct {
	Min, Max    string // sizes with units
	Probability string // "" default, else a number
}

type watchdogGen struct {
	Detect, Restore, Poll string // durations ("" default)
	Action                string
}

type leafGen struct {
	Platform string
	MTU      int    // switch mtu (0: none)
	PortMTU  int    // first host port's mtu (0: none)
	Trust    string // switch trust ("": default)
	Headroom string // buffer headroom ("": none)
	NoPFC    bool   // second host port pfc = []
	NoWD     bool   // uplink pfc_watchdog = false
}

// platforms are the switch platforms a generated fabric has a leaf of,
// with how each names its ports (host ports 1 and 2, the uplink).
var platforms = []struct {
	name  string
	ports [3]string
}{
	{"sonic", [3]string{"Ethernet0", "Ethernet4", "Ethernet8"}},
	{"eos", [3]string{"Ethernet1", "Ethernet2", "Ethernet3"}},
	{"nxos", [3]string{"Ethernet1/1", "Ethernet1/2", "Ethernet1/3"}},
	{"cumulus", [3]string{"swp1", "swp2", "swp3"}},
	{"srlinux", [3]string{"ethernet-1/1", "ethernet-1/2", "ethernet-1/3"}},
	{"openconfig", [3]string{"Ethernet0", "Ethernet1", "Ethernet2"}},
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

// generate draws a fabric.
func generate(r *rand.Rand) fabricGen {
	g := fabricGen{
		Transport: pick(r, "rocev2", "rocev2", "rocev2", "rocev1", "iwarp"),
		MTU:       pick(r, 0, 0, 0, 0, 0, 0, 9000, 9000, 9000, 9000, 1500, 4200, 9100, 9194, 9214, 9216, 9232, 9400),
		RDMAMTU:   pick(r, 0, 0, 1024, 2048, 4096),
		CC:        pick(r, "", "", "dcqcn", "pfc-only", "ecn-only", "none"),
		CableLen:  pick(r, "", "1m", "3m", "30m", "150m"),
		Speed:     pick(r, "100G", "400G", "25G"),
		VLANTags:  pick(r, 0, 0, 0, 1),
		SpineMTU:  pick(r, 0, 0, 0, 9000, 9216),
	}
	if g.Transport == "rocev1" {
		// RoCEv1 is one L2 domain of tagged hosts (TR-1, HOST-7).
		g.CC = pick(r, "", "pfc-only")
		g.VLANTags = 1
	}
	if r.IntN(3) > 0 {
		g.Classes = genClasses(r, g.Transport)
	}
	if r.IntN(3) == 0 {
		w := &watchdogGen{
			Detect:  pick(r, "", "10ms", "50ms", "100ms", "200ms", "400ms", "1s", "1500ms", "2s"),
			Restore: pick(r, "", "50ms", "100ms", "400ms", "1s", "1500ms", "2s", "10s"),
			Poll:    pick(r, "", "", "", "10ms", "50ms", "100ms", "200ms", "500ms", "1s", "2s"),
			Action:  pick(r, "", "", "drop", "forward", "alert"),
		}
		g.Watchdog = w
	}
	// A random subset of the platforms (at least one): a fabric with
	// every platform is lint-clean only when no draw hits any platform
	// edge; subsets let each platform meet more of its edges.
	first := r.IntN(len(platforms))
	for pi, p := range platforms {
		if pi != first && r.IntN(2) == 0 {
			continue
		}
		l := leafGen{Platform: p.name}
		// A switch port at least the hosts' MTU mostly (MTU-1 refuses
		// one below them), now and then one below.
		hostMTU := g.MTU
		if hostMTU == 0 {
			hostMTU = 9000
		}
		if r.IntN(5) == 0 {
			l.MTU = pick(r, 1500, 9000, 9100, 9214, 9216, 9300, 9398, 9400, 9500)
			if l.MTU < hostMTU && r.IntN(4) > 0 {
				l.MTU = 0
			}
		}
		if r.IntN(5) == 0 {
			l.PortMTU = pick(r, 1436, 9000, 9100, 9214, 9216, 9232, 9398, 9400, 9486, 9500)
			if l.PortMTU < hostMTU && r.IntN(4) > 0 {
				l.PortMTU = 0
			}
		}
		if r.IntN(8) == 0 {
			l.Trust = pick(r, "dscp", "pcp")
		}
		if r.IntN(5) == 0 {
			l.Headroom = pick(r, "300KB", "1MB", "4MB", "100MB")
		}
		l.NoPFC = r.IntN(4) == 0
		l.NoWD = r.IntN(4) == 0
		g.Leaves = append(g.Leaves, l)
	}
	return g
}

func genClasses(r *rand.Rand, transport string) []classGen {
	rdmaPrio := pick(r, 3, 3, 4, 5, 0)
	cnpPrio := pick(r, 6, 6, 7, 3)
	bw := pick(r, 50, 60, 70, 40, 99)
	rdma := classGen{Name: "roce", Role: "rdma", Priority: rdmaPrio, DSCP: pick(r, []int{26}, []int{24, 26}, []int{26, 27}),
		Lossless: transport != "iwarp" && r.IntN(4) > 0, Bandwidth: bw}
	if r.IntN(3) > 0 {
		rdma.ECN = &ecnGen{
			Min:         pick(r, "1KB", "150KB", "500KB", "1MB", "100MB"),
			Max:         pick(r, "1500KB", "1500KB", "3MB", "1GB", "5GB"),
			Probability: pick(r, "", "", "1", "5", "10", "50", "100", "0.4", "12.5", "7.5"),
		}
	}
	cnp := classGen{Name: "cnp", Role: "cnp", Priority: cnpPrio, DSCP: []int{48}, Strict: true}
	def := classGen{Name: "default", Role: "other", Priority: 0, Default: true, Bandwidth: 100 - bw}
	if r.IntN(5) == 0 {
		def.Bandwidth = pick(r, 0, 10, 100)
	}
	return []classGen{rdma, cnp, def}
}

// hcl writes the fabric as a spec.
func (g fabricGen) hcl() string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("fabric \"diff\" {\n  transport = %q\n", g.Transport)
	if g.MTU != 0 {
		w("  mtu = %d\n", g.MTU)
	}
	if g.RDMAMTU != 0 {
		w("  rdma_mtu = %d\n", g.RDMAMTU)
	}
	if g.CC != "" {
		w("  congestion_control = %q\n", g.CC)
	}
	if wd := g.Watchdog; wd != nil {
		w("  pfc_watchdog {\n")
		for _, a := range [][2]string{{"detect", wd.Detect}, {"restore", wd.Restore}, {"poll", wd.Poll}, {"action", wd.Action}} {
			if a[1] != "" {
				w("    %s = %q\n", a[0], a[1])
			}
		}
		w("  }\n")
	}
	w("}\n\n")
	for _, c := range g.Classes {
		w("class %q {\n  role = %q\n  priority = %d\n", c.Name, c.Role, c.Priority)
		if len(c.DSCP) > 0 {
			w("  dscp = %s\n", intList(c.DSCP))
		}
		if c.Default {
			w("  default = true\n")
		}
		if c.Lossless {
			w("  lossless = true\n")
		}
		if c.Strict {
			w("  strict = true\n")
		} else {
			w("  bandwidth = %d\n", c.Bandwidth)
		}
		if e := c.ECN; e != nil {
			w("  ecn {\n    min = %q\n    max = %q\n", e.Min, e.Max)
			if e.Probability != "" {
				w("    probability = %s\n", e.Probability)
			}
			w("  }\n")
		}
		w("}\n\n")
	}
	w("credentials \"c\" {\n  username = \"admin\"\n  password = env(\"DIFF_PW\")\n}\n\n")
	w("switch \"spine\" {\n  platform = \"sonic\"\n  address = \"192.0.2.250\"\n  credentials = \"c\"\n  role = \"spine\"\n")
	if g.SpineMTU != 0 {
		w("  mtu = %d\n", g.SpineMTU)
	}
	w("}\n\n")
	for i, l := range g.Leaves {
		p := platformPorts(l.Platform)
		w("switch %q {\n  platform = %q\n  address = \"192.0.2.%d\"\n  credentials = \"c\"\n  role = \"leaf\"\n", "leaf-"+l.Platform, l.Platform, i+1)
		if l.MTU != 0 {
			w("  mtu = %d\n", l.MTU)
		}
		if l.Trust != "" {
			w("  trust = %q\n", l.Trust)
		}
		if l.Headroom != "" {
			w("  buffer {\n    headroom = %q\n  }\n", l.Headroom)
		}
		w("  port %q {\n", p[0])
		if l.PortMTU != 0 {
			w("    mtu = %d\n", l.PortMTU)
		}
		w("  }\n  port %q {\n", p[1])
		if l.NoPFC {
			w("    pfc = []\n    lint_ignore = { \"QOS-1\" = \"lossy port\", \"HOST-6\" = \"lossy port\" }\n")
		}
		w("  }\n  port %q {\n", p[2])
		if l.NoWD {
			w("    pfc_watchdog = false\n    lint_ignore = { \"SAFE-1\" = \"fabric-facing\" }\n")
		}
		w("  }\n}\n\n")
		for h := 0; h < 2; h++ {
			name := fmt.Sprintf("h-%s-%d", l.Platform, h)
			net := i*2 + h
			w("host %q {\n  address = \"198.51.100.%d\"\n  credentials = \"c\"\n  nic \"eth1\" {\n    device = \"mlx5_0\"\n    model = \"connectx-7\"\n", name, net+10)
			if g.Transport == "rocev1" {
				w("    addresses = [\"10.0.0.%d/24\"]\n", net+1)
			} else {
				w("    addresses = [\"10.%d.%d.1/31\"]\n", net/250, net%250)
			}
			if l.NoPFC && h == 1 {
				w("    pfc = []\n    lint_ignore = { \"HOST-3\" = \"lossy port\", \"HOST-6\" = \"lossy port\", \"QOS-1\" = \"lossy port\" }\n")
			}
			if g.VLANTags > 0 {
				w("    vlan = 100\n")
			}
			w("  }\n}\n\n")
			w("link {\n  endpoints = [%q, %q]\n  speed = %q\n", "leaf-"+l.Platform+":"+p[h], name+":eth1", g.Speed)
			if g.CableLen != "" {
				w("  cable_length = %q\n", g.CableLen)
			}
			if g.VLANTags > 0 {
				w("  vlan_tags = %d\n", g.VLANTags)
			}
			w("}\n\n")
		}
		w("link {\n  endpoints = [%q, %q]\n  speed = \"400G\"\n", "leaf-"+l.Platform+":"+p[2], fmt.Sprintf("spine:Ethernet%d", 4*i))
		if g.CableLen != "" {
			w("  cable_length = %q\n", g.CableLen)
		}
		w("}\n\n")
	}
	return b.String()
}

func platformPorts(name string) [3]string {
	for _, p := range platforms {
		if p.name == name {
			return p.ports
		}
	}
	panic("no platform " + name)
}

func intList(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// simpler are the fabrics one simplification away from g, simplest
// first: a field back to its default, one leaf, class or watchdog
// attribute dropped. The shrinker keeps the first that still fails.
func (g fabricGen) simpler() []fabricGen {
	var out []fabricGen
	add := func(f func(*fabricGen)) {
		c := g.clone()
		f(&c)
		out = append(out, c)
	}
	if len(g.Leaves) > 1 {
		for i := range g.Leaves {
			add(func(c *fabricGen) { c.Leaves = append(c.Leaves[:i:i], c.Leaves[i+1:]...) })
		}
	}
	if g.Watchdog != nil {
		add(func(c *fabricGen) { c.Watchdog = nil })
		for _, f := range []func(*watchdogGen){
			func(w *watchdogGen) { w.Detect = "" }, func(w *watchdogGen) { w.Restore = "" },
			func(w *watchdogGen) { w.Poll = "" }, func(w *watchdogGen) { w.Action = "" },
		} {
			add(func(c *fabricGen) { wd := *c.Watchdog; f(&wd); c.Watchdog = &wd })
		}
	}
	if g.Classes != nil {
		add(func(c *fabricGen) { c.Classes = nil })
		for i := range g.Classes {
			if g.Classes[i].ECN != nil {
				add(func(c *fabricGen) { c.Classes[i].ECN = nil })
				add(func(c *fabricGen) { e := *c.Classes[i].ECN; e.Probability = ""; c.Classes[i].ECN = &e })
			}
		}
	}
	for _, f := range []func(*fabricGen){
		func(c *fabricGen) { c.MTU = 0 }, func(c *fabricGen) { c.RDMAMTU = 0 }, func(c *fabricGen) { c.CC = "" },
		func(c *fabricGen) { c.SpineMTU = 0 }, func(c *fabricGen) { c.CableLen = "" }, func(c *fabricGen) { c.VLANTags = 0 },
		func(c *fabricGen) { c.Transport = "rocev2" },
	} {
		add(f)
	}
	for i := range g.Leaves {
		for _, f := range []func(*leafGen){
			func(l *leafGen) { l.MTU = 0 }, func(l *leafGen) { l.PortMTU = 0 }, func(l *leafGen) { l.Trust = "" },
			func(l *leafGen) { l.Headroom = "" }, func(l *leafGen) { l.NoPFC = false }, func(l *leafGen) { l.NoWD = false },
		} {
			add(func(c *fabricGen) { f(&c.Leaves[i]) })
		}
	}
	// Drop the ones that did not change anything.
	h := g.hcl()
	var kept []fabricGen
	for _, c := range out {
		if c.hcl() != h {
			kept = append(kept, c)
		}
	}
	return kept
}

func (g fabricGen) clone() fabricGen {
	c := g
	c.Classes = append([]classGen(nil), g.Classes...)
	for i := range c.Classes {
		c.Classes[i].DSCP = append([]int(nil), g.Classes[i].DSCP...)
	}
	c.Leaves = append([]leafGen(nil), g.Leaves...)
	if g.Watchdog != nil {
		wd := *g.Watchdog
		c.Watchdog = &wd
	}
	return c
}
