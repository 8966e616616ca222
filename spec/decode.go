package spec

import (
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/dynblock"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// dec decodes one block's attributes into Go values. Every getter records
// the attribute's range in src and appends a diagnostic naming that range
// when the value is wrong; a getter returns ok=false when the attribute is
// absent or invalid, so the caller keeps its default.
type dec struct {
	// schemaErrs is set when the body did not match its schema (an unknown
	// or misspelled attribute): "missing attribute" checks stay quiet then,
	// so a typo gets one error, with its did-you-mean.
	schemaErrs bool
	ctx        *hcl.EvalContext
	// The attributes: syn when the body was read straight from its
	// syntax tree (see bodyDec; a short list, searched by name faster
	// than a map is hashed), else attrs from Content.
	fast   bool
	syn    []*hclsyntax.Attribute
	synBuf [6]*hclsyntax.Attribute
	attrs  hcl.Attributes
	blocks hcl.Blocks
	src    Source
	diags  *hcl.Diagnostics
	what   what // "switch \"leaf1\"", for messages
}

// what names a block in messages. It is formatted only when a message
// needs it: a pod has ~110k blocks and almost never an error.
type what struct {
	format string
	args   [2]string
	n      int
}

func whatOf(s string) what { return what{format: s} }

func whatf(format string, args ...string) what {
	w := what{format: format, n: len(args)}
	copy(w.args[:], args)
	return w
}

func (w what) String() string {
	switch w.n {
	case 0:
		return w.format
	case 1:
		return fmt.Sprintf(w.format, w.args[0])
	}
	return fmt.Sprintf(w.format, w.args[0], w.args[1])
}

// attr returns an attribute's expression and name range.
func (d *dec) attr(name string) (hcl.Expression, hcl.Range, bool) {
	if d.fast {
		for _, a := range d.syn {
			if a.Name == name {
				return a.Expr, a.NameRange, true
			}
		}
		return nil, hcl.Range{}, false
	}
	if a, ok := d.attrs[name]; ok {
		return a.Expr, a.NameRange, true
	}
	return nil, hcl.Range{}, false
}

// bodyDec returns a decoder for body against schema, or nil when the body
// does not decode (the diagnostics are in l.diags; schemaErrs says whether
// there were any).
//
// Every body the loader decodes used to be seen through dynblock.Expand and
// its Content, which together allocate a dozen maps and wrappers per block
// (~250 MB and ~0.15 s per load of the benchmark pod). When a body straight from the
// native-syntax parser matches the schema exactly — every attribute and
// block type known, labels counted right, required attributes present, so
// no "dynamic" block either, as no schema has one — Content would return
// these very attributes and blocks without a diagnostic, so the decoder
// reads the syntax tree directly. Anything else goes the old way, with
// the same diagnostics.
func (l *loader) bodyDec(body hcl.Body, schema *hcl.BodySchema, ctx *hcl.EvalContext, block hcl.Range, w what) (d *dec, schemaErrs bool) {
	if sb, ok := body.(*hclsyntax.Body); ok {
		fd := l.newDec()
		*fd = dec{ctx: ctx, fast: true, diags: &l.diags, what: w}
		if fd.fromSyntax(sb, schema) {
			fd.src = Source{Block: block}
			if len(fd.syn) > 0 {
				fd.src.Attrs = make([]AttrRange, 0, len(fd.syn))
			}
			fd.blocks = hclBlocks(sb.Blocks, l.alloc)
			return fd, false
		}
		l.freeDec(fd)
		body = dynblock.Expand(sb, ctx)
	}
	c, diags := body.Content(schema)
	l.diags = append(l.diags, diags...)
	if c == nil {
		return nil, diags.HasErrors()
	}
	d = &dec{ctx: ctx, attrs: c.Attributes, blocks: c.Blocks, src: Source{Block: block}, diags: &l.diags, what: w}
	if len(c.Attributes) > 0 {
		d.src.Attrs = make([]AttrRange, 0, len(c.Attributes))
	}
	return d, diags.HasErrors()
}

// newDec and freeDec recycle decoders: the decoders of the blocks decoded
// most (link, nic, host) are handed back when their block is done, so a
// load allocates a few of them instead of one per block (~400k, 115 MB
// at 16,384 hosts). A freed decoder must not be used again.
func (l *loader) newDec() *dec {
	if n := len(l.decs); n > 0 {
		d := l.decs[n-1]
		l.decs = l.decs[:n-1]
		return d
	}
	return new(dec)
}

func (l *loader) freeDec(d *dec) {
	*d = dec{}
	l.decs = append(l.decs, d)
}

// hclBlocks is what AsHCLBlock gives for each block, in one allocation,
// or from a's slabs when a is not nil (the blocks then live as long as
// a's tree).
func hclBlocks(blocks hclsyntax.Blocks, a *fpAlloc) hcl.Blocks {
	if len(blocks) == 0 {
		return nil
	}
	var vals []hcl.Block
	var out hcl.Blocks
	if a != nil {
		vals, out = a.hclBlocks(len(blocks))
	} else {
		vals, out = make([]hcl.Block, len(blocks)), make(hcl.Blocks, len(blocks))
	}
	for i, b := range blocks {
		vals[i] = hcl.Block{
			Type:        b.Type,
			Labels:      b.Labels,
			Body:        b.Body,
			DefRange:    b.DefRange(),
			TypeRange:   b.TypeRange,
			LabelRanges: b.LabelRanges,
		}
		out[i] = &vals[i]
	}
	return out
}

// fromSyntax takes b's attributes into d.syn when Content(schema) on b
// would take every attribute and block without a diagnostic.
func (d *dec) fromSyntax(b *hclsyntax.Body, schema *hcl.BodySchema) bool {
	if len(b.Attributes) > len(schema.Attributes) {
		return false
	}
	d.syn = d.synBuf[:0]
Attrs:
	for name, a := range b.Attributes {
		for i := range schema.Attributes {
			if schema.Attributes[i].Name == name {
				d.syn = append(d.syn, a)
				continue Attrs
			}
		}
		return false
	}
	for i := range schema.Attributes {
		if schema.Attributes[i].Required {
			if _, ok := b.Attributes[schema.Attributes[i].Name]; !ok {
				return false
			}
		}
	}
Blocks:
	for _, blk := range b.Blocks {
		for _, bs := range schema.Blocks {
			if bs.Type == blk.Type {
				if len(blk.Labels) != len(bs.LabelNames) {
					return false
				}
				continue Blocks
			}
		}
		return false
	}
	return true
}

func (d *dec) errf(rng hcl.Range, summary, format string, args ...any) {
	r := rng
	*d.diags = append(*d.diags, &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   fmt.Sprintf(format, args...),
		Subject:  &r,
	})
}

