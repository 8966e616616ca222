package importer

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// The InfiniBand subnet manager's partitions and QoS, read back into the
// infiniband block. The opensm driver reads partitions.conf,
// qos-policy.conf and opensm.conf into normalised state (the paths of
// intent.SubnetManager.Flatten: drivers/sm/opensm parse.go, which cites
// opensm's own documentation for each format); import turns that state
// into the spec's partition blocks, the QoS attributes of the
// infiniband block and the default class's sl, and lists, path by path,
// what the spec language cannot say.

// SubnetManagerImport is what import read from the subnet manager and
// what it wrote of it.
type SubnetManagerImport struct {
	Device string `json:"device"` // sm.NAME
	// Partitions are the partitions opensm's partitions.conf defines.
	Partitions []PartitionImport `json:"partitions"`
	// QoS says whether opensm's QoS manager is on (opensm.conf qos TRUE).
	QoS bool `json:"qos"`
	// Written are the infiniband block's attributes and the class sl
	// import wrote besides the partitions: "sl2vl", "vl_arb_low",
	// `class "default" sl`.
	Written []string `json:"written"`
	// Untouched are settings read that the written spec neither says nor
	// manages: plan leaves them on the subnet manager as they are (a
	// per-port-type QoS option, a QoS policy while opensm's QoS is off).
	Untouched []LeftOut `json:"untouched,omitempty"`
}

// PartitionImport is one partition as read and written.
type PartitionImport struct {
	Name    string `json:"name"`
	PKey    string `json:"pkey"`    // base P_Key, "0x0001"; "auto" when the file gives none
	Members int    `json:"members"` // members in the file (GUIDs and keywords)
	Named   int    `json:"named"`   // of them written as the spec's members
	// Written is "partition" (a partition block), "implicit" (the
	// default partition fabctl writes without one) or "" (left out).
	Written string `json:"written"`
}

// pkeyText and guidText are the forms the opensm driver normalises a
// P_Key and a port GUID to (intent.PKeyString, parse.go memberID): a
// value in any other form is not written.
var (
	pkeyText = regexp.MustCompile(`^0x[0-7][0-9a-f]{3}$`)
	guidText = regexp.MustCompile(`^0x[0-9a-f]{16}$`)
)

// infinibandBlock is the spec's infiniband block type (not the platform
// of the same name).
const infinibandBlock = "infiniband"

// partitionLabel is what the opensm driver renders as a partition name
// (drivers/sm/opensm renderPartitions: opensm's parse_name_token and its
// 32-byte name buffer).
var partitionLabel = regexp.MustCompile(`^[A-Za-z0-9_.+-]{1,31}$`)

// smDoc is what import writes into the infiniband block.
type smDoc struct {
	addr       string
	partitions []ibPartition
	qos        bool // write the QoS attributes below
	sl2vl      []int
	vlHigh     []spec.VLWeight
	vlLow      []spec.VLWeight
	maxVLs     int
	highLimit  *int
	defaultSL  *int // written on the default class
	// wroteClass names the class block the DEFAULT level's sl was
	// written on ("" none).
	wroteClass string
	// why holds the reason for each path (or path prefix ending in "/")
	// the spec cannot say, for the report's left-out list.
	why map[string]string
	// live is the subnet manager's state as import read it.
	live intent.State
	// unmanaged are the paths import leaves as opensm runs them (the
	// infiniband block's unmanaged map), with their reasons.
	unmanaged map[string]string
	// checked is the state read for the written spec (smDiff), for a
	// desired state of fingerprint checkedFP.
	checked   intent.State
	checkedFP string
}

type ibPartition struct {
	name, pkey    string
	full, limited []string
	mtu, sl       int
	defaultMTU    bool // no mtu= in the file: written as mtu = 0
	rate          string
	ipoib         bool
}

// smLive groups a subnet manager's live state by file and partition.
type smLive struct {
	parts map[string]map[string]string // partition name -> attribute path below it -> value
	qos   map[string]string            // below qos-policy/
	opts  map[string]string            // opensm option -> value
	stray map[string]string            // partitions/unparsed/N and the like: path -> value
}

