package spec

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

func attrs(names ...string) []hcl.AttributeSchema {
	out := make([]hcl.AttributeSchema, len(names))
	for i, n := range names {
		out[i] = hcl.AttributeSchema{Name: n}
	}
	return out
}

var fabricSchema = &hcl.BodySchema{
	Attributes: attrs("transport", "mtu", "rdma_mtu", "trust", "congestion_control", "max_lossless_priorities", "rdma_tos", "link_errors_max", "lint_ignore"),
	Blocks:     []hcl.BlockHeaderSchema{{Type: "pfc_watchdog"}},
}

var watchdogSchema = &hcl.BodySchema{Attributes: attrs("enabled", "detect", "restore", "poll", "action")}

func (l *loader) fabric(b *hcl.Block) *Fabric {
	in := l.single(b, b.Labels[0])
	d, name := l.content(in, fabricSchema)
	if d == nil {
		return nil
	}
	l.checkName("fabric", name, b.LabelRanges[0])
	f := &Fabric{Name: name}
	f.Transport = Transport(d.enum("transport", string(RoCEv2), string(RoCEv2), string(RoCEv1), string(IWARP), string(InfiniBand)))
	defMTU := 9000
	if f.Transport == InfiniBand {
		defMTU = 2044 // IPoIB datagram mode
	}
	f.MTU = d.integer("mtu", defMTU, 576, 65520)
	f.RDMAMTU = d.integer("rdma_mtu", 4096, 256, 4096)
	defTrust := TrustDSCP
	if f.Transport == RoCEv1 {
		defTrust = TrustPCP
	}
	f.Trust = d.enum("trust", defTrust, TrustDSCP, TrustPCP)
	defCC := CCDCQCN
	switch f.Transport {
	case RoCEv1:
		// RoCEv1 frames have no IP header, so no ECN bits: DCQCN cannot run.
		defCC = CCPFCOnly
	case IWARP:
		defCC = CCECNOnly
	case InfiniBand:
		defCC = CCNone
	}
	f.CongestionControl = d.enum("congestion_control", defCC, CCDCQCN, CCPFCOnly, CCECNOnly, CCNone)
	f.MaxLosslessPriorities = d.integer("max_lossless_priorities", 2, 1, 8)
	// ANTA's VerifyInterfaceErrors passes only at zero errors; a fabric
	// that tolerates a few raises it.
	f.LinkErrorsMax = int64(d.integer("link_errors_max", 0, 0, 1<<31-1))
	if v, ok := d.optInt("rdma_tos", 0, 255); ok {
		f.RDMATos = &v
	}
	f.Ignore = d.ignores()
	f.PFCWatchdog = Watchdog{Enabled: f.Transport != InfiniBand, Detect: 200 * time.Millisecond, Restore: 400 * time.Millisecond, Poll: 100 * time.Millisecond, Action: "drop", Src: Source{Block: b.DefRange}}
	for i, wb := range d.blocks {
		if i > 0 {
			l.errf(wb.DefRange.Ptr(), "Duplicate pfc_watchdog block", "The fabric has one pfc_watchdog block.")
			continue
		}
		wd, _ := l.bodyDec(wb.Body, watchdogSchema, l.base, wb.DefRange, whatOf("pfc_watchdog"))
		if wd == nil {
			continue
		}
		w := &f.PFCWatchdog
		w.Enabled = wd.boolean("enabled", true)
		w.Detect = wd.duration("detect", w.Detect)
		w.Restore = wd.duration("restore", w.Restore)
		w.Poll = wd.duration("poll", w.Poll)
		w.Action = wd.enum("action", w.Action, "drop", "forward", "alert")
		w.Src = wd.src
	}
	f.Src = d.src
	return f
}

var classSchema = &hcl.BodySchema{
	Attributes: attrs("role", "priority", "dscp", "default", "lossless", "strict", "bandwidth", "max_rate", "sl", "lint_ignore"),
	Blocks:     []hcl.BlockHeaderSchema{{Type: "ecn"}},
}

var ecnSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "min", Required: true}, {Name: "max", Required: true}, {Name: "probability"},
}}

func (l *loader) class(in instance) *Class {
	d, name := l.content(in, classSchema)
	if d == nil || !l.checkName("class", name, in.block.LabelRanges[0]) {
		return nil
	}
	c := &Class{Name: name}
	c.Role = d.enum("role", RoleOther, RoleRDMA, RoleCNP, RoleOther)
	if p, ok := d.optInt("priority", 0, 7); ok {
		c.Priority = p
	} else if !d.src.Has("priority") && l.spec.Fabric.Transport != InfiniBand && !d.schemaErrs {
		l.errf(in.block.DefRange.Ptr(), "Missing priority", "class %q needs a priority (0..7), e.g. priority = 3.", name)
	}
	if v, ok := d.intSet("dscp", 0, 63); ok {
		c.DSCP = v
	}
	c.Default = d.boolean("default", false)
	c.Lossless = d.boolean("lossless", false)
	c.Strict = d.boolean("strict", false)
	c.Bandwidth = d.integer("bandwidth", 0, 0, 100)
	c.MaxRate, _ = d.rate("max_rate")
	if c.Strict && d.src.Has("bandwidth") && c.Bandwidth > 0 {
		rng := d.src.Attr("bandwidth")
		l.errf(&rng, "Conflicting scheduling", "class %q is strict priority; a strict class has no ETS bandwidth share. Remove bandwidth or strict.", name)
	}
	if v, ok := d.optInt("sl", 0, 15); ok {
		c.SL = &v
	}
	c.Ignore = d.ignores()
	for i, eb := range d.blocks {
		if i > 0 {
			l.errf(eb.DefRange.Ptr(), "Duplicate ecn block", "class %q has one ecn block.", name)
			continue
		}
		ed, _ := l.bodyDec(eb.Body, ecnSchema, d.ctx, eb.DefRange, whatf("class %q ecn", name))
		if ed == nil {
			continue
		}
		e := &ECNProfile{Probability: 100}
		e.Min, _ = ed.bytes("min")
		e.Max, _ = ed.bytes("max")
		if s, rng, ok := ed.unitString("probability", true); ok {
			p, err := ParsePercent(s)
			if err != nil {
				l.errf(&rng, "Invalid probability", "class %q ecn: %s.", name, err)
			} else {
				e.Probability = p
			}
		}
		e.Src = ed.src
		c.ECN = e
	}
	c.Src = d.src
	return c
}

