package spec

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Unmanaged settings: unmanaged = { "<setting>" = "<reason>" } on a
// switch, host, nic or infiniband block (and in override files) says fabctl does not
// manage those settings on that device and leaves them as the device
// runs them (Terraform's lifecycle ignore_changes). Keys are setting
// paths matched as accept_not_in_effect's are (Acceptances.Match: '*'
// globs, a key covers the settings below it); unlike those, each key
// must name settings the block can have (settingKeyProblem), and a key
// may not also be accepted not in effect: a setting is either left to
// the device or the spec's, never both. Plan leaves such a setting out
// of the desired state (nothing is rendered or sent for it) and lists
// it; validate reports it "unmanaged, not checked", never as valid.

// unmanagedAttr is the attribute's name in switch, host, nic and
// infiniband blocks and in override files.
const unmanagedAttr = "unmanaged"

// kindInfiniBand is the kind of the infiniband block's unmanaged keys:
// the subnet manager's state paths (intent.SubnetManager.Flatten and
// the opensm driver's reads).
const kindInfiniBand = "infiniband"

// Setting names by scope, as plans print them (intent's Flatten and the
// drivers' reads): the grammar unmanaged keys are checked against.
var (
	portSettings  = []string{"mtu", "pfc", "pfcwd", "pause", "trust", "cable"}
	tcSettings    = []string{"lossless", "sched", "bandwidth"} // and a switch's ecn, a NIC's max_rate
	ecnSettings   = []string{"min", "max", "probability"}
	pfcwdSettings = []string{"detect", "restore", "poll", "action"}
	nicSettings   = []string{"mtu", "addresses", "trust", "pfc", "cable_len", "pause", "ecn", "cnp_dscp", "cnp_prio",
		"roce_mode", "tos", "irq_cpus", "firmware_lldp"}
	vlanSettings = []string{"id", "mtu", "addresses", "interface", "egress_qos_map"}
)

// wild: a key segment holding '*' may stand for any run of segments.
func wild(seg string) bool { return strings.Contains(seg, "*") }

func oneOf(seg string, names []string) bool { return wild(seg) || slices.Contains(names, seg) }

func inRange(seg string, lo, hi int) bool {
	if wild(seg) {
		return true
	}
	n, err := strconv.Atoi(seg)
	return err == nil && n >= lo && n <= hi && strconv.Itoa(n) == seg
}

// UnmanagedKeyProblem says what is wrong with key as an unmanaged key of
// a block of kind "switch", "host", "nic" or "infiniband" ("" when
// nothing; ports and NICs it names are checked when the spec loads):
// for writers of specs (fabctl import).
func UnmanagedKeyProblem(kind, key string) string { return settingKeyProblem(kind, key) }

// settingKeyProblem says what is wrong with an unmanaged key of a block
// of kind "switch", "host", "nic" or "infiniband" ("" when nothing): it must be a
// setting path (validAcceptKey) that names settings such a block has.
// Port and NIC names are checked against the spec in resolve
// (unmanagedNames).
func settingKeyProblem(kind, key string) string {
	if why := validAcceptKey(key); why != "" {
		return why
	}
	s := strings.Split(key, "/")
	ok := false
	switch kind {
	case "switch":
		ok = switchKey(s)
	case "host":
		ok = hostKey(s)
	case "nic":
		ok = nicKey(s)
	case kindInfiniBand:
		ok = smKey(s)
	}
	if !ok {
		what := "a " + kind
		if kind == kindInfiniBand {
			what = "the subnet manager"
		}
		return "is not a setting " + what + " has (" + settingExamples[kind] + ")"
	}
	return ""
}