func splitSMLive(st intent.State) smLive {
	l := smLive{parts: map[string]map[string]string{}, qos: map[string]string{}, opts: map[string]string{}, stray: map[string]string{}}
	for k, v := range st {
		switch {
		case strings.HasPrefix(k, intent.PathPartitions):
			name, attr, ok := strings.Cut(strings.TrimPrefix(k, intent.PathPartitions), "/")
			if !ok || (name == "unparsed" && isNumber(attr)) {
				l.stray[k] = v
				continue
			}
			if l.parts[name] == nil {
				l.parts[name] = map[string]string{}
			}
			l.parts[name][attr] = v
		case strings.HasPrefix(k, intent.PathQoSPolicy):
			l.qos[strings.TrimPrefix(k, intent.PathQoSPolicy)] = v
		case strings.HasPrefix(k, intent.PathOpenSM):
			l.opts[strings.TrimPrefix(k, intent.PathOpenSM)] = v
		}
	}
	return l
}

func isNumber(s string) bool { _, err := strconv.Atoi(s); return err == nil }

// probeSM is the subnet manager's intent with every QoS setting fabctl
// manages present: the opensm driver reads the QoS policy and the
// opensm.conf options only for an intent that sets them (plan compares
// what the spec manages), so import reads them through this one.
func probeSM(sm *intent.SubnetManager) *intent.SubnetManager {
	p := *sm
	p.QoS = true
	p.SL2VL = make([]int, 16)
	p.VLArbHigh = []spec.VLWeight{{VL: 0, Weight: 1}}
	p.VLArbLow = []spec.VLWeight{{VL: 0, Weight: 1}}
	p.MaxVLs = 1
	zero := 0
	p.HighLimit = &zero
	return &p
}

// readSM reads the subnet manager for import: every partition, and the
// QoS policy and options whatever the inventory says of QoS.
func readSM(sm *intent.SubnetManager, o *Observed) intent.State {
	if o.Read != nil {
		if st, err := o.Read(probeSM(sm)); err == nil && st != nil {
			return st
		}
	}
	return o.Live
}