// value evaluates the attribute and converts it to ty.
func (d *dec) value(name string, ty cty.Type) (cty.Value, hcl.Range, bool) {
	expr, _, ok := d.attr(name)
	if !ok {
		return cty.NilVal, hcl.Range{}, false
	}
	rng := expr.Range()
	d.src.set(name, rng)
	// A literal of the wanted type (mtu = 9000, lossless = true) is what
	// the evaluation and conversion below would return as it is.
	if lit, ok := expr.(*hclsyntax.LiteralValueExpr); ok && lit.Val.IsKnown() && !lit.Val.IsNull() && !lit.Val.IsMarked() &&
		(ty == cty.DynamicPseudoType || lit.Val.Type().Equals(ty)) && lit.Val.Type().IsPrimitiveType() {
		return lit.Val, rng, true
	}
	v, diags := expr.Value(d.ctx)
	*d.diags = append(*d.diags, diags...)
	if diags.HasErrors() {
		return cty.NilVal, rng, false
	}
	if v.IsMarked() || v.ContainsMarked() {
		if ty == cty.String && v.HasMark(secretMark{}) {
			// secret() handles these; reaching here means a secret in a plain attribute.
		}
		d.errf(rng, "Secret reference not allowed here",
			"%s: env() and file() make secret references, which only credentials blocks accept (password, private_key, passphrase, enable_password, token). Attribute %q takes a plain value.", d.what, name)
		return cty.NilVal, rng, false
	}
	if v.IsNull() {
		d.src.unset(name) // null means "not set": the default applies
		return cty.NilVal, rng, false
	}
	if !v.IsWhollyKnown() {
		d.errf(rng, "Value not known", "%s: attribute %q depends on a value fabctl cannot know while loading the spec.", d.what, name)
		return cty.NilVal, rng, false
	}
	if ty == cty.DynamicPseudoType {
		return v, rng, true
	}
	cv, err := convert.Convert(v, ty)
	if err != nil {
		d.errf(rng, "Incorrect attribute value type", "%s: attribute %q must be %s: %s.", d.what, name, ty.FriendlyName(), err)
		return cty.NilVal, rng, false
	}
	return cv, rng, true
}

// literalString returns the string of an expression that is a plain
// string literal ("leaf1:Ethernet0"), skipping evaluation and conversion:
// generated specs have hundreds of thousands of them.
func literalString(e hcl.Expression) (string, bool) {
	t, ok := e.(*hclsyntax.TemplateExpr)
	if !ok || len(t.Parts) != 1 {
		return "", false
	}
	lit, ok := t.Parts[0].(*hclsyntax.LiteralValueExpr)
	if !ok || lit.Val.Type() != cty.String || lit.Val.IsNull() {
		return "", false
	}
	return lit.Val.AsString(), true
}

