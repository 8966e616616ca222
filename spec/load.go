package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/dynblock"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/fabctl/fabctl/internal/safefile"
)

// File is one spec source: a name (used in diagnostics) and its bytes.
// The loaded spec keeps Data (Spec.Files, and its strings may share its
// memory): it must not be modified after LoadFiles.
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
	// VarFileData are variables files already read (a saved plan's
	// embedded copies, or the CLI's single read of --var-file), applied
	// after VarFiles in order.
	VarFileData []File
	// Env is the process environment ("K=V"); FAB_VAR_<name> sets variables.
	Env []string
	// Platforms are the switch platforms of this build, in the order
	// diagnostics list them (drivers/builtin.SpecPlatforms()). A switch's
	// platform must be one of them. There is no default: a spec that
	// declares a switch does not load without them.
	Platforms []PlatformInfo
	// Limits bound nesting, collection sizes and evaluation work
	// (limits.go); zero fields: the environment's FABCTL_SPEC_MAX_*,
	// else the defaults.
	Limits Limits
}

// PlatformInfiniBand is the InfiniBand switch platform's name.
const PlatformInfiniBand = "infiniband"

// ConnectNone is a host fabctl never logs into: it is in the spec for
// its cabling, GUIDs and partition membership (an appliance, or an
// adapter of a simulated fabric).
const ConnectNone = "none"

func platformIB(ps []PlatformInfo, platform string) bool {
	for _, p := range ps {
		if p.Name == platform {
			return p.InfiniBand
		}
	}
	return false
}

// ibSpeedLane is the nominal per-lane signalling rate of each InfiniBand
// generation, in b/s (4x QDR is "40G", 4x HDR "200G").
var ibSpeedLane = map[string]float64{"SDR": 2.5e9, "DDR": 5e9, "QDR": 10e9, "FDR10": 10e9, "FDR": 14e9, "EDR": 25e9, "HDR": 50e9, "NDR": 100e9}

// IBSpeedNames are the InfiniBand generations a link's speed may name.
func IBSpeedNames() []string {
	return []string{"SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR"}
}

func platformNames(ps []PlatformInfo) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
	}
	return out
}

// driverRemoved is the error for a switch's driver attribute, which the
// language had until the platform alone picked the driver: a platform has
// one driver, and the attribute could only repeat its transport. It lists
// the platforms of ps by transport ("sonic, cumulus, eos and nxos over
// ssh, srlinux and openconfig over gnmi"), in their order.
func driverRemoved(ps []PlatformInfo) string {
	var transports []string
	byTransport := map[string][]string{}
	for _, p := range ps {
		if p.Transport == "" || p.InfiniBand {
			continue
		}
		if byTransport[p.Transport] == nil {
			transports = append(transports, p.Transport)
		}
		byTransport[p.Transport] = append(byTransport[p.Transport], p.Name)
	}
	var parts []string
	for _, tr := range transports {
		names := byTransport[tr]
		list := names[0]
		if n := len(names); n > 1 {
			list = strings.Join(names[:n-1], ", ") + " and " + names[n-1]
		}
		parts = append(parts, list+" over "+tr)
	}
	out := "driver is not an attribute: the platform picks the driver and its transport"
	if len(parts) > 0 {
		out += " (" + strings.Join(parts, ", ") + ")"
	}
	return out + "; remove the line (a platform served over another transport is a platform of its own)."
}

// platformTransport is the transport of the platform's driver ("ssh"
// for a platform not in the list, which the loader has reported, and for
// an InfiniBand switch, which no driver logs into).
func platformTransport(ps []PlatformInfo, platform string) string {
	for _, p := range ps {
		if p.Name == platform && p.Transport != "" {
			return p.Transport
		}
	}
	return "ssh"
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
			if e.IsDir() || !IsSpecFile(e.Name()) {
				continue
			}
			n := filepath.Join(path, e.Name())
			if e.Type()&os.ModeSymlink != 0 {
				if d := linkInside(n, path); d != nil {
					return nil, hcl.Diagnostics{d}
				}
			}
			names = append(names, n)
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
		// A FIFO, device or socket would block or never end, a huge file
		// eat the memory: safefile refuses them before reading.
		b, err := safefile.ReadFile(n, safefile.Spec)
		if err != nil {
			return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read spec file",
				Detail: err.Error() + ": give a spec file or a directory of *.fab.hcl files."}}
		}
		files = append(files, File{Name: n, Data: b})
	}
	return files, nil
}

