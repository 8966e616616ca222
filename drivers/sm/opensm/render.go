package opensm

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/intent"
)

// The three files, by the first segment of their state paths.
const (
	filePartitions = "partitions"
	fileQoSPolicy  = "qos-policy"
	fileOpenSM     = "opensm"
)

// fileOf returns the file a state path belongs to.
func fileOf(p string) string {
	f, _, _ := strings.Cut(p, "/")
	return f
}

// partitionName is what opensm's parser can take as a partition name:
// parse_name_token splits on '=', ',', ':', ';' and '#' starts a comment;
// the name is kept in a 32-byte buffer (osm_prtn_t.name).
var partitionName = regexp.MustCompile(`^[A-Za-z0-9_.+-]{1,31}$`)

// renderPartitions renders partitions.conf: the whole file, one statement
// per partition, members one per line with the spec endpoint as comment.
// Syntax: opensm(8) PARTITION CONFIGURATION and linux-rdma/opensm
// doc/partition-config.txt; what the parser accepts is
// opensm/osm_prtn_config.c (comments are cut per line, a statement runs
// to ';' across lines, empty member names are skipped).
func renderPartitions(sm *intent.SubnetManager, fabric string) ([]byte, error) {
	return renderPartitionsKeeping(sm, fabric, nil)
}

// renderPartitionsKeeping is renderPartitions followed by the kept
// statements (keptPartitions): partitions the spec leaves unmanaged,
// as opensm reads them from the live file.
func renderPartitionsKeeping(sm *intent.SubnetManager, fabric string, kept []keptPartition) ([]byte, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "# opensm partitions for fabric %q, written by fabctl from the spec: edit the spec, not\n", fabric)
	b.WriteString("# this file (fabctl rewrites it whole and keeps the previous one as *.fabctl.bak).\n")
	b.WriteString("# Syntax: opensm(8) PARTITION CONFIGURATION, linux-rdma/opensm doc/partition-config.txt.\n")
	b.WriteString("# Members are port GUIDs; a member without \"=full\" is limited (opensm's default\n")
	b.WriteString("# membership). mtu and rate are IBTA codes: mtu=4 is 2048, mtu=5 is 4096 bytes; rate=21 is\n")
	b.WriteString("# 400 Gb/s (include/iba/ib_types.h IB_PATH_RECORD_RATE_*). sl needs QoS on (opensm.conf qos TRUE).\n")
	for _, p := range sm.Partitions {
		if !partitionName.MatchString(p.Name) {
			return nil, fmt.Errorf("partition %q: opensm takes partition names of 1-31 letters, digits, '_', '.', '+' or '-'; rename it", p.Name)
		}
		b.WriteString("\n")
		if p.Implicit {
			b.WriteString("# Default partition (the spec declares no P_Key 0x7fff): every port a full member, as\n")
			b.WriteString("# opensm does without a partitions file, so IPoIB on the default P_Key keeps working.\n")
		} else {
			fmt.Fprintf(&b, "# partition %q: full members hold P_Key 0x%04x, limited members 0x%04x\n", p.Name, p.PKey|0x8000, p.PKey)
		}
		hdr := p.Name + "=" + intent.PKeyString(p.PKey)
		if p.IPoIB {
			hdr += ", ipoib"
		}
		if p.MTU > 0 {
			c, ok := intent.IBMTUCode(p.MTU)
			if !ok {
				return nil, fmt.Errorf("partition %q: mtu %d is not an IB MTU (256, 512, 1024, 2048, 4096)", p.Name, p.MTU)
			}
			hdr += ", mtu=" + strconv.Itoa(c)
		}
		if p.Rate > 0 {
			c, ok := intent.IBRateCode(p.Rate)
			if !ok {
				return nil, fmt.Errorf("partition %q: rate %s is not an InfiniBand rate opensm can set (%s)", p.Name, p.Rate, rateList())
			}
			hdr += ", rate=" + strconv.Itoa(c)
		}
		if p.SL != 0 {
			hdr += ", sl=" + strconv.Itoa(p.SL)
		}
		b.WriteString(hdr + " :")
		if len(p.Members) == 0 {
			b.WriteString(" ;\n")
			continue
		}
		b.WriteString("\n")
		for i, m := range p.Members {
			if m.ID == "" {
				return nil, fmt.Errorf("partition %q: member %s has no port GUID: set guid = \"0x...\" on nic %s (ibstat -p on the host prints it)", p.Name, m.Endpoint, m.Endpoint)
			}
			line := "\t" + m.ID
			if m.Full {
				line += "=full"
			}
			if i < len(p.Members)-1 {
				line += ","
			} else {
				line += " ;"
			}
			if m.Endpoint != "" {
				line += " # " + m.Endpoint
			}
			b.WriteString(line + "\n")
		}
	}
	for _, k := range kept {
		fmt.Fprintf(&b, "\n# partition %q: unmanaged in the spec, kept as the previous file had it\n", k.name)
		b.WriteString(k.text + ";\n")
	}
	return []byte(b.String()), nil
}

