package lint

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fabctl/fabctl/spec"
)

func hostRules() []Rule {
	return []Rule{
		{
			ID:    "HOST-1",
			Title: "QP sizing fits every NIC of the host, and the CQ holds all outstanding work requests",
			Rationale: `ibv_create_qp and ibv_create_cq fail with EINVAL when a request exceeds what the device reports in
ibv_query_device (max_qp_wr, max_sge, max_cqe, and the inline size the driver accepts): the traffic
test and applications sized from the same numbers cannot start, and only on the hosts with the smaller
NIC (an Intel E810 allows 4063 work requests per queue, a ConnectX 32768). A completion queue shallower
than the work requests that can complete into it (send + receive queue) overflows when the
application polls late; the device raises IBV_EVENT_CQ_ERR and the QPs go to the error state. Limits
come from the NIC model table or a limits block; NICs with unknown limits are not checked.`,
			Reference: "linux-rdma/rdma-core libibverbs/verbs.h `struct ibv_device_attr` (max_qp_wr, max_sge, max_cqe) and ibv_create_qp(3)/ibv_create_cq(3)",
			Check:     checkHOST1,
		},
		{
			ID:    "HOST-2",
			Title: "A NIC's pinned CPUs are on its NUMA node",
			Rationale: `An RDMA NIC DMAs into memory and raises interrupts on its own NUMA node. Threads and IRQs pinned to
CPUs of another node cross the inter-socket link for every completion and buffer access, which costs
tens of percent of bandwidth and adds latency jitter at 200–400G. The rule compares a NIC's explicit CPU
list (numa = "0-15") with the CPUs the host declares for the NIC's numa_node, and checks that the node
exists in numa_nodes. numa = "auto" pins to the NIC's local node and is always right.`,
			Reference: "Common vendor tuning practice: NVIDIA/Mellanox mlnx-tools set_irq_affinity_bynode.sh and mlnx_tune (pin IRQs and threads to /sys/class/net/<if>/device/local_cpulist); perftest's NUMA-local CPU selection",
			Check:     checkHOST2,
		},
		{
			ID:    "HOST-3",
			Title: "Host NICs mirror the fabric's PFC set, trust mode and ECN",
			Rationale: `The lossless contract has two sides: the switch pauses the NIC and the NIC pauses the switch, on the
same priorities, classified by the same field, and the NIC reacts to ECN marks (DCQCN reaction and
notification points) that the switches set. A NIC whose PFC set misses a lossless priority drops on
its receive buffer instead of pausing the switch; a NIC trusting PCP while the fabric trusts DSCP puts
RoCE on the wrong priority; a NIC with ECN off under DCQCN never sends CNPs, so senders never slow
down and PFC does all the work. HOST-3 compares each NIC override with the fabric intent (the
classes, fabric trust, congestion_control); QOS-1 and QOS-2 check switch ports per link, so one wrong
setting is reported once.`,
			Reference: "Host-side lossless configuration (https://losslessnetwork.com/learn/host-networking/host-side-lossless); NVIDIA DCQCN parameters (https://networking-docs.nvidia.com/doca/archive/3-4-0/dcqcn-cc-parameters)",
			Check:     checkHOST3,
		},
		ruleHOST4,
		ruleHOST5,
		ruleHOST6,
		ruleHOST7,
		ruleHOST8,
	}
}

// limitSource says where a NIC's device limit comes from.
func limitSource(n *spec.NIC, attr string) string {
	if n.Limits.Src.Has(attr) || n.Model == "" {
		return "from its limits block"
	}
	return "from the model table"
}

// qpLimit pairs a qp attribute with the device limit it must not exceed.
type qpLimit struct {
	attr  string // qp attribute
	limit string // ibv_device_attr field
	want  func(q spec.QPSizing) int
	get   func(n *spec.NIC) (int, bool) // the NIC's limit, if stated
}

var qpLimits = []qpLimit{
	{"max_send_wr", "max_qp_wr", func(q spec.QPSizing) int { return q.MaxSendWR },
		func(n *spec.NIC) (int, bool) { return n.Limits.MaxQPWR, n.Limits.MaxQPWR > 0 }},
	{"max_recv_wr", "max_qp_wr", func(q spec.QPSizing) int { return q.MaxRecvWR },
		func(n *spec.NIC) (int, bool) { return n.Limits.MaxQPWR, n.Limits.MaxQPWR > 0 }},
	{"max_sge", "max_sge", func(q spec.QPSizing) int { return q.MaxSGE },
		func(n *spec.NIC) (int, bool) { return n.Limits.MaxSGE, n.Limits.MaxSGE > 0 }},
	{"max_inline", "max_inline", func(q spec.QPSizing) int { return q.MaxInline },
		func(n *spec.NIC) (int, bool) {
			// 0 is a real inline limit; from a partial limits block on an
			// unknown model it only means "not stated".
			return n.Limits.MaxInline, spec.ModelLimits(n.Model).Known || n.Limits.Src.Has("max_inline")
		}},
	{"cq_depth", "max_cqe", func(q spec.QPSizing) int { return q.CQDepth },
		func(n *spec.NIC) (int, bool) { return n.Limits.MaxCQE, n.Limits.MaxCQE > 0 }},
}