// fastString reads a literal string attribute without evaluating it.
func (d *dec) fastString(name string) (string, bool) {
	expr, _, ok := d.attr(name)
	if !ok {
		return "", false
	}
	s, ok := literalString(expr)
	if ok {
		d.src.set(name, expr.Range())
	}
	return s, ok
}

func (d *dec) str(name string, def string) string {
	if s, ok := d.fastString(name); ok {
		return s
	}
	v, _, ok := d.value(name, cty.String)
	if !ok {
		return def
	}
	return v.AsString()
}

// enum reads a string that must be one of allowed.
func (d *dec) enum(name, def string, allowed ...string) string {
	s, ok := d.fastString(name)
	rng := d.src.Attr(name)
	if !ok {
		var v cty.Value
		v, rng, ok = d.value(name, cty.String)
		if !ok {
			return def
		}
		s = v.AsString()
	}
	for _, a := range allowed {
		if s == a {
			return s
		}
	}
	detail := fmt.Sprintf("%s: %q is not a valid %s; valid values: %s.", d.what, s, name, strings.Join(quoteAll(allowed), ", "))
	if sug := suggest(s, allowed); sug != "" {
		detail += fmt.Sprintf(" Did you mean %q?", sug)
	}
	d.errf(rng, "Invalid value for "+name, "%s", detail)
	return def
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = strconv.Quote(v)
	}
	return out
}

func (d *dec) boolean(name string, def bool) bool {
	v, _, ok := d.value(name, cty.Bool)
	if !ok {
		return def
	}
	return v.True()
}

func (d *dec) optBool(name string) *bool {
	v, _, ok := d.value(name, cty.Bool)
	if !ok {
		return nil
	}
	b := v.True()
	return &b
}

func toInt(v cty.Value) (int, bool) {
	bf := v.AsBigFloat()
	if !bf.IsInt() {
		return 0, false
	}
	i, acc := bf.Int64()
	if acc != big.Exact || i > math.MaxInt32 || i < math.MinInt32 {
		return 0, false
	}
	return int(i), true
}

// integer reads a whole number within [lo, hi].
func (d *dec) integer(name string, def, lo, hi int) int {
	v, ok := d.optInt(name, lo, hi)
	if !ok {
		return def
	}
	return v
}

func (d *dec) optInt(name string, lo, hi int) (int, bool) {
	v, rng, ok := d.value(name, cty.Number)
	if !ok {
		return 0, false
	}
	i, whole := toInt(v)
	if !whole {
		d.errf(rng, "Invalid value for "+name, "%s: %s must be a whole number.", d.what, name)
		return 0, false
	}
	if i < lo || i > hi {
		d.errf(rng, "Value out of range", "%s: %s = %d is outside %d..%d.", d.what, name, i, lo, hi)
		return 0, false
	}
	return i, true
}

// unitString reads an attribute that may be a string with a unit, or a
// bare number when bareOK.
func (d *dec) unitString(name string, bareOK bool) (string, hcl.Range, bool) {
	if s, ok := d.fastString(name); ok {
		return s, d.src.Attr(name), true
	}
	v, rng, ok := d.value(name, cty.DynamicPseudoType)
	if !ok {
		return "", rng, false
	}
	switch {
	case v.Type() == cty.String:
		return v.AsString(), rng, true
	case v.Type() == cty.Number && bareOK:
		return v.AsBigFloat().Text('f', -1), rng, true
	case v.Type() == cty.Number:
		d.errf(rng, "Missing unit", "%s: %s needs a unit as a string, e.g. %s.", d.what, name, unitExample(name))
	default:
		d.errf(rng, "Incorrect attribute value type", "%s: %s must be a string with a unit, e.g. %s.", d.what, name, unitExample(name))
	}
	return "", rng, false
}

func unitExample(name string) string {
	switch {
	case strings.Contains(name, "speed") || strings.Contains(name, "rate") || strings.Contains(name, "bandwidth"):
		return `"400G"`
	case strings.Contains(name, "length") || name == "cable":
		return `"3m"`
	}
	return `"200ms"`
}

func (d *dec) bytes(name string) (Bytes, bool) {
	s, rng, ok := d.unitString(name, true)
	if !ok {
		return 0, false
	}
	b, err := ParseBytes(s)
	if err != nil {
		d.errf(rng, "Invalid size", "%s: %s: %s.", d.what, name, err)
		return 0, false
	}
	return b, true
}