// keptPartition is a partitions.conf statement carried over unchanged.
type keptPartition struct{ name, text string }

// keptPartitions are the statements of the live partitions.conf that
// define a partition the spec leaves unmanaged whole: every setting it
// has is under an unmanaged key ("partitions/Site", "partitions/*"),
// its name is one opensm takes, the spec declares no partition of that
// name or P_Key, and the
// statement reads alone as that one partition. Each is its text as
// opensm's parser takes it (osm_prtn_config.c: '#' comments cut per
// line, the statement up to its ';'), in the form doc/partition-config.txt
// gives: "name=pkey[, flag[=value]]... : member[=full|limited|both], ... ;"
// with mgid= lines inside. Anything else the spec leaves unmanaged that
// the rendered file would change is caught by apply's verification,
// which rolls the files back.
func keptPartitions(sm *intent.SubnetManager, live string) []keptPartition {
	if !sm.HasUnmanaged() || live == "" {
		return nil
	}
	names, pkeys := map[string]bool{}, map[string]bool{}
	for _, p := range sm.Partitions {
		names[p.Name] = true
		pkeys[intent.PKeyString(p.PKey)] = true
	}
	var out []keptPartition
	taken := map[string]bool{}
	for _, stmt := range partitionStatements(live) {
		st := parsePartitions(stmt + ";")
		name := ""
		all := len(st) > 0
		for k := range st {
			n, _, _ := strings.Cut(strings.TrimPrefix(k, intent.PathPartitions), "/")
			if name != "" && n != name {
				all = false
			}
			name = n
			if _, left := sm.Leaves(k); !left {
				all = false
			}
		}
		// A name opensm's parser takes (no '/': the state path is then
		// the partition's), and a P_Key neither the spec's nor another
		// kept statement's: opensm would merge it into that partition.
		pkey := st[intent.PathPartitions+name+"/pkey"]
		if !all || !partitionName.MatchString(name) || name == "unparsed" || pkey == "" || names[name] || pkeys[pkey] || taken[name] || pkey != "auto" && taken[pkey] {
			continue
		}
		taken[name], taken[pkey] = true, true
		out = append(out, keptPartition{name: name, text: stmt})
	}
	return out
}

// partitionStatements splits partitions.conf into its statements as
// parsePartitions reads them: comments cut per line, statements up to
// ';' (across lines), without the ';'; empty ones skipped.
func partitionStatements(text string) []string {
	var out []string
	var stmt []string
	flush := func() {
		joined := strings.TrimSpace(strings.Join(stmt, "\n"))
		stmt = nil
		if joined != "" {
			out = append(out, joined)
		}
	}
	for _, raw := range strings.Split(text, "\n") {
		line, _, _ := strings.Cut(raw, "#")
		for {
			before, after, found := strings.Cut(line, ";")
			stmt = append(stmt, strings.TrimRight(before, " \t\r"))
			if !found {
				break
			}
			flush()
			line = after
		}
	}
	flush()
	return out
}