func checkHOST1(c *Context) {
	s := c.Spec
	type over struct {
		n *spec.NIC
		v int
	}
	var overs []over
	for _, h := range s.Hosts {
		q := h.QP
		hs := []spec.LintIgnores{h.Ignore}
		for _, ck := range qpLimits {
			want := ck.want(q)
			overs = overs[:0]
			for _, n := range h.NICs {
				if !n.Limits.Known {
					continue
				}
				v, ok := ck.get(n)
				if !ok || want <= v {
					continue
				}
				if _, skip := n.Ignore[c.rule.ID]; skip {
					c.suppressed++ // the NIC's lint_ignore takes it out of the host's finding
					continue
				}
				overs = append(overs, over{n, v})
			}
			if len(overs) == 0 {
				continue
			}
			sort.SliceStable(overs, func(i, j int) bool { return overs[i].v < overs[j].v })
			var names []string
			for _, o := range overs {
				model := ""
				if o.n.Model != "" {
					model = o.n.Model + ": "
				}
				names = append(names, fmt.Sprintf("%s:%s (%s%s = %d, %s)", h.Name, o.n.Name, model, ck.limit, o.v, limitSource(o.n, ck.limit)))
			}
			c.Reportf(Error, q.Src.Attr(ck.attr), "host."+h.Name, hs, "QP sizing exceeds the NIC's limits",
				"host %q sizes queues with %s = %d, more than %s allows: %s. ibv_create_%s fails with EINVAL there, so the traffic test and applications sized from the spec cannot start. Set %s ≤ %d.",
				h.Name, ck.attr, want, pluralNIC(len(overs), len(h.NICs)), joinCapped(names), verbsObject(ck.attr), ck.attr, overs[0].v)
		}
		if wrs := q.MaxSendWR + q.MaxRecvWR; q.CQDepth < wrs {
			c.Reportf(Error, q.Src.Attr("cq_depth"), "host."+h.Name, hs, "Completion queue shallower than the work queues",
				"host %q has cq_depth = %d, but max_send_wr %d + max_recv_wr %d = %d work requests can complete into it. When the application polls late the CQ overruns: the device raises IBV_EVENT_CQ_ERR and every QP on it goes to the error state. Set cq_depth ≥ %d.",
				h.Name, q.CQDepth, q.MaxSendWR, q.MaxRecvWR, wrs, wrs)
		}
	}
}

func pluralNIC(n, of int) string {
	switch {
	case of == 1:
		return "its NIC"
	case n == 1:
		return fmt.Sprintf("1 of its %d NICs", of)
	}
	return fmt.Sprintf("%d of its %d NICs", n, of)
}

func verbsObject(attr string) string {
	if attr == "cq_depth" {
		return "cq"
	}
	return "qp"
}

// numaNodesOf returns the declared nodes that hold any of cpus, in order.
func numaNodesOf(nodes map[int]spec.CPUSet, cpus spec.CPUSet) []int {
	var out []int
	for node, set := range nodes {
		in := make(map[int]bool, len(set))
		for _, x := range set {
			in[x] = true
		}
		for _, x := range cpus {
			if in[x] {
				out = append(out, node)
				break
			}
		}
	}
	sort.Ints(out)
	return out
}

// cpuSetMinus returns the CPUs of a not in b.
func cpuSetMinus(a, b spec.CPUSet) spec.CPUSet {
	in := make(map[int]bool, len(b))
	for _, x := range b {
		in[x] = true
	}
	var out spec.CPUSet
	for _, x := range a {
		if !in[x] {
			out = append(out, x)
		}
	}
	return out
}

func declaredNodes(nodes map[int]spec.CPUSet) string {
	keys := make([]int, 0, len(nodes))
	for k := range nodes {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d (CPUs %s)", k, nodes[k]))
	}
	return strings.Join(parts, ", ")
}