func (d *dec) rate(name string) (BitRate, bool) {
	s, rng, ok := d.unitString(name, false)
	if !ok {
		return 0, false
	}
	r, err := ParseBitRate(s)
	if err != nil {
		d.errf(rng, "Invalid speed", "%s: %s: %s.", d.what, name, err)
		return 0, false
	}
	return r, true
}

func (d *dec) length(name string) (Length, bool) {
	s, rng, ok := d.unitString(name, false)
	if !ok {
		return 0, false
	}
	l, err := ParseLength(s)
	if err != nil {
		d.errf(rng, "Invalid length", "%s: %s: %s.", d.what, name, err)
		return 0, false
	}
	return l, true
}

func (d *dec) duration(name string, def time.Duration) time.Duration {
	s, rng, ok := d.unitString(name, false)
	if !ok {
		return def
	}
	v, err := ParseDuration(s)
	if err != nil {
		d.errf(rng, "Invalid duration", "%s: %s: %s.", d.what, name, err)
		return def
	}
	return v
}

func (d *dec) strList(name string) ([]string, bool) {
	if expr, _, ok := d.attr(name); ok {
		if tup, ok := expr.(*hclsyntax.TupleConsExpr); ok {
			out := make([]string, 0, len(tup.Exprs))
			for _, e := range tup.Exprs {
				s, ok := literalString(e)
				if !ok {
					out = nil
					break
				}
				out = append(out, s)
			}
			if out != nil {
				d.src.set(name, expr.Range())
				return out, true
			}
		}
	}
	v, _, ok := d.value(name, listOfString)
	if !ok {
		return nil, false
	}
	out := []string{}
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		if e.IsNull() {
			continue
		}
		out = append(out, e.AsString())
	}
	return out, true
}

// intSet reads a list whose elements are numbers or range strings
// ("24-31", "0,8"), each within [lo, hi]; the result is sorted and unique.
func (d *dec) intSet(name string, lo, hi int) ([]int, bool) {
	v, rng, ok := d.value(name, cty.DynamicPseudoType)
	if !ok {
		return nil, false
	}
	var elems []cty.Value
	switch {
	case v.Type().IsListType() || v.Type().IsTupleType() || v.Type().IsSetType():
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			elems = append(elems, e)
		}
	default:
		elems = []cty.Value{v}
	}
	out := []int{}
	for _, e := range elems {
		switch e.Type() {
		case cty.Number:
			i, whole := toInt(e)
			if !whole || i < lo || i > hi {
				d.errf(rng, "Value out of range", "%s: %s element %s must be a whole number in %d..%d.", d.what, name, e.AsBigFloat().Text('f', -1), lo, hi)
				return nil, false
			}
			out = append(out, i)
		case cty.String:
			vals, err := ParseIntRanges(e.AsString(), lo, hi)
			if err != nil {
				d.errf(rng, "Invalid value for "+name, "%s: %s: %s.", d.what, name, err)
				return nil, false
			}
			out = append(out, vals...)
		default:
			d.errf(rng, "Incorrect attribute value type", "%s: %s must be a list of numbers or range strings such as [\"24-31\", 48].", d.what, name)
			return nil, false
		}
	}
	return uniqueSorted(out), true
}

// The collection types strMap, intMap and strList convert to, made once:
// cty.Map and cty.List allocate a type on each call, and every link, NIC
// and host asks (lint_ignore, dscp_map, endpoints, addresses) whether or
// not the attribute is set.
var (
	mapOfString  = cty.Map(cty.String)
	mapOfNumber  = cty.Map(cty.Number)
	listOfString = cty.List(cty.String)
)

func (d *dec) strMap(name string) (map[string]string, bool) {
	v, _, ok := d.value(name, mapOfString)
	if !ok {
		return nil, false
	}
	out := map[string]string{}
	for it := v.ElementIterator(); it.Next(); {
		k, e := it.Element()
		if e.IsNull() {
			continue
		}
		out[k.AsString()] = e.AsString()
	}
	return out, true
}

// intMap reads a map of integers keyed by integers, both within bounds.
func (d *dec) intMap(name string, klo, khi, vlo, vhi int) (map[int]int, bool) {
	v, rng, ok := d.value(name, mapOfNumber)
	if !ok {
		return nil, false
	}
	out := map[int]int{}
	for it := v.ElementIterator(); it.Next(); {
		k, e := it.Element()
		ki, err := strconv.Atoi(k.AsString())
		if err != nil || ki < klo || ki > khi {
			d.errf(rng, "Invalid key", "%s: %s key %q must be a whole number in %d..%d.", d.what, name, k.AsString(), klo, khi)
			return nil, false
		}
		vi, whole := toInt(e)
		if !whole || vi < vlo || vi > vhi {
			d.errf(rng, "Value out of range", "%s: %s[%q] must be a whole number in %d..%d.", d.what, name, k.AsString(), vlo, vhi)
			return nil, false
		}
		out[ki] = vi
	}
	return out, true
}

