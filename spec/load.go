package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/dynblock"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/zclconf/go-cty/cty"
)

// File is one spec source: a name (used in diagnostics) and its bytes.
type File struct {
	Name string
	Data []byte
}

// LoadOptions are the inputs to a spec besides its files.
type LoadOptions struct {
	// Vars are -var assignments, "name=value".
	Vars []string
	// VarFiles are -var-file paths (HCL files of name = value lines).
	VarFiles []string
	// Env is the process environment ("K=V"); FAB_VAR_<name> sets variables.
	Env []string
}

// SpecSuffixes are the file endings a spec directory is read for.
var SpecSuffixes = []string{".fab.hcl", ".fab.hcl.json"}

// IsSpecFile reports whether name is a spec file by its ending.
func IsSpecFile(name string) bool {
	for _, s := range SpecSuffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// ReadFiles reads a spec path: a single file, or every *.fab.hcl and
// *.fab.hcl.json file directly in a directory, in name order.
func ReadFiles(path string) ([]File, hcl.Diagnostics) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Cannot read spec",
			Detail:   fmt.Sprintf("%s. Give a spec file or a directory of *.fab.hcl files.", err),
		}}
	}
	var names []string
	if st.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read spec directory", Detail: err.Error()}}
		}
		for _, e := range entries {
			if !e.IsDir() && IsSpecFile(e.Name()) {
				names = append(names, filepath.Join(path, e.Name()))
			}
		}
		if len(names) == 0 {
			return nil, hcl.Diagnostics{{
				Severity: hcl.DiagError,
				Summary:  "No spec files",
				Detail:   fmt.Sprintf("Directory %s has no *.fab.hcl or *.fab.hcl.json files.", path),
			}}
		}
	} else {
		names = []string{path}
	}
	sort.Strings(names)
	files := make([]File, 0, len(names))
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read spec file", Detail: err.Error()}}
		}
		files = append(files, File{Name: n, Data: b})
	}
	return files, nil
}

// Load reads and decodes the spec at path (file or directory).
func Load(path string, opts LoadOptions) (*Spec, hcl.Diagnostics) {
	files, diags := ReadFiles(path)
	if diags.HasErrors() {
		return nil, diags
	}
	return LoadFiles(files, opts)
}

// LoadFiles decodes a spec from in-memory files. The returned Spec is
// non-nil whenever the files parsed (it carries the files for diagnostic
// snippets) but must not be used when diagnostics hold errors.
func LoadFiles(files []File, opts LoadOptions) (*Spec, hcl.Diagnostics) {
	p := hclparse.NewParser()
	var diags hcl.Diagnostics
	var parsed []*hcl.File
	fileMap := map[string]*hcl.File{}
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%d:%s\n%d:", len(f.Name), f.Name, len(f.Data))
		h.Write(f.Data)
		var hf *hcl.File
		var d hcl.Diagnostics
		if strings.HasSuffix(f.Name, ".json") {
			hf, d = p.ParseJSON(f.Data, f.Name)
		} else {
			hf, d = parseNative(f.Data, f.Name)
		}
		diags = append(diags, d...)
		if hf != nil {
			parsed = append(parsed, hf)
			fileMap[f.Name] = hf
		}
	}
	s := &Spec{Files: fileMap, SourceHash: hex.EncodeToString(h.Sum(nil))}
	if diags.HasErrors() {
		return s, diags
	}
	l := &loader{spec: s, opts: opts}
	l.load(hcl.MergeFiles(parsed))
	diags = append(diags, l.diags...)
	// The model keeps ranges, not syntax: let large files' trees go, and
	// keep their bytes for diagnostic snippets.
	for name, f := range fileMap {
		if len(f.Bytes) >= chunkMinFile {
			fileMap[name] = &hcl.File{Body: hcl.EmptyBody(), Bytes: f.Bytes, Nav: lineNav(f.Bytes)}
		}
	}
	return s, diags
}

// loader holds the state of one decode.
type loader struct {
	spec  *Spec
	opts  LoadOptions
	diags hcl.Diagnostics
	base  *hcl.EvalContext
}

var topSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
	{Type: "variable", LabelNames: []string{"name"}},
	{Type: "locals"},
	{Type: "fabric", LabelNames: []string{"name"}},
	{Type: "class", LabelNames: []string{"name"}},
	{Type: "switch", LabelNames: []string{"name"}},
	{Type: "host", LabelNames: []string{"name"}},
	{Type: "link"},
	{Type: "credentials", LabelNames: []string{"name"}},
	{Type: "validate", LabelNames: []string{"name"}},
	{Type: "infiniband"},
}}