var credentialsSchema = &hcl.BodySchema{Attributes: attrs("username", "password", "private_key", "passphrase", "ssh_agent", "enable_password", "token", "known_hosts", "ca_file", "cert_file", "key_file", "connect_timeout")}

func (l *loader) credentials(in instance) *Credentials {
	d, name := l.content(in, credentialsSchema)
	if d == nil || !l.checkName("credentials", name, in.block.LabelRanges[0]) {
		return nil
	}
	c := &Credentials{Name: name}
	c.Username = d.str("username", "")
	c.Password = d.secret("password")
	c.PrivateKey = d.secret("private_key")
	c.Passphrase = d.secret("passphrase")
	c.SSHAgent = d.boolean("ssh_agent", false)
	c.EnablePassword = d.secret("enable_password")
	c.Token = d.secret("token")
	c.KnownHosts = d.str("known_hosts", "")
	c.CAFile = d.str("ca_file", "")
	c.CertFile = d.str("cert_file", "")
	c.KeyFile = d.str("key_file", "")
	c.ConnectTimeout = d.duration("connect_timeout", 0)
	if c.ConnectTimeout < 0 || (d.src.Has("connect_timeout") && c.ConnectTimeout == 0) {
		rng := d.src.Attr("connect_timeout")
		d.errf(rng, "Invalid connect timeout", "credentials %q: connect_timeout must be above zero (for example \"30s\").", name)
		c.ConnectTimeout = 0
	}
	c.Src = d.src
	l.ids().credentials(c)
	return c
}

var switchSchema = &hcl.BodySchema{
	Attributes: attrs("platform", "model", "address", "driver", "credentials", "role", "tier", "forwarding", "unknown_unicast",
		"mtu", "trust", "pfc", "dscp_map", "remark_dscp", "lldp_name", "lint_ignore", "accept_not_in_effect", "unmanaged", "ports", "vls"),
	Blocks: []hcl.BlockHeaderSchema{{Type: "buffer"}, {Type: "port", LabelNames: []string{"name"}}, {Type: "acl", LabelNames: []string{"name"}}},
}

var bufferSchema = &hcl.BodySchema{Attributes: attrs("total", "reserved", "headroom", "xoff", "queue_limit", "cell_size")}
var portSchema = &hcl.BodySchema{Attributes: attrs("speed", "mtu", "pfc", "pause", "pfc_watchdog", "trust", "description", "lint_ignore")}
var aclSchema = &hcl.BodySchema{Attributes: attrs("action", "protocol", "dst_ports")}