// newSMDoc turns the subnet manager's live state into what the spec
// writes, and the report's account of it.
func newSMDoc(inv *spec.Spec, sm *intent.SubnetManager, live intent.State) (*smDoc, *SubnetManagerImport) {
	d := &smDoc{addr: sm.Addr(), why: map[string]string{}, live: live, unmanaged: map[string]string{}}
	rep := &SubnetManagerImport{Device: sm.Addr(), Partitions: []PartitionImport{}, Written: []string{}}
	l := splitSMLive(live)
	rep.QoS = l.opts["qos"] == "TRUE"

	byGUID := map[string]string{}
	for _, h := range inv.Hosts {
		for _, n := range h.NICs {
			if n.GUID != "" {
				if _, dup := byGUID[n.GUID]; !dup {
					byGUID[n.GUID] = h.Name + ":" + n.Name
				}
			}
		}
	}
	for k := range l.stray {
		d.why[k] = "a partitions.conf statement opensm's syntax does not allow (doc/partition-config.txt): plan rewrites the file without it"
	}
	hasDefault := false
	for _, name := range slices.Sorted(maps.Keys(l.parts)) {
		attrs := l.parts[name]
		pre := intent.PathPartitions + name + "/"
		pr := PartitionImport{Name: name, PKey: attrs["pkey"]}
		for a := range attrs {
			if strings.HasPrefix(a, "member/") {
				pr.Members++
			}
		}
		if attrs["pkey"] == intent.PKeyString(intent.DefaultPKey) {
			hasDefault = true
		}
		switch {
		case attrs["pkey"] == "auto":
			d.why[pre] = "the partition has no P_Key (opensm generates one): the spec's partition needs pkey; give it one in partitions.conf or write the partition by hand"
			rep.Partitions = append(rep.Partitions, pr)
			continue
		case !pkeyText.MatchString(attrs["pkey"]) || attrs["pkey"] == "0x0000":
			d.why[pre] = fmt.Sprintf("P_Key %q is not a base P_Key 0x0001..0x7fff", attrs["pkey"])
			rep.Partitions = append(rep.Partitions, pr)
			continue
		case !partitionLabel.MatchString(name):
			d.why[pre] = fmt.Sprintf("partition name %q: fabctl writes partition names of 1-31 letters, digits, '_', '.', '+' or '-' (what opensm's parser takes)", name)
			rep.Partitions = append(rep.Partitions, pr)
			continue
		}
		if implicitDefault(inv, name, attrs) {
			pr.Written, pr.Named = "implicit", pr.Members
			rep.Partitions = append(rep.Partitions, pr)
			continue
		}
		p := ibPartition{name: name, pkey: attrs["pkey"], ipoib: attrs["ipoib"] == "true"}
		for _, a := range slices.Sorted(maps.Keys(attrs)) {
			v := attrs[a]
			switch {
			case a == "pkey", a == "ipoib":
			case a == "mtu":
				if n, err := strconv.Atoi(v); err == nil && slices.Contains([]int{256, 512, 1024, 2048, 4096}, n) {
					p.mtu = n
				} else {
					d.why[pre+a] = fmt.Sprintf("group MTU %s is not an IB MTU the spec can say (256..4096 bytes)", v)
				}
			case a == "rate":
				if _, err := spec.ParseBitRate(v); err == nil && !strings.HasPrefix(v, "code") {
					p.rate = v
				} else {
					d.why[pre+a] = fmt.Sprintf("group rate %s is not an IBTA rate the spec can say", v)
				}
			case a == "sl":
				n, err := strconv.Atoi(v)
				switch {
				case err != nil || n < 0 || n > 15:
					d.why[pre+a] = fmt.Sprintf("SL %s is not 0..15", v)
				case !rep.QoS:
					d.why[pre+a] = "opensm's QoS is off (opensm.conf qos FALSE), so opensm uses SL 0 for the partition; the spec turns QoS on for any SL other than 0: set it in the spec when QoS is meant to be on"
				default:
					p.sl = n
				}
			case strings.HasPrefix(a, "member/"):
				id := strings.TrimPrefix(a, "member/")
				ep, ok := "", false
				switch id {
				case "ALL", "SELF":
					ep, ok = id, true
				case "ALL_CAS", "ALL_SWITCHES", "ALL_ROUTERS":
					d.why[pre+a] = fmt.Sprintf("member %s: the spec's members are hosts, NICs, ALL and SELF; list the ports it means as members", id)
				default:
					ep, ok = byGUID[id]
					switch {
					case !guidText.MatchString(id):
						d.why[pre+a] = fmt.Sprintf("member %q is not a port GUID", id)
					case !ok:
						d.why[pre+a] = fmt.Sprintf("no NIC of the inventory has port GUID %s: declare the host and its nic's guid in the inventory to name it", id)
					}
				}
				if !ok {
					continue
				}
				switch v {
				case "full":
					p.full = append(p.full, ep)
				case "limited":
					p.limited = append(p.limited, ep)
				default:
					d.why[pre+a] = fmt.Sprintf("%s is a member with membership %q (both a full and a limited P_Key): the spec's members are full or limited", ep, v)
					continue
				}
				pr.Named++
			case strings.HasPrefix(a, "mgid/"):
				d.why[pre+a] = "a multicast group of the partition (mgid=...): the spec has no multicast groups"
			case strings.HasPrefix(a, "flag/"):
				d.why[pre+a] = fmt.Sprintf("partitions.conf flag %s: the spec's partition has no attribute for it", strings.TrimPrefix(a, "flag/"))
			default:
				d.why[pre+a] = "a partitions.conf setting the spec's partition has no attribute for"
			}
		}
		if _, ok := attrs["mtu"]; !ok {
			p.defaultMTU = true // mtu = 0: opensm's default group MTU
		}
		pr.Written = "partition"
		d.partitions = append(d.partitions, p)
		rep.Partitions = append(rep.Partitions, pr)
	}
	if !hasDefault {
		d.why[intent.PathPartitions+"Default/"] = "partitions.conf has no rule for the Default partition (0x7fff: opensm then makes every port but its own a limited member); the spec writes every port a full member unless it declares the partition"
	}

	// QoS: what opensm.conf and the policy say while QoS is on.
	typed := regexp.MustCompile(`^qos_(ca|rtr|sw0|swe)_`)
	for _, o := range slices.Sorted(maps.Keys(l.opts)) {
		v := l.opts[o]
		path := intent.PathOpenSM + o
		if typed.MatchString(o) {
			generic := "qos_" + typed.ReplaceAllString(o, "")
			d.why[path] = fmt.Sprintf("a per-port-type QoS option: the spec says %s for every port type, and fabctl unsets %s when it sets it", generic, o)
			continue
		}
		if !rep.QoS {
			if o != "qos" {
				rep.Untouched = append(rep.Untouched, LeftOut{Device: d.addr, Path: path, Live: v,
					Reason: "opensm's QoS is off (qos FALSE): the option has no effect, and the written spec does not turn QoS on"})
			}
			continue
		}
		switch o {
		case "qos":
		case "qos_sl2vl":
			if vls, ok := intList(v, 16, 0, 15); ok {
				d.sl2vl = vls
				rep.Written = append(rep.Written, "sl2vl")
			} else {
				d.why[path] = "qos_sl2vl is not 16 VLs 0..15: the spec's sl2vl maps every SL"
			}
		case "qos_vlarb_high", "qos_vlarb_low":
			attr := "vl_arb_high"
			if o == "qos_vlarb_low" {
				attr = "vl_arb_low"
			}
			if t, ok := vlArb(v); ok {
				if o == "qos_vlarb_high" {
					d.vlHigh = t
				} else {
					d.vlLow = t
				}
				rep.Written = append(rep.Written, attr)
			} else {
				d.why[path] = fmt.Sprintf("%s lists a VL twice or out of order, or a VL or weight out of range: the spec's %s maps each VL 0..14 to one weight 0..255", o, attr)
			}
		case "qos_max_vls":
			if n, err := strconv.Atoi(v); err == nil && (n == 1 || n == 2 || n == 4 || n == 8 || n == 15) {
				d.maxVLs = n
				rep.Written = append(rep.Written, "max_vls")
			} else {
				d.why[path] = fmt.Sprintf("qos_max_vls %s: the spec's max_vls is 1, 2, 4, 8 or 15 (IBA VLCap)", v)
			}
		case "qos_high_limit":
			if n, err := strconv.Atoi(v); err == nil && n >= 0 && n <= 255 {
				d.highLimit = &n
				rep.Written = append(rep.Written, "vl_high_limit")
			} else {
				d.why[path] = fmt.Sprintf("qos_high_limit %s is not 0..255", v)
			}
		}
	}
	d.qos = rep.QoS
	for _, k := range slices.Sorted(maps.Keys(l.qos)) {
		path := intent.PathQoSPolicy + k
		if !rep.QoS {
			rep.Untouched = append(rep.Untouched, LeftOut{Device: d.addr, Path: path, Live: l.qos[k],
				Reason: "opensm's QoS is off (qos FALSE): opensm does not use its QoS policy file, and the written spec does not turn QoS on"})
			continue
		}
		switch {
		case strings.HasPrefix(k, "section/"):
			d.why[path] = fmt.Sprintf("the QoS policy's %s section: the spec writes qos-levels and qos-match-rules only", strings.TrimPrefix(k, "section/"))
		case strings.HasPrefix(k, "unparsed/"):
			d.why[path] = "a QoS policy line opensm's syntax does not allow (doc/QoS_management_in_OpenSM.txt)"
		case k == "level/DEFAULT/sl":
			n, err := strconv.Atoi(l.qos[k])
			if err == nil && n >= 0 && n <= 15 {
				d.defaultSL = &n
			} else {
				d.why[path] = fmt.Sprintf("SL %q is not 0..15", l.qos[k])
			}
		case strings.HasPrefix(k, "level/DEFAULT/"):
			d.why[path] = "the DEFAULT QoS level: the spec gives it the default class's sl only"
		case strings.HasPrefix(k, "level/"):
			d.why[path] = "a QoS level: the spec writes one level per partition (partition-NAME: its sl, mtu, rate and P_Key) besides DEFAULT"
		case strings.HasPrefix(k, "match/"):
			d.why[path] = "a QoS match rule: the spec writes one rule per partition, by its P_Key, in partition order"
		}
	}
	return d, rep
}