// linkInside refuses a spec file in a directory that is a symbolic link
// to a file outside that directory: a pull request can add such a link,
// and a diagnostic would then print lines of whatever it points at
// (/proc/self/environ, a key) into a pipeline's log. A link within the
// directory's tree is read as the file it points at.
func linkInside(link, dir string) *hcl.Diagnostic {
	target, err := filepath.EvalSymlinks(link)
	if err != nil {
		return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot read spec file",
			Detail: fmt.Sprintf("%s is a symbolic link that cannot be resolved (%v).", link, errors.Unwrap(err))}
	}
	root, err := filepath.EvalSymlinks(dir)
	if err == nil {
		if rel, rerr := filepath.Rel(root, target); rerr == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel) {
			return nil
		}
	}
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Spec file links outside the spec directory",
		Detail: fmt.Sprintf("%s is a symbolic link to %s, outside %s: fabctl reads only the spec files within the directory it is given (copy the file into it, or name it as the spec path).", link, target, dir)}
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
	// Nesting first: every parser below recurses once per level.
	depth := opts.limits().Depth
	for _, f := range files {
		if d := CheckNesting(f.Data, f.Name, strings.HasSuffix(f.Name, ".json"), depth); d != nil {
			s := &Spec{Files: map[string]*hcl.File{}}
			for _, f := range files {
				s.Files[f.Name] = &hcl.File{Body: hcl.EmptyBody(), Bytes: f.Data, Nav: lineNav(f.Data)}
			}
			return s, hcl.Diagnostics{d}
		}
	}
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%d:%s\n%d:", len(f.Name), f.Name, len(f.Data))
		h.Write(f.Data)
	}
	sourceHash := hex.EncodeToString(h.Sum(nil))
	// Override files (override.go) apply to the decoded spec.
	var overrides []File
	if n := countOverrides(files); n > 0 {
		rest := make([]File, 0, len(files)-n)
		for _, f := range files {
			if IsOverrideFile(f.Name) {
				overrides = append(overrides, f)
			} else {
				rest = append(rest, f)
			}
		}
		files = rest
	}
	// Large specs stream (stream.go); what does not stream, or gives up,
	// loads whole.
	s := &Spec{Files: map[string]*hcl.File{}, SourceHash: sourceHash}
	diags, ok := loadStreamed(files, opts, s)
	if ok {
		dropTrees(s.Files)
	} else {
		s, diags = loadWhole(files, opts, sourceHash)
	}
	if len(overrides) > 0 && !diags.HasErrors() {
		diags = append(diags, applyOverrides(s, overrides)...)
	}
	s.platforms = opts.Platforms
	return s, diags
}

func countOverrides(files []File) int {
	n := 0
	for _, f := range files {
		if IsOverrideFile(f.Name) {
			n++
		}
	}
	return n
}

