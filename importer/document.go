package importer

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// value is one attribute value import writes.
type value struct {
	v    cty.Value
	path string // the state path it settles
	live string
}

func (v value) text() string { return strings.TrimSpace(string(hclwrite.TokensForValue(v.v).Bytes())) }

// document is the inventory's HCL, which import rewrites: the fabric
// block's settings and the classes from the fabric's choices, and the
// devices' overrides. Everything else (credentials with their env() and
// file() references, addresses, links, validate blocks, variables,
// comments) is kept as the inventory wrote it.
type document struct {
	src    []byte
	inv    *spec.Spec
	fabric *fabricChoice
	// sm is what import writes into the infiniband block (nil: the
	// block is kept as the inventory wrote it).
	sm *smDoc
	// literal holds the devices declared by a literal block
	// ("switch.leaf1"): the ones overrides can be written into.
	literal map[string]bool
}

func newDocument(files []spec.File, inv *spec.Spec) (*document, error) {
	var b bytes.Buffer
	names := make([]string, 0, len(files))
	for _, f := range files {
		if spec.IsOverrideFile(f.Name) {
			continue
		}
		names = append(names, f.Name)
		b.Write(f.Data)
		if len(f.Data) > 0 && f.Data[len(f.Data)-1] != '\n' {
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	// One hclwrite parse per render (a pod's spec is megabytes, and
	// hclwrite's parser is most of import's time): the syntax check here
	// is hclsyntax's, which the loader has passed already.
	return &document{src: b.Bytes(), inv: inv}, nil
}

// literalBlocks indexes the literal device blocks of a parsed document
// ("switch.leaf1"): a block with one label, neither for_each nor name,
// the first of its type and label.
func literalBlocks(body *hclwrite.Body) map[string]*hclwrite.Block {
	out := map[string]*hclwrite.Block{}
	seen := map[string]bool{}
	for _, b := range body.Blocks() {
		if (b.Type() != intent.KindSwitch && b.Type() != intent.KindHost) || len(b.Labels()) != 1 {
			continue
		}
		k := b.Type() + "." + b.Labels()[0]
		if seen[k] {
			continue
		}
		seen[k] = true
		if b.Body().GetAttribute("for_each") == nil && b.Body().GetAttribute("name") == nil {
			out[k] = b
		}
	}
	return out
}

// writable says whether the device's overrides can be written: its block
// is literal. Otherwise why not, with where the spec declares it.
func (doc *document) writable(kind, name string) (bool, string) {
	if doc.literal[kind+"."+name] {
		return true, ""
	}
	where := ""
	switch kind {
	case intent.KindSwitch:
		if sw := doc.inv.Switch(name); sw != nil {
			where = fmt.Sprintf(" at %s:%d", sw.Src.Block.Filename, sw.Src.Block.Start.Line)
		}
	case intent.KindHost:
		if h := doc.inv.Host(name); h != nil {
			where = fmt.Sprintf(" at %s:%d", h.Src.Block.Filename, h.Src.Block.Start.Line)
		}
	}
	return false, fmt.Sprintf("%s %q is declared with for_each%s: import writes no per-device override into it (write this one by hand, or declare the device on its own)", kind, name, where)
}

// subBlock finds or makes a nested block (`port "X"`, `nic "X"`,
// `buffer`). For a port on a switch that declares none yet, every port
// its links use is declared too: once a switch declares a port, links
// may only use declared ones.
func (doc *document) subBlock(dev *hclwrite.Block, devName, typ, label string) *hclwrite.Block {
	body := dev.Body()
	var labels []string
	if label != "" {
		labels = []string{label}
	}
	var have []string
	for _, b := range body.Blocks() {
		if b.Type() != typ {
			continue
		}
		if len(b.Labels()) == len(labels) && (label == "" || b.Labels()[0] == label) {
			return opened(b)
		}
		if len(b.Labels()) == 1 {
			have = append(have, b.Labels()[0])
		}
	}
	if typ == "port" && len(have) == 0 {
		if sw := doc.inv.Switch(devName); sw != nil {
			var made *hclwrite.Block
			for _, p := range sw.Ports {
				body.AppendNewline()
				nb := body.AppendNewBlock("port", []string{p.Name})
				if p.Name == label {
					made = nb
				}
			}
			if made != nil {
				return made
			}
		}
	}
	body.AppendNewline()
	return body.AppendNewBlock(typ, labels)
}

// opened makes a block written on one line as `nic "X" {}` take
// attributes: hclwrite would set them on the brace's line, which HCL
// reads as a single-line block that must close on that line.
func opened(b *hclwrite.Block) *hclwrite.Block {
	if len(b.Body().BuildTokens(nil)) == 0 {
		b.Body().AppendNewline()
	}
	return b
}

// subKey names a nested block in overrides.sub: "port\x00Ethernet0",
// "nic\x00ens1f0", "buffer".
func subKey(typ, label string) string {
	if label == "" {
		return typ
	}
	return typ + "\x00" + label
}

func splitSub(k string) (typ, label string) {
	typ, label, _ = strings.Cut(k, "\x00")
	return typ, label
}

// render writes the spec: the fabric block first, then the classes, then
// the rest of the inventory with the devices' overrides, formatted as
// fabctl fmt does.
func (doc *document) render(devs []*device) ([]byte, error) {
	f, diags := hclwrite.ParseConfig(doc.src, "inventory", hcl.InitialPos)
	if diags.HasErrors() || f == nil {
		return nil, diagError("the inventory", diags)
	}
	body := f.Body()
	lit := literalBlocks(body)
	if doc.literal == nil {
		doc.literal = map[string]bool{}
		for k := range lit {
			doc.literal[k] = true
		}
	}
	var fabric *hclwrite.Block
	for _, b := range body.Blocks() {
		if b.Type() == "fabric" && fabric == nil {
			fabric = b
		}
	}
	fc := doc.fabric
	if fabric != nil && fc != nil {
		fb := fabric.Body()
		if fc.trust != "" {
			fb.SetAttributeValue("trust", cty.StringVal(fc.trust))
		}
		if fc.mtu > 0 {
			fb.SetAttributeValue("mtu", cty.NumberIntVal(int64(fc.mtu)))
		}
		if fc.rdmaTos >= 0 {
			fb.SetAttributeValue("rdma_tos", cty.NumberIntVal(int64(fc.rdmaTos)))
		}
		if fc.watchdog != nil {
			for _, b := range fb.Blocks() {
				if b.Type() == "pfc_watchdog" {
					fb.RemoveBlock(b)
				}
			}
			wb := fb.AppendNewBlock("pfc_watchdog", nil).Body()
			if !fc.watchdog.enabled {
				wb.SetAttributeValue("enabled", cty.False)
			}
			for _, kv := range [][2]string{{"detect", fc.watchdog.detect}, {"restore", fc.watchdog.restore}, {"poll", fc.watchdog.poll}, {"action", fc.watchdog.action}} {
				if kv[1] != "" {
					wb.SetAttributeValue(kv[0], cty.StringVal(kv[1]))
				}
			}
		}
	}
	if fc != nil && fc.classes != nil {
		for _, b := range body.Blocks() {
			if b.Type() == "class" {
				body.RemoveBlock(b)
			}
		}
	}
	for _, d := range devs {
		writeOverrides(doc, lit[d.addr], d)
	}
	if doc.sm != nil {
		doc.sm.write(body, doc.inv)
	}
	// The classes go right after the fabric block (the inventory's own
	// order and comments stay around them).
	toks := body.BuildTokens(nil)
	at := len(toks)
	if fabric != nil {
		ft := fabric.BuildTokens(nil)
		if len(ft) > 0 {
			last := ft[len(ft)-1]
			for i, tk := range toks {
				if tk == last {
					at = i + 1
					break
				}
			}
		}
	}
	out := hclwrite.NewEmptyFile()
	ob := out.Body()
	ob.AppendUnstructuredTokens(toks[:at])
	if fc != nil && len(fc.classes) > 0 {
		ob.AppendNewline()
		for _, c := range fc.classes {
			ob.AppendNewline()
			ob.AppendBlock(classBlock(c))
		}
	}
	ob.AppendUnstructuredTokens(toks[at:])
	return hclwrite.Format(out.Bytes()), nil
}

func classBlock(c class) *hclwrite.Block {
	b := hclwrite.NewBlock("class", []string{c.name})
	body := b.Body()
	body.SetAttributeValue("role", cty.StringVal(c.role))
	body.SetAttributeValue("priority", cty.NumberIntVal(int64(c.prio)))
	if len(c.dscp) > 0 {
		body.SetAttributeValue("dscp", intsVal(c.dscp))
	}
	if c.def {
		body.SetAttributeValue("default", cty.True)
	}
	if c.lossless {
		body.SetAttributeValue("lossless", cty.True)
	}
	if c.strict {
		body.SetAttributeValue("strict", cty.True)
	} else {
		body.SetAttributeValue("bandwidth", cty.NumberIntVal(int64(c.bandwidth)))
	}
	if c.ecn != nil {
		body.AppendNewline()
		eb := body.AppendNewBlock("ecn", nil).Body()
		eb.SetAttributeValue("min", cty.StringVal(sizeText(c.ecn.min)))
		eb.SetAttributeValue("max", cty.StringVal(sizeText(c.ecn.max)))
		eb.SetAttributeValue("probability", cty.StringVal(c.ecn.prob+"%"))
	}
	return b
}

// sizeText writes a byte count in the spec's size syntax: decimal units
// where exact (150000 -> "150KB", as vendors state thresholds), bytes
// otherwise.
func sizeText(s string) string {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return s
	}
	switch {
	case n%1_000_000 == 0:
		return strconv.FormatInt(n/1_000_000, 10) + "MB"
	case n%100_000 == 0 && n >= 1_000_000:
		return strconv.FormatFloat(float64(n)/1e6, 'f', -1, 64) + "MB"
	case n%1000 == 0:
		return strconv.FormatInt(n/1000, 10) + "KB"
	}
	return strconv.FormatInt(n, 10) + "B"
}

func writeOverrides(doc *document, blk *hclwrite.Block, d *device) {
	o := d.ov
	if len(o.attrs) == 0 && len(o.sub) == 0 && len(o.dscp) == 0 && len(o.nicDSCP) == 0 && len(o.unmanaged) == 0 {
		return
	}
	if blk == nil {
		return // absorb never records overrides for such a device
	}
	opened(blk)
	for _, k := range slices.Sorted(maps.Keys(o.attrs)) {
		blk.Body().SetAttributeValue(k, o.attrs[k].v)
	}
	if len(o.dscp) > 0 {
		blk.Body().SetAttributeValue("dscp_map", intMapVal(o.dscp))
	}
	if len(o.unmanaged[""]) > 0 {
		blk.Body().SetAttributeValue("unmanaged", strMapVal(doc.unmanagedVal(d, "")))
	}
	subs := make([]string, 0, len(o.sub)+len(o.nicDSCP))
	for k := range o.sub {
		subs = append(subs, k)
	}
	for n := range o.nicDSCP {
		if _, ok := o.sub[subKey("nic", n)]; !ok {
			subs = append(subs, subKey("nic", n))
		}
	}
	for k, m := range o.unmanaged {
		if _, ok := o.sub[k]; !ok && k != "" && len(m) > 0 && !slices.Contains(subs, k) {
			subs = append(subs, k)
		}
	}
	sort.Strings(subs)
	for _, k := range subs {
		typ, label := splitSub(k)
		sb := doc.subBlock(blk, d.name, typ, label)
		for _, a := range slices.Sorted(maps.Keys(o.sub[k])) {
			sb.Body().SetAttributeValue(a, o.sub[k][a].v)
		}
		if typ == "nic" && len(o.nicDSCP[label]) > 0 {
			sb.Body().SetAttributeValue("dscp_map", intMapVal(o.nicDSCP[label]))
		}
		if len(o.unmanaged[k]) > 0 {
			sb.Body().SetAttributeValue("unmanaged", strMapVal(doc.unmanagedVal(d, k)))
		}
	}
}

// overrideList is the report's list of what was written on devices.
func (doc *document) overrideList(devs []*device) []Override {
	out := []Override{}
	for _, d := range devs {
		o := d.ov
		for _, k := range slices.Sorted(maps.Keys(o.attrs)) {
			v := o.attrs[k]
			out = append(out, Override{Device: d.addr, Attribute: k, Value: v.text(), Path: v.path, Live: v.live})
		}
		if len(o.dscp) > 0 {
			out = append(out, Override{Device: d.addr, Attribute: "dscp_map", Value: value{v: intMapVal(o.dscp)}.text(), Path: "dscp/*"})
		}
		subs := make([]string, 0, len(o.sub))
		for k := range o.sub {
			subs = append(subs, k)
		}
		sort.Strings(subs)
		for _, k := range subs {
			typ, label := splitSub(k)
			blk := typ
			if label != "" {
				blk = fmt.Sprintf("%s %q", typ, label)
			}
			for _, a := range slices.Sorted(maps.Keys(o.sub[k])) {
				v := o.sub[k][a]
				out = append(out, Override{Device: d.addr, Block: blk, Attribute: a, Value: v.text(), Path: v.path, Live: v.live})
			}
		}
		nics := slices.Sorted(maps.Keys(o.nicDSCP))
		for _, n := range nics {
			if len(o.nicDSCP[n]) > 0 {
				out = append(out, Override{Device: d.addr, Block: fmt.Sprintf("nic %q", n), Attribute: "dscp_map", Value: value{v: intMapVal(o.nicDSCP[n])}.text(), Path: "nic/" + n + "/dscp/*"})
			}
		}
	}
	return out
}

func intsVal(v []int) cty.Value {
	if len(v) == 0 {
		return cty.EmptyTupleVal
	}
	el := make([]cty.Value, len(v))
	for i, n := range v {
		el[i] = cty.NumberIntVal(int64(n))
	}
	return cty.TupleVal(el)
}

func intsHCL(v []int) string { return value{v: intsVal(v)}.text() }

func strMapVal(m map[string]string) cty.Value {
	obj := make(map[string]cty.Value, len(m))
	for k, v := range m {
		obj[k] = cty.StringVal(v)
	}
	return cty.ObjectVal(obj)
}

func intMapVal(m map[int]int) cty.Value {
	obj := make(map[string]cty.Value, len(m))
	for k, v := range m {
		obj[strconv.Itoa(k)] = cty.NumberIntVal(int64(v))
	}
	return cty.ObjectVal(obj)
}