var settingExamples = map[string]string{
	"switch": `e.g. "trust", "dscp/26", "tc/3/ecn", "pfcwd/action", "buffer/headroom", "port/Ethernet1/1/pfc", "port/*/trust"`,
	"host":   `e.g. "irqbalance", "nccl/NCCL_IB_TC", "nic/eth1/pfc", "nic/*/tos"`,
	"nic":    `e.g. "pfc", "trust", "dscp/26", "tc/3/bandwidth", "ecn", "tos", "vlan/mtu", "buffer/prio"`,
	kindInfiniBand: `e.g. "partitions/Storage", "partitions/Default/mgid/*", "partitions/*/member/ALL_CAS", ` +
		`"qos-policy/section/port-groups", "qos-policy/level/WholeSet", "qos-policy/match/2", "opensm/qos_ca_sl2vl", "ib/leaf1/3/vlarb_low"`,
}

// Subnet manager settings as plans print them (intent.SubnetManager
// Flatten; drivers/sm/opensm parse.go for what the files can hold
// besides).
var (
	partitionSettings  = []string{"pkey", "ipoib", "mtu", "rate", "sl"}
	partitionLists     = []string{"member", "mgid", "flag"} // member/<guid|keyword>, mgid/<gid>, flag/<name>
	qosPolicySettings  = []string{"level", "match", "section", "unparsed"}
	fabricPortSettings = []string{"pkey", "sl2vl", "vlarb_high", "vlarb_low"}
	openSMOption       = regexp.MustCompile(`^[a-z0-9_]+$`)
)

// smKey: partitions/<name>[/<setting>] (a partitions.conf statement
// opensm's syntax does not allow is partitions/unparsed/<n>),
// qos-policy/level/<name>[/<field>], qos-policy/match/<n>,
// qos-policy/section/<name>, qos-policy/unparsed/<n>, opensm/<option>
// and ib/<node>/<port>[/<table>] (what opensm programs into a cabled
// port).
func smKey(s []string) bool {
	if wild(s[0]) {
		return true
	}
	switch s[0] {
	case "partitions":
		switch {
		case len(s) <= 2, wild(s[2]):
			return true
		case s[1] == "unparsed":
			return len(s) == 3 && inRange(s[2], 1, 1<<30)
		case slices.Contains(partitionLists, s[2]):
			return true // a GUID, keyword, MGID or flag: whatever the file has
		}
		return len(s) == 3 && slices.Contains(partitionSettings, s[2])
	case "qos-policy":
		switch {
		case len(s) == 1 || wild(s[1]):
			return true
		case !slices.Contains(qosPolicySettings, s[1]):
			return false
		case s[1] == "level":
			return len(s) <= 4 // level/<name>/<field>: the file's fields
		case s[1] == "section":
			return len(s) <= 3
		}
		return len(s) == 2 || len(s) == 3 && inRange(s[2], 1, 1<<30) // match/<n>, unparsed/<n>
	case "opensm":
		return len(s) == 1 || len(s) == 2 && openSMOption.MatchString(s[1])
	case "ib":
		// ib/<node>/<port>/<table>[/<partition>]: a port is a switch
		// port's number or a NIC's name.
		return len(s) <= 3 || wild(s[3]) || oneOf(s[3], fabricPortSettings) && (len(s) == 4 || s[3] == "pkey" && len(s) == 5)
	}
	return false
}

func switchKey(s []string) bool {
	if wild(s[0]) {
		return true
	}
	switch s[0] {
	case "trust":
		return len(s) == 1
	case "dscp":
		return dscpKey(s[1:])
	case "tc":
		return tcKey(s[1:], true)
	case "pfcwd":
		return len(s) == 1 || len(s) == 2 && oneOf(s[1], pfcwdSettings)
	case "buffer":
		return len(s) == 1 || len(s) == 2 && oneOf(s[1], []string{"headroom"})
	case "port":
		// port/<name>[/<setting>]: names hold '/', so any rest is a port
		// name (checked in resolve) or a port's setting.
		return true
	}
	return false
}

func dscpKey(s []string) bool {
	return len(s) == 0 || len(s) == 1 && (s[0] == "default" || inRange(s[0], 0, 63))
}