// loadWhole parses every file, then decodes the merged body.
func loadWhole(files []File, opts LoadOptions, sourceHash string) (*Spec, hcl.Diagnostics) {
	p := hclparse.NewParser()
	var diags hcl.Diagnostics
	var parsed []*hcl.File
	fileMap := map[string]*hcl.File{}
	for _, f := range files {
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
	s := &Spec{Files: fileMap, SourceHash: sourceHash}
	if diags.HasErrors() {
		return s, diags
	}
	l := &loader{spec: s, opts: opts}
	for _, f := range files {
		if hf := fileMap[f.Name]; hf != nil {
			if b, ok := hf.Body.(*hclsyntax.Body); ok {
				diags = append(diags, instrumentFor(f.Data, b, l.budget())...)
			}
		}
	}
	if diags.HasErrors() {
		return s, diags
	}
	l.load(hcl.MergeFiles(parsed))
	diags = append(diags, l.diags...)
	diags = append(diags, l.bud.exhaustedError(diags)...)
	dropTrees(fileMap)
	return s, diags
}

// dropTrees lets large files' syntax trees go: the model keeps ranges, not
// syntax. Their bytes stay, for diagnostic snippets.
func dropTrees(files map[string]*hcl.File) {
	for name, f := range files {
		if len(f.Bytes) >= chunkMinFile {
			files[name] = &hcl.File{Body: hcl.EmptyBody(), Bytes: f.Bytes, Nav: lineNav(f.Bytes)}
		}
	}
}

// loader holds the state of one decode.
type loader struct {
	spec  *Spec
	opts  LoadOptions
	diags hcl.Diagnostics
	base  *hcl.EvalContext
	// fullSchemas caches each block schema with the meta attributes
	// for_each and name added.
	fullSchemas map[*hcl.BodySchema]*hcl.BodySchema
	decs        []*dec // see newDec
	// alloc, when set, is where the syntax tree being decoded was carved
	// from (a stream worker's): hcl.Block views of its blocks come from
	// it too.
	alloc *fpAlloc
	// bud is the load's evaluation budget (limits.go), made on first use.
	bud *budget
	// idc checks identifiers as they are decoded (ident.go).
	idc *identChecker
}

// budget is the load's evaluation budget.
func (l *loader) budget() *budget {
	if l.bud == nil {
		l.bud = &budget{lim: l.opts.limits()}
	}
	return l.bud
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
	if !l.globals(byType) {
		return
	}
	for _, b := range byType["switch"] {
		l.switchBlocks(b)
	}
	for _, b := range byType["host"] {
		l.hostBlocks(b)
	}
	for _, b := range byType["link"] {
		l.linkBlocks(b)
	}
	l.late(byType["validate"], byType["infiniband"])
	l.resolve()
}

// globals decodes what every other block depends on: variables, locals,
// the fabric, then credentials and classes. It returns false when loading
// cannot go on.
func (l *loader) globals(byType map[string][]*hcl.Block) bool {
	vars := l.variables(byType["variable"])
	l.base = &hcl.EvalContext{
		Variables: map[string]cty.Value{"var": vars},
		Functions: boundedFunctions(l.budget()),
	}
	l.base.Variables["local"] = l.locals(byType["locals"])
	if l.diags.HasErrors() {
		// Wrong variables or locals would cascade into every block.
		return false
	}

	fabrics := byType["fabric"]
	switch len(fabrics) {
	case 0:
		l.errf(&hcl.Range{Filename: firstFile(l.spec), Start: hcl.InitialPos, End: hcl.InitialPos}, "Missing fabric block",
			"A spec needs one fabric block, e.g.\n  fabric \"pod1\" {\n    transport = \"rocev2\"\n  }")
		return false
	case 1:
	default:
		for _, b := range fabrics[1:] {
			l.errf(b.DefRange.Ptr(), "Duplicate fabric block", "A spec has exactly one fabric block; the first is at %s.", fabrics[0].DefRange)
		}
	}
	l.spec.Fabric = l.fabric(fabrics[0])
	if l.spec.Fabric == nil {
		return false
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
	return true
}

// switchBlocks, hostBlocks and linkBlocks decode one top-level block (all
// its for_each instances) into the model.
func (l *loader) switchBlocks(b *hcl.Block) {
	if in, ok := l.plainInstance(b); ok {
		if sw := l.switchBlock(in); sw != nil {
			l.spec.Switches = append(l.spec.Switches, sw)
		}
		return
	}
	for _, in := range l.instances(b) {
		if sw := l.switchBlock(in); sw != nil {
			l.spec.Switches = append(l.spec.Switches, sw)
		}
	}
}

func (l *loader) hostBlocks(b *hcl.Block) {
	if in, ok := l.plainInstance(b); ok {
		if h := l.host(in); h != nil {
			l.spec.Hosts = append(l.spec.Hosts, h)
		}
		return
	}
	for _, in := range l.instances(b) {
		if h := l.host(in); h != nil {
			l.spec.Hosts = append(l.spec.Hosts, h)
		}
	}
}

func (l *loader) linkBlocks(b *hcl.Block) {
	if in, ok := l.plainInstance(b); ok {
		if lk := l.link(in); lk != nil {
			l.spec.Links = append(l.spec.Links, lk)
		}
		return
	}
	for _, in := range l.instances(b) {
		if lk := l.link(in); lk != nil {
			l.spec.Links = append(l.spec.Links, lk)
		}
	}
}

// plainInstance is the one instance of a native-syntax block without
// for_each: what instances returns for it, without the slice.
func (l *loader) plainInstance(b *hcl.Block) (instance, bool) {
	sb, ok := b.Body.(*hclsyntax.Body)
	if !ok {
		return instance{}, false
	}
	if _, has := sb.Attributes["for_each"]; has {
		return instance{}, false
	}
	label := ""
	if len(b.Labels) > 0 {
		label = b.Labels[0]
	}
	return instance{block: b, name: label, ctx: l.base, body: sb}, true
}

// late decodes the validate blocks and the infiniband block, which come
// after the devices and links.
func (l *loader) late(validations, ibs []*hcl.Block) {
	for _, b := range validations {
		for _, in := range l.instances(b) {
			if v := l.validation(in); v != nil {
				l.spec.Validations = append(l.spec.Validations, v)
			}
		}
	}
	if len(ibs) > 0 {
		for _, b := range ibs[1:] {
			l.errf(b.DefRange.Ptr(), "Duplicate infiniband block", "A spec has at most one infiniband block; the first is at %s.", ibs[0].DefRange)
		}
		l.spec.InfiniBand = l.infiniband(ibs[0])
		if ib := l.spec.InfiniBand; ib != nil {
			l.ids().infiniband(ib)
		}
	}
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
	body  hcl.Body // to be seen with dynamic blocks expanded: see expandable
}

// expandable is the body of an instance. Native-syntax bodies stay as
// parsed: bodyDec reads them directly when they match their schema (then
// they hold no dynamic block) and expands them otherwise. Other bodies
// (JSON) get their dynamic blocks expanded here, as always.
func expandable(body hcl.Body, ctx *hcl.EvalContext) hcl.Body {
	if _, ok := body.(*hclsyntax.Body); ok {
		return body
	}
	return dynblock.Expand(body, ctx)
}

// forEachAttr finds a block's for_each attribute. On a native-syntax body
// PartialContent(forEachSchema) reports nothing and returns the attribute
// as is, so it is read directly there: PartialContent copies the body and
// allocates four maps, for every block of a pod.
func forEachAttr(b *hcl.Block) (expr hcl.Expression, nameRange hcl.Range, ok bool, diags hcl.Diagnostics) {
	if sb, isSyn := b.Body.(*hclsyntax.Body); isSyn {
		if a, has := sb.Attributes["for_each"]; has {
			return a.Expr, a.NameRange, true, nil
		}
		return nil, hcl.Range{}, false, nil
	}
	partial, _, diags := b.Body.PartialContent(forEachSchema)
	if fe, has := partial.Attributes["for_each"]; has {
		return fe.Expr, fe.NameRange, true, diags
	}
	return nil, hcl.Range{}, false, diags
}

// single is the instance of a block that may appear once and has no
// for_each (fabric, infiniband); dynamic blocks inside it are expanded.
func (l *loader) single(b *hcl.Block, name string) instance {
	if _, nameRange, ok, _ := forEachAttr(b); ok {
		l.errf(nameRange.Ptr(), "for_each not allowed here", "A %s block describes the whole fabric and cannot be repeated with for_each.", b.Type)
	}
	return instance{block: b, name: name, ctx: l.base, body: expandable(b.Body, l.base)}
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
	feExpr, _, has, diags := forEachAttr(b)
	l.diags = append(l.diags, diags...)
	if !has {
		return []instance{{block: b, name: label, ctx: l.base, body: expandable(b.Body, l.base)}}
	}
	v, diags := feExpr.Value(l.base)
	l.diags = append(l.diags, diags...)
	if diags.HasErrors() {
		return nil
	}
	rng := feExpr.Range()
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
		out = append(out, instance{block: b, name: name, key: key, ctx: ctx, body: expandable(b.Body, ctx)})
	}
	return out
}

// content decodes an instance against its schema, adding the meta
// attributes for_each and name. It returns the decoder (nil when the body
// does not match the schema) and the effective instance name.
func (l *loader) content(in instance, schema *hcl.BodySchema) (*dec, string) {
	full := l.fullSchemas[schema]
	if full == nil {
		full = &hcl.BodySchema{Blocks: schema.Blocks}
		full.Attributes = append(append([]hcl.AttributeSchema{}, schema.Attributes...),
			hcl.AttributeSchema{Name: "for_each"}, hcl.AttributeSchema{Name: "name"})
		if l.fullSchemas == nil {
			l.fullSchemas = map[*hcl.BodySchema]*hcl.BodySchema{}
		}
		l.fullSchemas[schema] = full
	}
	name := in.name
	w := whatOf(in.block.Type)
	if name != "" {
		w = whatf("%s %q", in.block.Type, name)
	}
	d, schemaErrs := l.bodyDec(in.body, full, in.ctx, in.block.DefRange, w)
	if d == nil {
		return nil, ""
	}
	d.schemaErrs = schemaErrs
	if _, nameRange, ok := d.attr("name"); ok {
		if in.key == "" {
			rng := nameRange
			l.errf(&rng, "Unexpected name attribute", "%s: the name attribute names for_each instances; without for_each the block label is the name.", w)
		} else if n := d.str("name", ""); n != "" {
			name = n
			d.what = whatf("%s %q", in.block.Type, n)
		}
		d.src.unset("name")
	}
	if expr, _, ok := d.attr("for_each"); ok {
		d.src.set("for_each", expr.Range())
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