// implicitDefault says whether a live partition is the one fabctl
// writes when the spec declares no 0x7fff partition: the spec then
// says it by saying nothing.
func implicitDefault(inv *spec.Spec, name string, attrs map[string]string) bool {
	if name != "Default" || attrs["pkey"] != intent.PKeyString(intent.DefaultPKey) || attrs["ipoib"] != "true" {
		return false
	}
	want := map[string]string{"pkey": attrs["pkey"], "ipoib": "true", "member/ALL": "full"}
	if inv.Fabric.RDMAMTU > 0 {
		want["mtu"] = strconv.Itoa(inv.Fabric.RDMAMTU)
	}
	return maps.Equal(want, attrs)
}

// intList parses "0,1,2" with n entries in [lo, hi].
func intList(s string, n, lo, hi int) ([]int, bool) {
	parts := strings.Split(s, ",")
	if len(parts) != n {
		return nil, false
	}
	out := make([]int, n)
	for i, p := range parts {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || v < lo || v > hi {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

// vlArb parses a VL arbitration table as the driver normalises it
// ("0:64,1:128") into the spec's map: each VL 0..14 once, ascending (the
// order the spec writes them), weights 0..255.
func vlArb(s string) ([]spec.VLWeight, bool) {
	var out []spec.VLWeight
	for _, e := range strings.Split(s, ",") {
		a, b, ok := strings.Cut(e, ":")
		vl, err1 := strconv.Atoi(a)
		w, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || vl < 0 || vl > 14 || w < 0 || w > 255 {
			return nil, false
		}
		if len(out) > 0 && out[len(out)-1].VL >= vl {
			return nil, false
		}
		out = append(out, spec.VLWeight{VL: vl, Weight: w})
	}
	return out, len(out) > 0
}

// reason is why the spec leaves a subnet manager path out: the reason
// recorded for it or for the longest prefix of it.
func (d *smDoc) reason(path string) string {
	if r, ok := d.why[path]; ok {
		return r
	}
	best := ""
	for k := range d.why {
		if strings.HasSuffix(k, "/") && strings.HasPrefix(path, k) && len(k) > len(best) {
			best = k
		}
	}
	if best != "" {
		return d.why[best]
	}
	switch {
	case strings.HasPrefix(path, intent.PathQoSPolicy+"level/partition-"):
		return "the partition's QoS level differs from what the spec's partition gives it (its sl, mtu, rate and P_Key)"
	case strings.HasPrefix(path, intent.PathFabric):
		return "a port of the fabric does not hold what opensm programs from the files"
	}
	return "the written spec still differs here (it depends on others the spec cannot say)"
}

// write rewrites the infiniband block's partitions and QoS
// attributes, and the default class's sl.
func (d *smDoc) write(body *hclwrite.Body, inv *spec.Spec) {
	var ib *hclwrite.Block
	for _, b := range body.Blocks() {
		if b.Type() == infinibandBlock {
			ib = b
			break
		}
	}
	if ib == nil {
		return
	}
	ib = opened(ib)
	ibb := ib.Body()
	for _, b := range ibb.Blocks() {
		if b.Type() == "partition" {
			ibb.RemoveBlock(b)
		}
	}
	for _, a := range []string{"sl2vl", "vl_arb_high", "vl_arb_low", "max_vls", "vl_high_limit", "unmanaged"} {
		ibb.RemoveAttribute(a)
	}
	if un := d.unmanagedVal(inv); len(un) > 0 {
		ibb.SetAttributeValue("unmanaged", strMapVal(un))
	}
	if d.qos {
		if d.sl2vl != nil {
			ibb.SetAttributeValue("sl2vl", intsVal(d.sl2vl))
		}
		if d.maxVLs > 0 {
			ibb.SetAttributeValue("max_vls", cty.NumberIntVal(int64(d.maxVLs)))
		}
		if d.highLimit != nil {
			ibb.SetAttributeValue("vl_high_limit", cty.NumberIntVal(int64(*d.highLimit)))
		}
		for _, t := range []struct {
			name string
			t    []spec.VLWeight
		}{{"vl_arb_high", d.vlHigh}, {"vl_arb_low", d.vlLow}} {
			if t.t == nil {
				continue
			}
			// VLs in number order, as opensm.conf lists them (a cty
			// object would sort "10" before "2").
			items := make([]hclwrite.ObjectAttrTokens, len(t.t))
			for i, w := range t.t {
				items[i] = hclwrite.ObjectAttrTokens{
					Name:  hclwrite.TokensForValue(cty.StringVal(strconv.Itoa(w.VL))),
					Value: hclwrite.TokensForValue(cty.NumberIntVal(int64(w.Weight))),
				}
			}
			ibb.SetAttributeRaw(t.name, hclwrite.TokensForObject(items))
		}
	}
	for _, p := range d.partitions {
		ibb.AppendNewline()
		pb := ibb.AppendNewBlock("partition", []string{p.name}).Body()
		pb.SetAttributeValue("pkey", cty.StringVal(p.pkey))
		if len(p.full) > 0 {
			pb.SetAttributeValue("members", stringsVal(p.full))
		}
		if len(p.limited) > 0 {
			pb.SetAttributeValue("limited_members", stringsVal(p.limited))
		}
		if p.mtu > 0 || p.defaultMTU {
			pb.SetAttributeValue("mtu", cty.NumberIntVal(int64(p.mtu)))
		}
		if p.rate != "" {
			pb.SetAttributeValue("rate", cty.StringVal(p.rate))
		}
		if p.sl != 0 {
			pb.SetAttributeValue("sl", cty.NumberIntVal(int64(p.sl)))
		}
		if p.ipoib {
			pb.SetAttributeValue("ipoib", cty.True)
		}
	}
	if d.qos && d.defaultSL != nil && *d.defaultSL != inventoryDefaultSL(inv) {
		if cb := defaultClassBlock(body); cb != nil {
			cb.Body().SetAttributeValue("sl", cty.NumberIntVal(int64(*d.defaultSL)))
			d.wroteClass = cb.Labels()[0]
		} else {
			d.why[intent.PathQoSPolicy+"level/DEFAULT/sl"] = "the DEFAULT QoS level's sl is the default class's sl: no class block with default = true to write it on"
		}
	}
}

// inventoryDefaultSL is the SL the inventory's default class gives the
// DEFAULT QoS level.
func inventoryDefaultSL(inv *spec.Spec) int {
	for _, c := range inv.Classes {
		if c.Default && c.SL != nil {
			return *c.SL
		}
	}
	return 0
}

// defaultClassBlock finds the class block that says default = true.
func defaultClassBlock(body *hclwrite.Body) *hclwrite.Block {
	for _, b := range body.Blocks() {
		if b.Type() != "class" || len(b.Labels()) != 1 {
			continue
		}
		if a := b.Body().GetAttribute("default"); a != nil && strings.TrimSpace(string(a.Expr().BuildTokens(nil).Bytes())) == "true" {
			return b
		}
	}
	return nil
}

func stringsVal(v []string) cty.Value {
	sort.Strings(v)
	el := make([]cty.Value, len(v))
	for i, s := range v {
		el[i] = cty.StringVal(s)
	}
	return cty.TupleVal(el)
}

// smResidual diffs the subnet manager under the written spec against
// its files as plan will: read through the written spec's intent (what
// it manages), without the fabric ports the driver could not judge. A
// setting import did not write that plan does not show either (the
// written spec does not manage it) goes to the report's untouched list.
func smResidual(cand *spec.Spec, d *smDoc, o *Observed, rep *SubnetManagerImport) []LeftOut {
	out := smDiff(cand, d, o)
	listed := map[string]bool{}
	for _, l := range out {
		listed[l.Path] = true
	}
	for _, u := range rep.Untouched {
		listed[u.Path] = true
	}
	for _, k := range slices.Sorted(maps.Keys(d.live)) {
		if listed[k] || strings.HasPrefix(k, intent.PathFabric) {
			continue
		}
		if r := d.reason(k); d.said(k) {
			rep.Untouched = append(rep.Untouched, LeftOut{Device: d.addr, Path: k, Live: d.live[k],
				Reason: r + " (the written spec does not manage it: plan leaves it as it is)"})
		}
	}
	return out
}

// said says whether import recorded why it did not write path.
func (d *smDoc) said(path string) bool {
	if _, ok := d.why[path]; ok {
		return true
	}
	for k := range d.why {
		if strings.HasSuffix(k, "/") && strings.HasPrefix(path, k) {
			return true
		}
	}
	return false
}

// unmanagedVal is the infiniband block's unmanaged map as written: the
// inventory's own entries and import's.
func (d *smDoc) unmanagedVal(inv *spec.Spec) map[string]string {
	out := map[string]string{}
	if inv.InfiniBand != nil {
		maps.Copy(out, inv.InfiniBand.Unmanaged)
	}
	maps.Copy(out, d.unmanaged)
	return out
}

// unmanage writes each subnet manager setting the written spec still
// changes into the infiniband block's unmanaged map with the reason
// import leaves it out (as unmanage does for a switch or host), so plan
// of the written spec lists it and opensm keeps it. A path that is no
// subnet manager setting the spec can name stays a change. It reports
// whether it wrote anything.
func (d *smDoc) unmanage(left []LeftOut) bool {
	wrote := false
	for _, l := range left {
		// The path comes from the subnet manager's files: a '*' in it
		// would be a glob in the spec, leaving more than the setting.
		if l.Unmanaged || strings.Contains(l.Path, "*") || spec.UnmanagedKeyProblem(infinibandBlock, l.Path) != "" {
			continue
		}
		key := d.unmanagedKey(l.Path)
		if _, ok := d.unmanaged[key]; ok {
			continue
		}
		d.unmanaged[key] = "imported: " + specReason(l.Reason, d.live[l.Path])
		wrote = true
	}
	return wrote
}

// unmanagedKey is the key that leaves path unmanaged: a partition
// import does not write is left whole ("partitions/NewPartition"), so
// the opensm driver can keep its statement as opensm has it; any other
// path is its own key.
func (d *smDoc) unmanagedKey(path string) string {
	rest, ok := strings.CutPrefix(path, intent.PathPartitions)
	if !ok {
		return path
	}
	name, _, ok := strings.Cut(rest, "/")
	if !ok || name == "unparsed" {
		return path
	}
	for _, p := range d.partitions {
		if p.name == name {
			return path
		}
	}
	if name == "Default" {
		return path // the default partition fabctl writes when the spec has none
	}
	return intent.PathPartitions + name
}

func smDiff(cand *spec.Spec, d *smDoc, o *Observed) []LeftOut {
	f := intent.Compile(cand)
	if len(f.SubnetManagers) == 0 {
		return nil
	}
	sm := f.SubnetManagers[0]
	live := o.Live
	desired := sm.Flatten()
	if o.Read != nil {
		// What the driver reads depends on the desired state only (not on
		// the unmanaged map): a spec that flattens the same is not read
		// again.
		fp := desired.Fingerprint()
		if d.checked == nil || d.checkedFP != fp {
			st, err := o.Read(sm)
			if err != nil {
				return []LeftOut{{Device: d.addr, Path: "*", Reason: "read again for the written spec: " + err.Error()}}
			}
			d.checked, d.checkedFP = st, fp
		}
		live = d.checked
	}
	var un map[string]string
	if o.Unexpressible != nil {
		un = o.Unexpressible(sm, desired)
	}
	var out []LeftOut
	for _, c := range intent.Diff(desired, live, o.Fields) {
		if _, skip := un[c.Path]; skip {
			continue
		}
		_, left := sm.Leaves(c.Path) // the spec leaves it as opensm runs it, as plan does
		out = append(out, LeftOut{Device: d.addr, Path: c.Path, Live: c.Before, Desired: c.After, Reason: d.reason(c.Path), Unmanaged: left})
	}
	return out
}