// tcKey: a switch's classes mark ECN (tc/N/ecn/...), a NIC's cap their
// rate (tc/N/max_rate).
func tcKey(s []string, sw bool) bool {
	switch {
	case len(s) == 0:
		return true
	case wild(s[0]):
		return true
	case !inRange(s[0], 0, 7):
		return false
	case len(s) == 1 || wild(s[1]):
		return true
	case s[1] == "ecn" && sw:
		return len(s) == 2 || len(s) == 3 && oneOf(s[2], ecnSettings)
	case s[1] == "max_rate":
		return len(s) == 2 && !sw
	}
	return len(s) == 2 && oneOf(s[1], tcSettings)
}

func hostKey(s []string) bool {
	if wild(s[0]) {
		return true
	}
	switch s[0] {
	case "irqbalance":
		return len(s) == 1
	case "nccl":
		return len(s) <= 2
	case "nic":
		return len(s) <= 2 || wild(s[1]) || nicKey(s[2:])
	}
	return false
}

func nicKey(s []string) bool {
	if wild(s[0]) {
		return true
	}
	switch s[0] {
	case "dscp":
		return dscpKey(s[1:])
	case "tc":
		return tcKey(s[1:], false)
	case "vlan":
		return len(s) == 1 || len(s) == 2 && oneOf(s[1], vlanSettings)
	case "buffer":
		return len(s) == 1 || len(s) == 2 && (s[1] == "prio" || inRange(s[1], 0, 7)) ||
			len(s) == 3 && inRange(s[1], 0, 7) && oneOf(s[2], []string{"size"})
	}
	return len(s) == 1 && slices.Contains(nicSettings, s[0])
}

// unmanagedPort is the port an unmanaged switch key names without a
// wildcard ("port/Ethernet1/1/pfc" and "port/Ethernet1/1": Ethernet1/1),
// "" for other keys.
func unmanagedPort(key string) string {
	rest, ok := strings.CutPrefix(key, "port/")
	if !ok || wild(rest) {
		return ""
	}
	if i := strings.LastIndexByte(rest, '/'); i > 0 && slices.Contains(portSettings, rest[i+1:]) {
		return rest[:i]
	}
	return rest
}

// unmanagedNIC is the NIC an unmanaged host key names without a
// wildcard ("nic/eth1/pfc": eth1), "" for other keys.
func unmanagedNIC(key string) string {
	rest, ok := strings.CutPrefix(key, "nic/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	if wild(name) {
		return ""
	}
	return name
}

// unmanagedNames checks, once every port is known (port blocks and
// links), that the ports and NICs unmanaged keys name exist.
func (l *loader) unmanagedNames() {
	for _, sw := range l.spec.Switches {
		for _, k := range sw.Unmanaged.Keys() {
			if p := unmanagedPort(k); p != "" && sw.Port(p) == nil {
				rng := sw.Src.Attr(unmanagedAttr)
				l.errf(&rng, "Unknown port in unmanaged", "switch %q: unmanaged key %q names port %q, which the switch has neither as a port block nor on a link; %s.", sw.Name, k, p, settingExamples["switch"])
			}
		}
	}
	for _, h := range l.spec.Hosts {
		for _, k := range h.Unmanaged.Keys() {
			if n := unmanagedNIC(k); n != "" && h.NIC(n) == nil {
				rng := h.Src.Attr(unmanagedAttr)
				l.unknownRef(rng, "nic", n, nicNames(h), fmt.Sprintf("host %q unmanaged key %q", h.Name, k))
			}
		}
	}
}

// bothWays reports the keys of unmanaged that accept_not_in_effect also
// has: a setting is either left as the device runs it or the spec's
// (accepted not in effect), never both.
func bothWays(unmanaged, accept Acceptances) []string {
	var out []string
	for _, k := range unmanaged.Keys() {
		if _, ok := accept[k]; ok {
			out = append(out, k)
		}
	}
	return out
}

// bothWaysDetail is the error detail for a key in both maps.
func bothWaysDetail(what, key string) string {
	return fmt.Sprintf("%s: %q is both unmanaged and in accept_not_in_effect. Unmanaged leaves the setting as the device runs it (fabctl neither sets nor checks it); accept_not_in_effect keeps the spec's value and accepts that the device cannot take it: keep one.", what, key)
}