// secret reads a credentials attribute, which must be env("X") or file("p").
func (d *dec) secret(name string) *SecretRef {
	expr, _, ok := d.attr(name)
	if !ok {
		return nil
	}
	rng := expr.Range()
	d.src.set(name, rng)
	v, diags := expr.Value(d.ctx)
	*d.diags = append(*d.diags, diags...)
	if diags.HasErrors() || v.IsNull() {
		return nil
	}
	if !v.HasMark(secretMark{}) || v.Type() != cty.String {
		*d.diags = append(*d.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Secret must be a reference",
			Detail: fmt.Sprintf("%s: %s must not be written into the spec. Reference it instead: %s = env(\"FABRIC_PASSWORD\") reads an environment variable, %s = file(\"/run/secrets/fabric\") reads a file, both at run time. fabctl never prints the value.",
				d.what, name, name, name),
			Subject: &rng,
			Extra:   &DiagInfo{Secret: true},
		})
		return nil
	}
	raw, _ := v.Unmark()
	kind, ref, _ := strings.Cut(raw.AsString(), "\x00")
	return &SecretRef{Kind: kind, Name: ref, Src: rng}
}

// ignores reads lint_ignore = { "RULE-ID" = "reason" }.
func (d *dec) ignores() LintIgnores {
	m, ok := d.strMap("lint_ignore")
	if !ok {
		return nil
	}
	rng := d.src.Attr("lint_ignore")
	out := LintIgnores{}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if strings.TrimSpace(m[k]) == "" {
			d.errf(rng, "Lint ignore needs a reason", "%s: lint_ignore[%q] is empty. Say why the rule does not apply here, e.g. lint_ignore = { %q = \"frontend port, no RDMA\" }.", d.what, k, k)
			continue
		}
		out[strings.ToUpper(k)] = m[k]
	}
	return out
}

// acceptances reads accept_not_in_effect = { "<setting>" = "reason" }
// (Acceptances): every key a setting path, every reason said.
func (d *dec) acceptances() Acceptances {
	return d.reasons("accept_not_in_effect", "", func(k string) string {
		return fmt.Sprintf("Say why the setting may stay out of effect here, e.g. accept_not_in_effect = { %q = \"veth: no DCB; soft-RoCE test host\" }.", k)
	})
}

// unmanaged reads unmanaged = { "<setting>" = "reason" } on a block of
// kind switch, host or nic: every key a setting such a block has
// (settingKeyProblem), every reason said, no key also accepted not in
// effect (read first: accept).
func (d *dec) unmanaged(kind string, accept Acceptances) Acceptances {
	out := d.reasons(unmanagedAttr, kind, func(k string) string {
		return fmt.Sprintf("Say why fabctl leaves the setting as the device runs it, e.g. unmanaged = { %q = \"set by the storage team's QoS profile\" }.", k)
	})
	for _, k := range bothWays(out, accept) {
		d.errf(d.src.Attr(unmanagedAttr), "Setting both unmanaged and accepted", "%s", bothWaysDetail(d.what.String(), k))
		delete(out, k)
	}
	return out
}

// reasons reads a map of setting path -> reason (accept_not_in_effect,
// unmanaged); kind "" checks keys as paths only, else as settings a
// block of that kind has.
func (d *dec) reasons(name, kind string, example func(key string) string) Acceptances {
	m, ok := d.strMap(name)
	if !ok {
		return nil
	}
	rng := d.src.Attr(name)
	out := Acceptances{}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		why := validAcceptKey(k)
		if kind != "" {
			why = settingKeyProblem(kind, k)
		}
		if why != "" {
			d.errf(rng, "Invalid setting in "+name, "%s: %s key %q %s. Name settings as the plan prints them, e.g. %s = { \"pfc\" = \"<reason>\" }, or \"*\" for every setting of the block.", d.what, name, k, why, name)
			continue
		}
		if strings.TrimSpace(m[k]) == "" {
			summary := "Acceptance needs a reason"
			if kind != "" {
				summary = "Unmanaged setting needs a reason"
			}
			d.errf(rng, summary, "%s: %s[%q] is empty. %s", d.what, name, k, example(k))
			continue
		}
		out[k] = m[k]
	}
	return out
}