func checkHOST2(c *Context) {
	s := c.Spec
	for _, h := range s.Hosts {
		if h.NUMANodes == nil {
			continue // nothing declared to check against
		}
		for _, n := range h.NICs {
			addr, sc := hostNICAddress(h, n), hostNICScopes(h, n)
			if n.NUMANode != nil {
				node := *n.NUMANode
				set, ok := h.NUMANodes[node]
				if !ok {
					c.Reportf(Warning, n.Src.Attr("numa_node"), addr, sc, "NIC on an undeclared NUMA node",
						"nic %s:%s has numa_node = %d, but host %q declares only NUMA nodes %s. Pinning cannot be checked or applied for this NIC; declare node %d's CPUs (from /sys/devices/system/node/node%d/cpulist) or fix numa_node (from /sys/class/net/%s/device/numa_node).",
						h.Name, n.Name, node, h.Name, declaredNodes(h.NUMANodes), node, node, n.Name)
					continue
				}
				if n.NUMA.Auto || len(n.NUMA.CPUs) == 0 {
					continue
				}
				if remote := cpuSetMinus(n.NUMA.CPUs, set); len(remote) > 0 {
					c.Reportf(Warning, n.Src.Attr("numa"), addr, sc, "NIC pinned to CPUs of another NUMA node",
						"nic %s:%s is on NUMA node %d (CPUs %s) but numa = %q also pins to CPUs %s, which are not on that node. Completions and buffers handled there cross the inter-socket link. Use numa = \"auto\" or a CPU list within %s.",
						h.Name, n.Name, node, set, n.NUMA.CPUs.String(), remote, set)
				}
				continue
			}
			if n.NUMA.Auto || len(n.NUMA.CPUs) == 0 {
				continue
			}
			// No numa_node: the CPU list should at least stay within one node.
			nodes := numaNodesOf(h.NUMANodes, n.NUMA.CPUs)
			all := spec.CPUSet{}
			for _, node := range nodes {
				all = append(all, h.NUMANodes[node]...)
			}
			unknown := cpuSetMinus(n.NUMA.CPUs, all)
			switch {
			case len(nodes) > 1:
				c.Reportf(Warning, n.Src.Attr("numa"), addr, sc, "NIC pinned across NUMA nodes",
					"nic %s:%s pins to CPUs %s, which span NUMA nodes %s of host %q: whichever node the NIC is on, part of its work runs remote. Set numa_node and keep the CPU list within that node, or use numa = \"auto\".",
					h.Name, n.Name, n.NUMA.CPUs, joinIntList(nodes, " and "), h.Name)
			case len(unknown) > 0:
				c.Reportf(Warning, n.Src.Attr("numa"), addr, sc, "NIC pinned to undeclared CPUs",
					"nic %s:%s pins to CPUs %s, which none of host %q's NUMA nodes contains (%s). Fix the CPU list or numa_nodes.",
					h.Name, n.Name, unknown, h.Name, declaredNodes(h.NUMANodes))
			}
		}
	}
}

func checkHOST3(c *Context) {
	s := c.Spec
	f := s.Fabric
	if !f.Transport.IsEthernet() {
		return
	}
	want := s.LosslessPriorities()
	for _, h := range s.Hosts {
		for _, n := range h.NICs {
			if n.PFC == nil && n.Trust == "" && n.ECN == nil {
				continue // follows the fabric
			}
			addr, sc := hostNICAddress(h, n), hostNICScopes(h, n)
			if f.Transport.IsRoCE() && n.PFC != nil && !prioSetEqual(n.PFC, want) {
				var what []string
				if miss := prioSetMinus(want, n.PFC); len(miss) > 0 {
					what = append(what, fmt.Sprintf("it lacks %s of %s, so the NIC neither pauses the switch when its receive buffer fills nor honours the switch's pauses: lossless traffic drops at the host (rx_discards_phy)",
						prioSetString(miss), losslessClassNames(s, miss)))
				}
				if extra := prioSetMinus(n.PFC, want); len(extra) > 0 {
					what = append(what, fmt.Sprintf("it adds %s, which no lossless class uses: the switch ignores the NIC's pause frames there and the NIC reserves receive buffer for nothing", prioSetString(extra)))
				}
				c.Reportf(Error, n.Src.Attr("pfc"), addr, sc, "NIC PFC set differs from the lossless classes",
					"nic %s:%s has pfc = %s, but the lossless classes (and the switches) use %s: %s. Set pfc = %s or remove the override.",
					h.Name, n.Name, hclIntList(n.PFC), prioSetString(want), strings.Join(what, "; "), hclIntList(want))
			}
			if n.Trust != "" && n.Trust != f.Trust {
				c.Reportf(Error, n.Src.Attr("trust"), addr, sc, "NIC trust differs from the fabric",
					"nic %s:%s trusts %s, but the fabric trusts %s (%s): the NIC maps received RDMA to a priority by a different field than the switches, so its PFC and ETS act on another priority than the switch's for the same traffic and the lossless class breaks at the host. (On mlx5, DSCP trust is installing the DSCP map, PCP trust removing it.) Set trust = %q or remove the override.",
					h.Name, n.Name, strings.ToUpper(n.Trust), strings.ToUpper(f.Trust), fabricOrigin(s, "trust").What, f.Trust)
			}
			if f.Transport == spec.RoCEv2 && n.ECN != nil && !*n.ECN && (f.CongestionControl == spec.CCDCQCN || f.CongestionControl == spec.CCECNOnly) {
				c.Reportf(Error, n.Src.Attr("ecn"), addr, sc, "ECN off on a NIC under ECN-based congestion control",
					"nic %s:%s has ecn = false, but congestion_control = %q: the switches mark ECN, yet this NIC as a receiver (notification point) sends no CNPs and as a sender (reaction point) ignores them, so its flows never slow down and PFC does all the work (pause spreading, victim flows). Set ecn = true or remove the override.",
					h.Name, n.Name, f.CongestionControl)
			}
		}
	}
}