func rateList() string {
	var s []string
	for _, r := range intent.IBRates() {
		s = append(s, r.String())
	}
	return strings.Join(s, ", ")
}

// renderQoSPolicy renders qos-policy.conf: a DEFAULT level at the default
// class's SL, one level per declared partition (its SL, MTU, rate and
// P_Key) and a match rule per partition by P_Key, so path queries inside
// a partition get its SL. Syntax: linux-rdma/opensm
// doc/QoS_management_in_OpenSM.txt, "Full QoS Policy File".
func renderQoSPolicy(sm *intent.SubnetManager, fabric string) ([]byte, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "# opensm QoS policy for fabric %q, written by fabctl from the spec: edit the spec, not\n", fabric)
	b.WriteString("# this file (fabctl rewrites it whole and keeps the previous one as *.fabctl.bak).\n")
	b.WriteString("# Syntax: linux-rdma/opensm doc/QoS_management_in_OpenSM.txt, section 2 (full policy file).\n")
	b.WriteString("# mtu-limit and rate-limit are IBTA codes as in partitions.conf. SL2VL and VL arbitration are\n")
	b.WriteString("# in opensm.conf (qos_sl2vl, qos_vlarb_high, qos_vlarb_low).\n\n")
	b.WriteString("qos-levels\n")
	b.WriteString("\tqos-level\n\t\tname: DEFAULT\n\t\tuse: the default class\n")
	fmt.Fprintf(&b, "\t\tsl: %d\n\tend-qos-level\n", sm.DefaultSL)
	var rules []intent.Partition
	for _, p := range sm.Partitions {
		if p.Implicit {
			continue
		}
		rules = append(rules, p)
		fmt.Fprintf(&b, "\tqos-level\n\t\tname: %s\n\t\tuse: partition %s\n\t\tsl: %d\n", intent.QoSLevelName(p), p.Name, p.SL)
		if p.MTU > 0 {
			c, ok := intent.IBMTUCode(p.MTU)
			if !ok {
				return nil, fmt.Errorf("partition %q: mtu %d is not an IB MTU", p.Name, p.MTU)
			}
			fmt.Fprintf(&b, "\t\tmtu-limit: %d\n", c)
		}
		if p.Rate > 0 {
			c, ok := intent.IBRateCode(p.Rate)
			if !ok {
				return nil, fmt.Errorf("partition %q: rate %s is not an InfiniBand rate opensm can set (%s)", p.Name, p.Rate, rateList())
			}
			fmt.Fprintf(&b, "\t\trate-limit: %d\n", c)
		}
		fmt.Fprintf(&b, "\t\tpkey: %s\n\tend-qos-level\n", intent.PKeyString(p.PKey))
	}
	b.WriteString("end-qos-levels\n")
	if len(rules) > 0 {
		b.WriteString("\n# First match wins; a query matching no rule gets the DEFAULT level.\n")
		b.WriteString("qos-match-rules\n")
		for _, p := range rules {
			fmt.Fprintf(&b, "\tqos-match-rule\n\t\tuse: partition %s\n\t\tpkey: %s\n\t\tqos-level-name: %s\n\tend-qos-match-rule\n",
				p.Name, intent.PKeyString(p.PKey), intent.QoSLevelName(p))
		}
		b.WriteString("end-qos-match-rules\n")
	}
	return []byte(b.String()), nil
}

// openSMOptions are the opensm.conf options fabctl manages, in file
// order, with their desired values ("" when the spec leaves the option
// alone).
var openSMOptions = []string{"qos", "qos_max_vls", "qos_high_limit", "qos_sl2vl", "qos_vlarb_high", "qos_vlarb_low"}