func (l *loader) errf(rng *hcl.Range, summary, format string, args ...any) {
	l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(format, args...), Subject: rng})
}

func (l *loader) load(body hcl.Body) {
	content, diags := body.Content(topSchema)
	l.diags = append(l.diags, diags...)
	if content == nil {
		return
	}
	byType := map[string][]*hcl.Block{}
	for _, b := range content.Blocks {
		byType[b.Type] = append(byType[b.Type], b)
	}

	vars := l.variables(byType["variable"])
	l.base = &hcl.EvalContext{
		Variables: map[string]cty.Value{"var": vars},
		Functions: Functions(),
	}
	l.base.Variables["local"] = l.locals(byType["locals"])
	if l.diags.HasErrors() {
		// Wrong variables or locals would cascade into every block.
		return
	}

	fabrics := byType["fabric"]
	switch len(fabrics) {
	case 0:
		l.errf(&hcl.Range{Filename: firstFile(l.spec), Start: hcl.InitialPos, End: hcl.InitialPos}, "Missing fabric block",
			"A spec needs one fabric block, e.g.\n  fabric \"pod1\" {\n    transport = \"rocev2\"\n  }")
		return
	case 1:
	default:
		for _, b := range fabrics[1:] {
			l.errf(b.DefRange.Ptr(), "Duplicate fabric block", "A spec has exactly one fabric block; the first is at %s.", fabrics[0].DefRange)
		}
	}
	l.spec.Fabric = l.fabric(fabrics[0])
	if l.spec.Fabric == nil {
		return
	}

	for _, b := range byType["credentials"] {
		for _, in := range l.instances(b) {
			if c := l.credentials(in); c != nil {
				l.spec.Credentials = append(l.spec.Credentials, c)
			}
		}
	}
	for _, b := range byType["class"] {
		for _, in := range l.instances(b) {
			if c := l.class(in); c != nil {
				l.spec.Classes = append(l.spec.Classes, c)
			}
		}
	}
	for _, b := range byType["switch"] {
		for _, in := range l.instances(b) {
			if sw := l.switchBlock(in); sw != nil {
				l.spec.Switches = append(l.spec.Switches, sw)
			}
		}
	}
	for _, b := range byType["host"] {
		for _, in := range l.instances(b) {
			if h := l.host(in); h != nil {
				l.spec.Hosts = append(l.spec.Hosts, h)
			}
		}
	}
	for _, b := range byType["link"] {
		for _, in := range l.instances(b) {
			if lk := l.link(in); lk != nil {
				l.spec.Links = append(l.spec.Links, lk)
			}
		}
	}
	for _, b := range byType["validate"] {
		for _, in := range l.instances(b) {
			if v := l.validation(in); v != nil {
				l.spec.Validations = append(l.spec.Validations, v)
			}
		}
	}
	ibs := byType["infiniband"]
	if len(ibs) > 0 {
		for _, b := range ibs[1:] {
			l.errf(b.DefRange.Ptr(), "Duplicate infiniband block", "A spec has at most one infiniband block; the first is at %s.", ibs[0].DefRange)
		}
		l.spec.InfiniBand = l.infiniband(ibs[0])
	}
	l.resolve()
}

func firstFile(s *Spec) string {
	names := make([]string, 0, len(s.Files))
	for n := range s.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return ""
	}
	return names[0]
}

// instance is one expansion of a top-level block: the block itself, or one
// element of its for_each.
type instance struct {
	block *hcl.Block
	name  string // label, or the name attribute / label-key under for_each
	key   string // for_each key ("" without for_each)
	ctx   *hcl.EvalContext
	body  hcl.Body // with dynamic blocks expanded
}

// single is the instance of a block that may appear once and has no
// for_each (fabric, infiniband); dynamic blocks inside it are expanded.
func (l *loader) single(b *hcl.Block, name string) instance {
	partial, _, _ := b.Body.PartialContent(forEachSchema)
	if fe, ok := partial.Attributes["for_each"]; ok {
		l.errf(fe.NameRange.Ptr(), "for_each not allowed here", "A %s block describes the whole fabric and cannot be repeated with for_each.", b.Type)
	}
	return instance{block: b, name: name, ctx: l.base, body: dynblock.Expand(b.Body, l.base)}
}

var forEachSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "for_each"}}}

// instances expands for_each on a top-level block. Map and object keys,
// set elements (strings) and list indexes become each.key; the element is
// each.value. The instance name is the block's name attribute when set,
// else "<label>-<key>".
func (l *loader) instances(b *hcl.Block) []instance {
	label := ""
	if len(b.Labels) > 0 {
		label = b.Labels[0]
	}
	partial, _, diags := b.Body.PartialContent(forEachSchema)
	l.diags = append(l.diags, diags...)
	fe, has := partial.Attributes["for_each"]
	if !has {
		return []instance{{block: b, name: label, ctx: l.base, body: dynblock.Expand(b.Body, l.base)}}
	}
	v, diags := fe.Expr.Value(l.base)
	l.diags = append(l.diags, diags...)
	if diags.HasErrors() {
		return nil
	}
	rng := fe.Expr.Range()
	if v.IsNull() || !v.IsWhollyKnown() || v.IsMarked() {
		l.errf(&rng, "Invalid for_each", "for_each must be a known map, set of strings or list; it is null, unknown or a secret reference.")
		return nil
	}
	ty := v.Type()
	if !(ty.IsMapType() || ty.IsObjectType() || ty.IsSetType() || ty.IsListType() || ty.IsTupleType()) {
		l.errf(&rng, "Invalid for_each", "for_each must be a map, an object, a set of strings or a list, not %s.", ty.FriendlyName())
		return nil
	}
	var out []instance
	idx := 0
	for it := v.ElementIterator(); it.Next(); idx++ {
		k, e := it.Element()
		var key string
		switch {
		case ty.IsSetType():
			if e.Type() != cty.String {
				l.errf(&rng, "Invalid for_each", "A for_each set must hold strings; use a map or a list for other values.")
				return nil
			}
			key = e.AsString()
		case ty.IsListType() || ty.IsTupleType():
			key = fmt.Sprint(idx)
		default:
			key = k.AsString()
		}
		ctx := l.base.NewChild()
		ctx.Variables = map[string]cty.Value{"each": cty.ObjectVal(map[string]cty.Value{
			"key":   cty.StringVal(key),
			"value": e,
		})}
		name := label
		if label != "" {
			name = label + "-" + key
		}
		out = append(out, instance{block: b, name: name, key: key, ctx: ctx, body: dynblock.Expand(b.Body, ctx)})
	}
	return out
}

// content decodes an instance against its schema, adding the meta
// attributes for_each and name. It returns the decoder (nil when the body
// does not match the schema) and the effective instance name.
func (l *loader) content(in instance, schema *hcl.BodySchema) (*dec, string) {
	full := &hcl.BodySchema{Blocks: schema.Blocks}
	full.Attributes = append(append([]hcl.AttributeSchema{}, schema.Attributes...),
		hcl.AttributeSchema{Name: "for_each"}, hcl.AttributeSchema{Name: "name"})
	c, diags := in.body.Content(full)
	l.diags = append(l.diags, diags...)
	if c == nil {
		return nil, ""
	}
	name := in.name
	what := in.block.Type
	if name != "" {
		what = fmt.Sprintf("%s %q", in.block.Type, name)
	}
	d := newDec(in.ctx, c, in.block.DefRange, what, &l.diags)
	d.schemaErrs = diags.HasErrors()
	if a, ok := c.Attributes["name"]; ok {
		if in.key == "" {
			rng := a.NameRange
			l.errf(&rng, "Unexpected name attribute", "%s: the name attribute names for_each instances; without for_each the block label is the name.", what)
		} else if n := d.str("name", ""); n != "" {
			name = n
			d.what = fmt.Sprintf("%s %q", in.block.Type, n)
		}
		delete(d.src.Attrs, "name")
	}
	if _, ok := c.Attributes["for_each"]; ok {
		d.src.Attrs["for_each"] = c.Attributes["for_each"].Expr.Range()
	}
	return d, name
}

// checkName checks a device, class or credentials name is usable as an
// identifier in endpoints and plans.
func (l *loader) checkName(kind, name string, rng hcl.Range) bool {
	if name == "" {
		l.errf(&rng, "Empty name", "A %s needs a non-empty name.", kind)
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			l.errf(&rng, "Invalid name", "%s name %q may contain only letters, digits, '-', '_' and '.'.", kind, name)
			return false
		}
	}
	return true
}