// validModel: a switch model is a name the device prints (shown in
// plans and sent nowhere), letters, digits, '-' and '+'.
func validModel(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r == '-' || r == '+' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// roleTiers maps well-known switch roles to their Clos level.
var roleTiers = map[string]int{"leaf": 1, "tor": 1, "spine": 2, "superspine": 3, "core": 3}

func (l *loader) switchBlock(in instance) *Switch {
	d, name := l.content(in, switchSchema)
	if d == nil || !l.checkName("switch", name, in.block.LabelRanges[0]) {
		return nil
	}
	sw := &Switch{Name: name, ports: map[string]*Port{}}
	platforms := l.opts.Platforms
	if len(platforms) == 0 {
		l.errf(in.block.DefRange.Ptr(), "No switch platforms", "switch %q: the spec was loaded without a list of switch platforms (LoadOptions.Platforms); fabctl passes the drivers in its build.", name)
		return nil
	}
	names := platformNames(platforms)
	sw.Platform = d.enum("platform", "", names...)
	if !d.src.Has("platform") && !d.schemaErrs {
		l.errf(in.block.DefRange.Ptr(), "Missing platform", "switch %q needs platform = one of %s.", name, strings.Join(quoteAll(names), ", "))
	}
	sw.InfiniBand = platformIB(platforms, sw.Platform)
	if sw.Model = d.str("model", ""); d.src.Has("model") && !validModel(sw.Model) {
		rng := d.src.Attr("model")
		l.errf(&rng, "Invalid model", "switch %q: model %q: a model name is 1-64 letters, digits, '-' and '+', as the switch's show version prints it (\"DCS-7060X6-64PE-F\").", name, sw.Model)
	}
	sw.Address = d.str("address", "")
	sw.Driver = platformTransport(platforms, sw.Platform)
	if d.str("driver", ""); d.src.Has("driver") {
		rng := d.src.Attr("driver")
		l.errf(&rng, "Unsupported argument", "switch %q: %s", name, driverRemoved(platforms))
	}
	sw.PortCount = d.integer("ports", 0, 1, 254)
	sw.VLs = d.integer("vls", 0, 1, 15)
	if sw.InfiniBand {
		if !d.src.Has("ports") && !d.schemaErrs {
			l.errf(in.block.DefRange.Ptr(), "Missing ports", "switch %q is an InfiniBand switch: set ports = N, its port count (a Quantum QM8700 has 40, a QM9700 64).", name)
		}
		if sw.VLs == 0 {
			sw.VLs = 8 // IBA switches: VL0-7 data VLs (VLCap 4), Quantum and ibsim alike
		}
	} else {
		for _, a := range []string{"ports", "vls"} {
			if d.src.Has(a) {
				rng := d.src.Attr(a)
				l.errf(&rng, "InfiniBand-only attribute", "switch %q: %s is for InfiniBand switches (platform %q); an Ethernet switch's ports come from its port blocks and links.", name, a, PlatformInfiniBand)
			}
		}
	}
	sw.Credentials = d.str("credentials", "")
	sw.LLDPName = d.str("lldp_name", "")
	sw.Role = d.str("role", "leaf")
	if t, ok := d.optInt("tier", 1, 9); ok {
		sw.Tier = t
	} else if t, ok := roleTiers[sw.Role]; ok {
		sw.Tier = t
	} else if !d.src.Has("tier") {
		rng := d.src.Attr("role")
		l.errf(&rng, "Unknown switch tier", "switch %q has role %q, which fabctl cannot place in the Clos (leaf/tor = 1, spine = 2, superspine/core = 3). Set tier = N.", name, sw.Role)
	}
	defFwd := Routed
	if l.spec.Fabric.Transport == RoCEv1 {
		defFwd = Bridged
	}
	sw.Forwarding = d.enum("forwarding", defFwd, Routed, Bridged)
	sw.UnknownUnicast = d.enum("unknown_unicast", "", "drop", "flood")
	sw.MTU = d.integer("mtu", 0, 576, 65520)
	sw.Trust = d.enum("trust", "", TrustDSCP, TrustPCP)
	if v, ok := d.intSet("pfc", 0, 7); ok {
		sw.PFC = v
	}
	sw.DSCPMap, _ = d.intMap("dscp_map", 0, 63, 0, 7)
	sw.RemarkDSCP, _ = d.intMap("remark_dscp", 0, 63, 0, 63)
	sw.Ignore = d.ignores()
	sw.Accept = d.acceptances()
	sw.Unmanaged = d.unmanaged("switch", sw.Accept)
	for _, b := range d.blocks {
		switch b.Type {
		case "buffer":
			if sw.Buffer != nil {
				l.errf(b.DefRange.Ptr(), "Duplicate buffer block", "switch %q has one buffer block.", name)
				continue
			}
			bd, _ := l.bodyDec(b.Body, bufferSchema, d.ctx, b.DefRange, whatf("switch %q buffer", name))
			if bd == nil {
				continue
			}
			buf := &Buffer{}
			buf.Total, _ = bd.bytes("total")
			buf.Reserved, _ = bd.bytes("reserved")
			buf.Headroom, _ = bd.bytes("headroom")
			buf.XOff, _ = bd.bytes("xoff")
			buf.QueueLimit, _ = bd.bytes("queue_limit")
			buf.CellSize, _ = bd.bytes("cell_size")
			buf.Src = bd.src
			sw.Buffer = buf
		case "port":
			pname := b.Labels[0]
			if prev, ok := sw.ports[pname]; ok {
				l.errf(b.LabelRanges[0].Ptr(), "Duplicate port", "switch %q already declares port %q at %s.", name, pname, prev.Src.Block)
				continue
			}
			pd, _ := l.bodyDec(b.Body, portSchema, d.ctx, b.DefRange, whatf("port %s:%s", name, pname))
			if pd == nil {
				continue
			}
			p := &Port{Name: pname}
			p.Speed, _ = pd.rate("speed")
			p.MTU = pd.integer("mtu", 0, 576, 65520)
			if v, ok := pd.intSet("pfc", 0, 7); ok {
				p.PFC = v
			}
			p.Pause = pd.boolean("pause", false)
			p.PFCWatchdog = pd.optBool("pfc_watchdog")
			p.Trust = pd.enum("trust", "", TrustDSCP, TrustPCP)
			p.Description = pd.str("description", "")
			p.Ignore = pd.ignores()
			p.Src = pd.src
			l.ids().port(sw, p)
			sw.Ports = append(sw.Ports, p)
			sw.ports[pname] = p
		case "acl":
			ad, _ := l.bodyDec(b.Body, aclSchema, d.ctx, b.DefRange, whatf("switch %q acl %q", name, b.Labels[0]))
			if ad == nil {
				continue
			}
			a := &ACL{Name: b.Labels[0]}
			a.Action = ad.enum("action", "deny", "permit", "deny")
			a.Protocol = ad.enum("protocol", "any", "udp", "tcp", "any")
			if ports, ok := ad.strList("dst_ports"); ok {
				for _, s := range ports {
					for _, part := range strings.Split(s, ",") {
						pr, err := parsePortRange(part)
						if err != nil {
							rng := ad.src.Attr("dst_ports")
							l.errf(&rng, "Invalid port range", "switch %q acl %q: %s.", name, a.Name, err)
							continue
						}
						a.DstPorts = append(a.DstPorts, pr)
					}
				}
			}
			a.Src = ad.src
			sw.ACLs = append(sw.ACLs, a)
		}
	}
	sw.declaredPorts = len(sw.Ports)
	sw.Src = d.src
	l.ids().switchAttrs(sw)
	return sw
}

var hostSchema = &hcl.BodySchema{
	Attributes: attrs("address", "connect", "credentials", "role", "forwarding", "sudo", "numa_nodes", "irqbalance", "rdma_tos", "nccl_env_file", "lldp_name", "lint_ignore", "accept_not_in_effect", "unmanaged"),
	Blocks:     []hcl.BlockHeaderSchema{{Type: "qp"}, {Type: "nic", LabelNames: []string{"name"}}},
}

var qpSchema = &hcl.BodySchema{Attributes: attrs("max_send_wr", "max_recv_wr", "max_sge", "max_inline", "cq_depth", "qps_per_connection")}

var nicSchema = &hcl.BodySchema{
	Attributes: attrs("device", "model", "addresses", "speed", "mtu", "numa", "numa_node", "trust", "pfc", "ecn", "dcqcn_priorities", "firmware_lldp", "receive_buffers", "pause", "dscp_map", "vlan", "vlan_interface", "guid", "lint_ignore", "accept_not_in_effect", "unmanaged"),
	Blocks:     []hcl.BlockHeaderSchema{{Type: "limits"}},
}

var limitsSchema = &hcl.BodySchema{Attributes: attrs("max_qp_wr", "max_sge", "max_cqe", "max_inline")}

// DefaultQP is the QP sizing used when a host has no qp block
// (perftest's defaults: tx depth 128, one SGE, no inline for large writes).
var DefaultQP = QPSizing{MaxSendWR: 128, MaxRecvWR: 512, MaxSGE: 1, MaxInline: 0, CQDepth: 1024, QPsPerConn: 1}

func (l *loader) host(in instance) *Host {
	d, name := l.content(in, hostSchema)
	if d == nil || !l.checkName("host", name, in.block.LabelRanges[0]) {
		return nil
	}
	h := &Host{Name: name, nics: map[string]*NIC{}}
	h.Address = d.str("address", "")
	conn := d.str("connect", "ssh")
	if c, ok := ParseConnect(conn); ok {
		h.Connect = c
	} else {
		rng := d.src.Attr("connect")
		l.errf(&rng, "Invalid value for connect", "host %q: connect = %q; use \"ssh\", \"local\", \"netns:<namespace>\", \"ssh+netns:<namespace>\" or \"none\" (not managed).", name, conn)
	}
	h.Credentials = d.str("credentials", "")
	h.LLDPName = d.str("lldp_name", "")
	h.Role = d.str("role", "")
	h.Forwarding = d.boolean("forwarding", false)
	h.Sudo = d.boolean("sudo", false)
	if m, ok := d.strMap("numa_nodes"); ok {
		h.NUMANodes = map[int]CPUSet{}
		rng := d.src.Attr("numa_nodes")
		for k, v := range m {
			node, err := strconv.Atoi(k)
			if err != nil || node < 0 || node > 1023 {
				l.errf(&rng, "Invalid NUMA node", "host %q: numa_nodes key %q must be a node number.", name, k)
				continue
			}
			cpus, err := ParseIntRanges(v, 0, 65535)
			if err != nil {
				l.errf(&rng, "Invalid CPU list", "host %q: numa_nodes[%q]: %s.", name, k, err)
				continue
			}
			h.NUMANodes[node] = uniqueSorted(cpus)
		}
	}
	h.IRQBalance = d.enum("irqbalance", "keep", "stop", "keep")
	if v, ok := d.optInt("rdma_tos", 0, 255); ok {
		h.RDMATos = &v
	}
	h.NCCLEnvFile = d.str("nccl_env_file", "")
	h.Ignore = d.ignores()
	h.Accept = d.acceptances()
	h.Unmanaged = d.unmanaged("host", h.Accept)
	h.QP = DefaultQP
	h.QP.Src = Source{Block: in.block.DefRange}
	seenQP := false
	for _, b := range d.blocks {
		switch b.Type {
		case "qp":
			if seenQP {
				l.errf(b.DefRange.Ptr(), "Duplicate qp block", "host %q has one qp block.", name)
				continue
			}
			seenQP = true
			qd, _ := l.bodyDec(b.Body, qpSchema, d.ctx, b.DefRange, whatf("host %q qp", name))
			if qd == nil {
				continue
			}
			q := &h.QP
			q.MaxSendWR = qd.integer("max_send_wr", q.MaxSendWR, 1, 1<<24)
			q.MaxRecvWR = qd.integer("max_recv_wr", q.MaxRecvWR, 1, 1<<24)
			q.MaxSGE = qd.integer("max_sge", q.MaxSGE, 1, 1024)
			q.MaxInline = qd.integer("max_inline", q.MaxInline, 0, 1<<20)
			q.CQDepth = qd.integer("cq_depth", q.CQDepth, 1, 1<<26)
			q.QPsPerConn = qd.integer("qps_per_connection", q.QPsPerConn, 1, 1024)
			q.Src = qd.src
		case "nic":
			nname := b.Labels[0]
			if prev, ok := h.nics[nname]; ok {
				l.errf(b.LabelRanges[0].Ptr(), "Duplicate NIC", "host %q already declares nic %q at %s.", name, nname, prev.Src.Block)
				continue
			}
			if n := l.nic(d, name, b); n != nil {
				h.NICs = append(h.NICs, n)
				h.nics[nname] = n
			}
		}
	}
	h.Src = d.src
	l.ids().hostAttrs(h)
	l.freeDec(d)
	return h
}

func (l *loader) nic(hd *dec, host string, b *hcl.Block) *NIC {
	d, _ := l.bodyDec(b.Body, nicSchema, hd.ctx, b.DefRange, whatf("nic %s:%s", host, b.Labels[0]))
	if d == nil {
		return nil
	}
	n := &NIC{Name: b.Labels[0]}
	n.Device = d.str("device", "")
	n.Model = strings.ToLower(d.str("model", ""))
	if addrs, ok := d.strList("addresses"); ok {
		for _, a := range addrs {
			p, err := netip.ParsePrefix(a)
			if err != nil {
				rng := d.src.Attr("addresses")
				l.errf(&rng, "Invalid address", "%s: %q is not an address with a prefix length, e.g. \"192.168.1.2/31\".", d.what, a)
				continue
			}
			n.Addresses = append(n.Addresses, p)
		}
	}
	n.Speed, _ = d.rate("speed")
	n.MTU = d.integer("mtu", 0, 576, 65520)
	numa := d.str("numa", "auto")
	if numa == "auto" {
		n.NUMA.Auto = true
	} else {
		cpus, err := ParseIntRanges(numa, 0, 65535)
		if err != nil {
			rng := d.src.Attr("numa")
			l.errf(&rng, "Invalid NUMA policy", "%s: numa = %q; use \"auto\" (pin to the NIC's node) or a CPU list such as \"0-15,32-47\": %s.", d.what, numa, err)
		}
		n.NUMA.CPUs = uniqueSorted(cpus)
	}
	if v, ok := d.optInt("numa_node", 0, 1023); ok {
		n.NUMANode = &v
	}
	n.Trust = d.enum("trust", "", TrustDSCP, TrustPCP)
	if v, ok := d.intSet("pfc", 0, 7); ok {
		n.PFC = v
	}
	n.ECN = d.optBool("ecn")
	if v, ok := d.intSet("dcqcn_priorities", 0, 7); ok {
		n.DCQCNPrios = v
	}
	n.FirmwareLLDP = d.optBool("firmware_lldp")
	n.ReceiveBuffers = d.enum("receive_buffers", BuffersFirmware, BuffersFirmware, BuffersManual)
	n.Pause = d.boolean("pause", false)
	n.DSCPMap, _ = d.intMap("dscp_map", 0, 63, 0, 7)
	n.VLAN = d.integer("vlan", 0, 0, 4094)
	n.VLANInterface = l.vlanInterface(d, n)
	if g := d.str("guid", ""); g != "" {
		guid, err := ParseGUID(g)
		if err != nil {
			rng := d.src.Attr("guid")
			l.errf(&rng, "Invalid GUID", "%s: guid %q %s; write the port GUID as `ibstat -p` prints it, e.g. \"0x0c42a10300000b01\".", d.what, g, err)
		}
		n.GUID = guid
	}
	n.Ignore = d.ignores()
	n.Accept = d.acceptances()
	n.Unmanaged = d.unmanaged("nic", n.Accept)
	n.Limits = ModelLimits(n.Model)
	n.Limits.Src = Source{Block: b.DefRange}
	for i, lb := range d.blocks {
		if i > 0 {
			l.errf(lb.DefRange.Ptr(), "Duplicate limits block", "%s has one limits block.", d.what)
			continue
		}
		ld, _ := l.bodyDec(lb.Body, limitsSchema, d.ctx, lb.DefRange, whatf("nic %s:%s limits", host, b.Labels[0]))
		if ld == nil {
			continue
		}
		lim := &n.Limits
		lim.MaxQPWR = ld.integer("max_qp_wr", lim.MaxQPWR, 1, 1<<30)
		lim.MaxSGE = ld.integer("max_sge", lim.MaxSGE, 1, 1<<16)
		lim.MaxCQE = ld.integer("max_cqe", lim.MaxCQE, 1, 1<<30)
		lim.MaxInline = ld.integer("max_inline", lim.MaxInline, 0, 1<<20)
		lim.Known = true
		lim.Src = ld.src
	}
	n.Src = d.src
	l.ids().nic(host, n)
	l.freeDec(d)
	return n
}

// vlanInterface is the name of a NIC's RDMA VLAN netdev: vlan_interface,
// or "<nic>.<vlan>" (the iproute2/vconfig convention); "" when untagged.
func (l *loader) vlanInterface(d *dec, n *NIC) string {
	name := d.str("vlan_interface", "")
	if name == "" && n.VLAN == 0 {
		return "" // untagged: no range wanted (&rng below moves it to the heap)
	}
	rng := d.src.Attr("vlan_interface")
	switch {
	case name != "" && n.VLAN == 0:
		l.errf(&rng, "VLAN interface without a VLAN", "%s: vlan_interface = %q needs vlan = N (the 802.1Q id of the RDMA interface).", d.what, name)
		return ""
	case n.VLAN == 0:
		return ""
	case name == "":
		name = n.Name + "." + strconv.Itoa(n.VLAN)
		rng = d.src.Attr("vlan")
	}
	// IFNAMSIZ is 16 with the NUL; '/' and whitespace are not allowed in netdev names.
	if len(name) > 15 || name == n.Name || strings.ContainsAny(name, "/: \t\n") {
		l.errf(&rng, "Invalid VLAN interface name", "%s: the RDMA VLAN interface would be %q, which is not a usable netdev name (at most 15 characters, no '/', ':' or spaces, not the NIC itself); set vlan_interface = \"NAME\".", d.what, name)
		return ""
	}
	return name
}

// ModelLimits returns the device limits of a known NIC model (what
// ibv_query_device reports with the stock driver), or unknown limits.
func ModelLimits(model string) DeviceLimits {
	switch model {
	case "connectx-6", "connectx-6dx", "connectx-7", "connectx-8", "bluefield-2", "bluefield-3":
		// mlx5: max_qp_wr 32768, max_sge 30, max_cqe 4194303; inline ~ 964 B for RC send.
		return DeviceLimits{MaxQPWR: 32768, MaxSGE: 30, MaxCQE: 4194303, MaxInline: 964, Known: true}
	case "e810":
		// irdma (Intel E810): max_qp_wr 4063, max_sge 13, max_cqe 1048574, inline 101.
		return DeviceLimits{MaxQPWR: 4063, MaxSGE: 13, MaxCQE: 1048574, MaxInline: 101, Known: true}
	case "rxe":
		// Soft-RoCE as seen on the VM testbed (ibv_devinfo -v): max_qp_wr 1048576, max_cqe 32767, max_sge 32; inline 416.
		return DeviceLimits{MaxQPWR: 1048576, MaxSGE: 32, MaxCQE: 32767, MaxInline: 416, Known: true}
	case "siw":
		// siw: SIW_MAX_QP_WR 32768 (1024*32), SIW_MAX_SGE 6, SIW_MAX_CQE 3*32768, SIW_MAX_INLINE 104.
		return DeviceLimits{MaxQPWR: 32768, MaxSGE: 6, MaxCQE: 98304, MaxInline: 104, Known: true}
	}
	return DeviceLimits{}
}

// NIC kernel driver families, by what their DCB and rdma_cm behaviour
// follows (drivers/host nicfamily.go, lint HOST-7/HOST-8).
const (
	FamilyMLX5 = "mlx5" // ConnectX, BlueField: mlx5_core
	FamilyICE  = "ice"  // Intel E810/E830: ice
	FamilyBNXT = "bnxt" // Broadcom NetXtreme-E (BCM57xxx, Thor): bnxt_en
)

// NICFamily is the kernel driver family of a NIC model (the spec's model,
// lower-cased), "" when the model does not say.
func NICFamily(model string) string {
	m := strings.ToLower(model)
	switch {
	case strings.HasPrefix(m, "connectx") || strings.HasPrefix(m, "bluefield"):
		return FamilyMLX5
	case strings.HasPrefix(m, "e810") || strings.HasPrefix(m, "e830"):
		return FamilyICE
	case strings.HasPrefix(m, "bcm57") || strings.HasPrefix(m, "thor") || strings.HasPrefix(m, "p2100") || strings.HasPrefix(m, "p1400"):
		return FamilyBNXT
	}
	return ""
}

var linkSchema = &hcl.BodySchema{Attributes: attrs("endpoints", "speed", "width", "cable_length", "vlan_tags", "lint_ignore")}

func (l *loader) link(in instance) *Link {
	d, _ := l.content(in, linkSchema)
	if d == nil {
		return nil
	}
	lk := &Link{}
	eps, ok := d.strList("endpoints")
	rng := d.src.Attr("endpoints")
	if !ok {
		if !d.src.Has("endpoints") && !d.schemaErrs {
			l.errf(in.block.DefRange.Ptr(), "Missing endpoints", "A link needs endpoints = [\"switch:port\", \"host:nic\"].")
		}
		return nil
	}
	// The error paths take a copy of a range: &rng would move rng to the
	// heap for every link, not only for a broken one.
	if len(eps) != 2 {
		r := rng
		l.errf(&r, "Invalid endpoints", "A link has exactly two endpoints, e.g. [\"leaf1:Ethernet0\", \"gpu01:ens1f0\"]; got %d.", len(eps))
		return nil
	}
	// Point each endpoint at its own element when the list is written out.
	elemRng := [2]hcl.Range{rng, rng}
	expr, _, _ := d.attr("endpoints")
	if tup, ok := expr.(*hclsyntax.TupleConsExpr); ok && len(tup.Exprs) == 2 {
		elemRng = [2]hcl.Range{tup.Exprs[0].Range(), tup.Exprs[1].Range()}
	}
	for i, e := range eps {
		node, port, ok := strings.Cut(e, ":")
		if !ok || node == "" || port == "" {
			r := elemRng[i]
			l.errf(&r, "Invalid endpoint", "Endpoint %q must be \"node:port\", e.g. \"leaf1:Ethernet0\" or \"gpu01:ens1f0\".", e)
			return nil
		}
		ep := Endpoint{Node: node, Port: port, Src: elemRng[i]}
		if i == 0 {
			lk.A = ep
		} else {
			lk.B = ep
		}
	}
	if sp := d.str("speed", ""); ibSpeedLane[strings.ToUpper(sp)] > 0 {
		lk.IBSpeed = strings.ToUpper(sp)
	} else {
		lk.Speed, _ = d.rate("speed")
	}
	if w := d.str("width", ""); w != "" {
		n, err := strconv.Atoi(strings.TrimSuffix(strings.ToLower(w), "x"))
		if err != nil || (n != 1 && n != 2 && n != 4 && n != 8 && n != 12) {
			rng := d.src.Attr("width")
			l.errf(&rng, "Invalid width", "link width %q: an InfiniBand link is 1x, 2x, 4x, 8x or 12x.", w)
		} else {
			lk.Width = n
		}
	}
	if lk.IBSpeed != "" {
		w := lk.Width
		if w == 0 {
			w = 4
		}
		lk.Speed = BitRate(float64(w) * ibSpeedLane[lk.IBSpeed])
	}
	lk.CableLength, _ = d.length("cable_length")
	lk.VLANTags = d.integer("vlan_tags", 0, 0, 2)
	lk.Ignore = d.ignores()
	lk.Src = d.src
	l.freeDec(d)
	return lk
}

var validationBlockSchema = &hcl.BodySchema{Attributes: attrs("pattern", "op", "message_size", "duration", "iterations", "qps", "class", "hosts", "min_bandwidth", "max_p99", "marking", "criteria", "bidirectional")}

func (l *loader) validation(in instance) *Validation {
	d, name := l.content(in, validationBlockSchema)
	if d == nil || !l.checkName("validate", name, in.block.LabelRanges[0]) {
		return nil
	}
	v := &Validation{Name: name}
	v.Pattern = d.enum("pattern", "ring", "ring", "pairs", "all-pairs")
	v.Op = d.enum("op", "write", "write", "send", "read")
	// No message_size: perftest's DEF_SIZE_BW (64 KiB) for bandwidth and
	// DEF_SIZE_LAT (2 B) for latency, chosen per test (0 here).
	if b, ok := d.bytes("message_size"); ok {
		if b < 1 || b > 1<<31 {
			rng := d.src.Attr("message_size")
			l.errf(&rng, "Value out of range", "validate %q: message_size must be 1B..2GiB.", name)
		} else {
			v.MessageSize = b
		}
	}
	v.Duration = d.duration("duration", 0)
	// Neither duration nor iterations: perftest's iteration count of the
	// operation, chosen per test (validate/verbs DefaultIterations).
	v.Iterations = d.integer("iterations", 0, 1, 1<<30)
	v.QPs = d.integer("qps", 1, 1, 1024)
	v.Class = d.str("class", "")
	v.Hosts, _ = d.strList("hosts")
	if s, rng, ok := d.unitString("min_bandwidth", false); ok {
		if strings.HasSuffix(strings.TrimSpace(s), "%") {
			p, err := ParsePercent(s)
			if err != nil || p <= 0 || p > 100 {
				l.errf(&rng, "Invalid min_bandwidth", "validate %q: min_bandwidth %q must be a share of line rate in (0%%, 100%%] or a speed such as \"350G\".", name, s)
			} else {
				v.MinBandwidth.Percent = p
			}
		} else if r, err := ParseBitRate(s); err != nil {
			l.errf(&rng, "Invalid min_bandwidth", "validate %q: %s; or give a share of line rate such as \"90%%\".", name, err)
		} else {
			v.MinBandwidth.Rate = r
		}
	}
	v.MaxP99 = d.duration("max_p99", 0)
	v.Marking = d.enum("marking", MarkHost, MarkHost, MarkSelf)
	v.Criteria = d.enum("criteria", CriteriaSpec, CriteriaSpec, CriteriaNGC)
	v.Bidirectional = d.boolean("bidirectional", false)
	v.Src = d.src
	return v
}

var ibSchema = &hcl.BodySchema{
	Attributes: attrs("subnet_manager", "sl2vl", "vl_arb_high", "vl_arb_low", "max_vls", "vl_high_limit", "sm_connect", "opensm_conf", "opensm_pid_file", "diags_dir", "unmanaged"),
	Blocks:     []hcl.BlockHeaderSchema{{Type: "partition", LabelNames: []string{"name"}}},
}

var partitionSchema = &hcl.BodySchema{Attributes: attrs("pkey", "members", "limited_members", "mtu", "rate", "sl", "ipoib")}

func (l *loader) infiniband(b *hcl.Block) *InfiniBandConfig {
	in := l.single(b, "")
	d, _ := l.content(in, ibSchema)
	if d == nil {
		return nil
	}
	ib := &InfiniBandConfig{}
	ib.SubnetManager = d.str("subnet_manager", "")
	if c := d.str("sm_connect", ""); c != "" {
		if c != "ssh" && c != "local" {
			rng := d.src.Attr("sm_connect")
			l.errf(&rng, "Invalid sm_connect", "infiniband: sm_connect = %q; use \"ssh\" or \"local\" (opensm runs on this machine).", c)
		} else {
			ib.SMConnect = c
		}
	}
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) || d.src.Block.Filename == "" {
			return p
		}
		return filepath.Join(filepath.Dir(d.src.Block.Filename), p)
	}
	ib.OpenSMConf = rel(d.str("opensm_conf", ""))
	ib.OpenSMPIDFile = rel(d.str("opensm_pid_file", ""))
	ib.DiagsDir = rel(d.str("diags_dir", ""))
	if v, _, ok := d.value("sl2vl", cty.List(cty.Number)); ok {
		rng := d.src.Attr("sl2vl")
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			i, whole := toInt(e)
			if !whole || i < 0 || i > 15 {
				l.errf(&rng, "Invalid sl2vl", "infiniband: sl2vl entries are VL numbers 0..15 (15 = drop).")
				break
			}
			ib.SL2VL = append(ib.SL2VL, i)
		}
		if len(ib.SL2VL) != 16 {
			l.errf(&rng, "Invalid sl2vl", "infiniband: sl2vl maps all 16 SLs to VLs and needs 16 entries; got %d.", len(ib.SL2VL))
		}
	}
	ib.VLArbHigh = l.vlArb(d, "vl_arb_high")
	ib.VLArbLow = l.vlArb(d, "vl_arb_low")
	if v, ok := d.optInt("max_vls", 1, 15); ok {
		if v != 1 && v != 2 && v != 4 && v != 8 && v != 15 {
			rng := d.src.Attr("max_vls")
			l.errf(&rng, "Invalid max_vls", "infiniband: max_vls is the number of data VLs a port runs: 1, 2, 4, 8 or 15 (IBA VLCap); got %d.", v)
		} else {
			ib.MaxVLs = v
		}
	}
	if v, ok := d.optInt("vl_high_limit", 0, 255); ok {
		ib.VLHighLimit = &v
	}
	seen := map[string]bool{}
	for _, pb := range d.blocks {
		pname := pb.Labels[0]
		if seen[pname] {
			l.errf(pb.LabelRanges[0].Ptr(), "Duplicate partition", "Partition %q is declared twice.", pname)
			continue
		}
		seen[pname] = true
		pd, _ := l.bodyDec(pb.Body, partitionSchema, d.ctx, pb.DefRange, whatf("partition %q", pname))
		if pd == nil {
			continue
		}
		p := &Partition{Name: pname, MTU: 4096}
		pk := pd.str("pkey", "")
		if pk == "" {
			l.errf(pb.DefRange.Ptr(), "Missing pkey", "partition %q needs pkey = \"0x8001\" (15-bit P_Key, 0x0001..0x7fff).", pname)
		} else if v, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(pk), "0x"), 16, 16); err != nil || v == 0 || v > 0xffff {
			rng := pd.src.Attr("pkey")
			l.errf(&rng, "Invalid pkey", "partition %q: pkey %q must be a hex P_Key such as \"0x8001\" or \"0x7fff\".", pname, pk)
		} else {
			p.PKey = int(v & 0x7fff) // the membership bit is set per member
			if p.PKey == 0 {
				rng := pd.src.Attr("pkey")
				l.errf(&rng, "Invalid pkey", "partition %q: pkey %q has base P_Key 0, which is invalid; use 0x0001..0x7fff (0x7fff is the default partition).", pname, pk)
			}
		}
		full, _ := pd.strList("members")
		limited, _ := pd.strList("limited_members")
		for _, m := range full {
			p.Members = append(p.Members, PartitionMember{Endpoint: m, Full: true})
		}
		for _, m := range limited {
			p.Members = append(p.Members, PartitionMember{Endpoint: m})
		}
		p.MTU = pd.integer("mtu", 4096, 0, 4096) // 0: opensm's default group MTU
		p.Rate, _ = pd.rate("rate")
		p.SL = pd.integer("sl", 0, 0, 15)
		p.IPoIB = pd.boolean("ipoib", false)
		p.Src = pd.src
		ib.Partitions = append(ib.Partitions, p)
	}
	// No accept_not_in_effect on the infiniband block: nothing to be
	// both ways.
	ib.Unmanaged = d.unmanaged(kindInfiniBand, nil)
	ib.Src = d.src
	return ib
}