// perTypeOverrides are the per-port-type variants of a generic QoS
// option. opensm uses a set variant instead of the generic option for
// that port type (opensm/osm_qos.c), so a leftover qos_ca_sl2vl would
// keep the CAs on an old map: fabctl unsets them ("(null)") for every
// generic option it sets.
func perTypeOverrides(opt string) []string {
	rest, ok := strings.CutPrefix(opt, "qos_")
	if !ok {
		return nil
	}
	out := make([]string, 0, 4)
	for _, ty := range []string{"ca", "rtr", "sw0", "swe"} {
		out = append(out, "qos_"+ty+"_"+rest)
	}
	return out
}

// managedOptions lists the options Read reports for a desired state: the
// generic options it sets and their per-type overrides.
func managedOptions(desired intent.State) []string {
	var out []string
	for _, o := range openSMOptions {
		if _, ok := desired[intent.PathOpenSM+o]; !ok {
			continue
		}
		out = append(out, o)
		if o != "qos" {
			out = append(out, perTypeOverrides(o)...)
		}
	}
	return out
}

// renderOpenSMLines renders the opensm.conf lines fabctl sets, as a file
// of its own: `fabctl render` shows them, and opensm reads such a file as
// a complete configuration (every other option at its default).
func renderOpenSMLines(desired intent.State, fabric string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# opensm.conf options fabctl sets for fabric %q; on the subnet manager only these lines\n", fabric)
	b.WriteString("# of /etc/opensm/opensm.conf change, the rest of the file is kept.\n")
	b.WriteString("# Syntax: opensm(8) QOS CONFIGURATION; linux-rdma/opensm doc/QoS_management_in_OpenSM.txt,\n")
	b.WriteString("# section 7: qos_sl2vl lists the VL of SL 0..15, qos_vlarb_* are VL:weight pairs, a weight\n")
	b.WriteString("# counts 64-byte credits.\n")
	for _, o := range openSMOptions {
		if v, ok := desired[intent.PathOpenSM+o]; ok {
			fmt.Fprintf(&b, "%s %s\n", o, v)
		}
	}
	return []byte(b.String())
}

// editOpenSMConf returns live opensm.conf text with fabctl's options set:
// each managed option's first active line gets the desired value (later
// duplicates are dropped, as opensm would let the last one win), a
// per-type override fabctl does not want becomes "(null)", and options
// the file lacks are appended. Every other line stays as it was.
func editOpenSMConf(live string, desired intent.State, fabric string) string {
	return editOpenSMConfKeeping(live, desired, fabric, nil)
}

// editOpenSMConfKeeping is editOpenSMConf that leaves the lines of the
// options leaves reports (the spec's unmanaged opensm/<option>: a
// per-port-type override the site sets) as the file has them.
func editOpenSMConfKeeping(live string, desired intent.State, fabric string, leaves func(string) (string, bool)) string {
	want := map[string]string{}
	for _, o := range managedOptions(desired) {
		if leaves != nil {
			if _, left := leaves(intent.PathOpenSM + o); left {
				continue
			}
		}
		if v, ok := desired[intent.PathOpenSM+o]; ok {
			want[o] = v
		} else {
			want[o] = "(null)"
		}
	}
	seen := map[string]bool{}
	var out []string
	lines := strings.SplitAfter(live, "\n")
	for _, l := range lines {
		if l == "" {
			continue
		}
		key, _, ok := optionLine(l)
		v, managed := want[key]
		if !ok || !managed {
			out = append(out, l)
			continue
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, key+" "+v+"\n")
	}
	var missing []string
	for _, o := range managedOptions(desired) {
		if _, ok := want[o]; ok && !seen[o] && want[o] != "(null)" {
			missing = append(missing, o)
		}
	}
	if len(missing) > 0 {
		if len(out) > 0 && !strings.HasSuffix(out[len(out)-1], "\n") {
			out[len(out)-1] += "\n"
		}
		if len(out) > 0 {
			out = append(out, "\n")
		}
		out = append(out, fmt.Sprintf("# InfiniBand QoS of fabric %q, set by fabctl from the spec\n", fabric))
		for _, o := range missing {
			out = append(out, o+" "+want[o]+"\n")
		}
	}
	return strings.Join(out, "")
}