func (l *loader) vlArb(d *dec, name string) []VLWeight {
	m, ok := d.strMap(name)
	if !ok {
		return nil
	}
	rng := d.src.Attr(name)
	var out []VLWeight
	for k, v := range m {
		vl, err1 := strconv.Atoi(k)
		w, err2 := strconv.Atoi(v)
		if err1 != nil || err2 != nil || vl < 0 || vl > 14 || w < 0 || w > 255 {
			l.errf(&rng, "Invalid VL arbitration", "infiniband: %s maps VL (0..14) to weight (0..255), e.g. { \"0\" = 64, \"1\" = 128 }; %q = %q is not valid.", name, k, v)
			continue
		}
		out = append(out, VLWeight{VL: vl, Weight: w})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].VL < out[j].VL })
	return out
}

// parsePortRange parses "4791" or "1000-2000" (0..65535).
func parsePortRange(s string) (PortRange, error) {
	a, b, isRange := strings.Cut(strings.TrimSpace(s), "-")
	from, err := strconv.Atoi(strings.TrimSpace(a))
	if err != nil {
		return PortRange{}, fmt.Errorf("%q is not a port or a range like \"1000-2000\"", s)
	}
	to := from
	if isRange {
		if to, err = strconv.Atoi(strings.TrimSpace(b)); err != nil {
			return PortRange{}, fmt.Errorf("%q is not a range like \"1000-2000\"", s)
		}
	}
	if from < 0 || to > 65535 || from > to {
		return PortRange{}, fmt.Errorf("%q is not a port range within 0..65535", s)
	}
	return PortRange{From: from, To: to}, nil
}
