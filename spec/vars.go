package spec

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/fabctl/fabctl/internal/safefile"
)

// VarEnvPrefix is the environment prefix that sets spec variables:
// FAB_VAR_leaf_count=8 sets var.leaf_count.
const VarEnvPrefix = "FAB_VAR_"

var variableSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "type"}, {Name: "default"}, {Name: "description"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "validation"}},
}

var validationSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "condition", Required: true}, {Name: "error_message", Required: true},
}}

type varDecl struct {
	name  string
	ty    cty.Type
	def   cty.Value
	block *hcl.Block
	rules []*hcl.Block
	set   bool
	val   cty.Value
	vrng  hcl.Range // where the value came from
}

// variables decodes variable blocks and binds their values from, in rising
// precedence: default, FAB_VAR_ environment, -var-file files, -var flags.
func (l *loader) variables(blocks []*hcl.Block) cty.Value {
	decls := map[string]*varDecl{}
	var order []string
	for _, b := range blocks {
		name := b.Labels[0]
		if prev, ok := decls[name]; ok {
			l.errf(b.DefRange.Ptr(), "Duplicate variable", "Variable %q is already declared at %s.", name, prev.block.DefRange)
			continue
		}
		if !hclsyntax.ValidIdentifier(name) {
			l.errf(&b.LabelRanges[0], "Invalid variable name", "%q is not a valid identifier (letters, digits, '_' and '-', starting with a letter).", name)
			continue
		}
		c, diags := b.Body.Content(variableSchema)
		l.diags = append(l.diags, diags...)
		if c == nil {
			continue
		}
		v := &varDecl{name: name, ty: cty.DynamicPseudoType, def: cty.NilVal, block: b}
		if a, ok := c.Attributes["type"]; ok {
			ty, d := typeexpr.TypeConstraint(a.Expr)
			l.diags = append(l.diags, d...)
			if !d.HasErrors() {
				v.ty = ty
			}
		}
		if a, ok := c.Attributes["default"]; ok {
			dv, d := a.Expr.Value(nil)
			l.diags = append(l.diags, d...)
			if !d.HasErrors() {
				cv, err := convert.Convert(dv, v.ty)
				if err != nil {
					rng := a.Expr.Range()
					l.errf(&rng, "Invalid default value", "Variable %q: the default does not match its type %s: %s.", name, v.ty.FriendlyName(), err)
				} else {
					v.def, v.val, v.set, v.vrng = cv, cv, true, a.Expr.Range()
				}
			}
		}
		for _, vb := range c.Blocks {
			v.rules = append(v.rules, vb)
		}
		decls[name] = v
		order = append(order, name)
	}

	assign := func(name, raw string, rng hcl.Range, from string) {
		v, ok := decls[name]
		if !ok {
			if from == "environment" {
				return // stray FAB_VAR_ variables are ignored, as Terraform does for TF_VAR_
			}
			detail := fmt.Sprintf("%s sets variable %q, which the spec does not declare.", from, name)
			if s := suggest(name, order); s != "" {
				detail += fmt.Sprintf(" Did you mean %q?", s)
			}
			l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Undeclared variable", Detail: detail, Subject: rangePtr(rng)})
			return
		}
		var val cty.Value
		if v.ty == cty.String || v.ty == cty.DynamicPseudoType {
			val = cty.StringVal(raw)
		} else {
			if nd := CheckNesting([]byte(raw), from, false, l.opts.limits().Depth); nd != nil {
				nd.Subject = nil
				nd.Detail = fmt.Sprintf("%s: variable %q: %s", from, name, nd.Detail)
				l.diags = append(l.diags, nd)
				return
			}
			expr, d := hclsyntax.ParseExpression([]byte(raw), from, hcl.InitialPos)
			if d.HasErrors() {
				l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid variable value",
					Detail: fmt.Sprintf("%s: variable %q of type %s: %q is not a valid HCL expression.", from, name, v.ty.FriendlyName(), raw)})
				return
			}
			val, d = expr.Value(nil)
			if d.HasErrors() {
				// A bare word parses as a variable reference ("Variables not
				// allowed"): say what is wrong with the value instead.
				l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid variable value",
					Detail: fmt.Sprintf("%s: variable %q has type %s, and %q is not %s.", from, name, v.ty.FriendlyName(), raw, aTypeName(v.ty))})
				return
			}
		}
		l.bind(v, val, rng, from)
	}

	// Environment (lowest precedence among the sources that override defaults).
	env := append([]string(nil), l.opts.Env...)
	sort.Strings(env)
	for _, kv := range env {
		k, val, ok := strings.Cut(kv, "=")
		if ok && strings.HasPrefix(k, VarEnvPrefix) {
			assign(strings.TrimPrefix(k, VarEnvPrefix), val, hcl.Range{}, "environment")
		}
	}
	varFiles := make([]File, 0, len(l.opts.VarFiles)+len(l.opts.VarFileData))
	for _, path := range l.opts.VarFiles {
		src, err := safefile.ReadFile(path, safefile.VarFile)
		if err != nil {
			l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot read variables file", Detail: err.Error()})
			continue
		}
		varFiles = append(varFiles, File{Name: path, Data: src})
	}
	varFiles = append(varFiles, l.opts.VarFileData...)
	for _, vf := range varFiles {
		path := vf.Name
		if nd := CheckNesting(vf.Data, path, false, l.opts.limits().Depth); nd != nil {
			l.diags = append(l.diags, nd)
			continue
		}
		f, d := hclsyntax.ParseConfig(vf.Data, path, hcl.InitialPos)
		if f != nil {
			if b, ok := f.Body.(*hclsyntax.Body); ok {
				d = append(d, instrumentFor(vf.Data, b, l.budget())...)
			}
		}
		l.diags = append(l.diags, d...)
		if d.HasErrors() {
			continue
		}
		l.spec.Files[path] = f
		attrs, d := f.Body.JustAttributes()
		l.diags = append(l.diags, d...)
		names := make([]string, 0, len(attrs))
		for n := range attrs {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			a := attrs[n]
			val, d := a.Expr.Value(nil)
			l.diags = append(l.diags, d...)
			if d.HasErrors() {
				continue
			}
			v, ok := decls[n]
			if !ok {
				detail := fmt.Sprintf("Variables file sets %q, which the spec does not declare.", n)
				if s := suggest(n, order); s != "" {
					detail += fmt.Sprintf(" Did you mean %q?", s)
				}
				l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Undeclared variable", Detail: detail, Subject: a.NameRange.Ptr()})
				continue
			}
			l.bind(v, val, a.Expr.Range(), "variables file")
		}
	}
	for _, kv := range l.opts.Vars {
		k, val, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid -var option",
				Detail: fmt.Sprintf("-var %q must be name=value, e.g. -var leaf_count=8.", kv)})
			continue
		}
		assign(strings.TrimSpace(k), val, hcl.Range{}, "-var")
	}

	vals := map[string]cty.Value{}
	for _, n := range order {
		v := decls[n]
		if !v.set {
			l.errf(v.block.DefRange.Ptr(), "Missing variable value",
				"Variable %q has no default and no value. Set it with -var %s=..., a -var-file, or the environment variable %s%s.", n, n, VarEnvPrefix, n)
			continue
		}
		vals[n] = v.val
	}
	// Validation rules see every variable.
	varObj := cty.ObjectVal(vals)
	for _, n := range order {
		v := decls[n]
		if !v.set {
			continue
		}
		ctx := &hcl.EvalContext{Variables: map[string]cty.Value{"var": varObj}, Functions: boundedFunctions(l.budget())}
		for _, rb := range v.rules {
			c, d := rb.Body.Content(validationSchema)
			l.diags = append(l.diags, d...)
			if c == nil || d.HasErrors() {
				continue
			}
			cond, d := c.Attributes["condition"].Expr.Value(ctx)
			l.diags = append(l.diags, d...)
			if d.HasErrors() {
				continue
			}
			msg, d := c.Attributes["error_message"].Expr.Value(ctx)
			l.diags = append(l.diags, d...)
			if cond.Type() != cty.Bool || cond.IsNull() || !cond.IsKnown() {
				rng := c.Attributes["condition"].Expr.Range()
				l.errf(&rng, "Invalid validation condition", "Variable %q: condition must be a boolean.", n)
				continue
			}
			if cond.False() {
				text := "the value is not valid"
				if msg.Type() == cty.String && !msg.IsNull() && msg.IsKnown() {
					text = msg.AsString()
				}
				rng := v.vrng
				if rng.Filename == "" {
					rng = c.Attributes["condition"].Expr.Range()
				}
				l.errf(&rng, "Invalid value for variable", "Variable %q: %s", n, text)
			}
		}
	}
	return varObj
}

func (l *loader) bind(v *varDecl, val cty.Value, rng hcl.Range, from string) {
	cv, err := convert.Convert(val, v.ty)
	if err != nil {
		l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid variable value",
			Detail: fmt.Sprintf("%s: variable %q must be %s: %s.", from, v.name, v.ty.FriendlyName(), err), Subject: rangePtr(rng)})
		return
	}
	v.val, v.set, v.vrng = cv, true, rng
}

func rangePtr(r hcl.Range) *hcl.Range {
	if r.Filename == "" {
		return nil
	}
	return &r
}

// locals evaluates every locals block attribute in dependency order.
func (l *loader) locals(blocks []*hcl.Block) cty.Value {
	type local struct {
		attr *hcl.Attribute
		deps []string
	}
	pending := map[string]*local{}
	var names []string
	for _, b := range blocks {
		attrs, d := b.Body.JustAttributes()
		l.diags = append(l.diags, d...)
		for name, a := range attrs {
			if prev, ok := pending[name]; ok {
				l.errf(a.NameRange.Ptr(), "Duplicate local value", "Local %q is already defined at %s.", name, prev.attr.NameRange)
				continue
			}
			lc := &local{attr: a}
			for _, tr := range a.Expr.Variables() {
				if tr.RootName() == "local" && len(tr) > 1 {
					if at, ok := tr[1].(hcl.TraverseAttr); ok {
						lc.deps = append(lc.deps, at.Name)
					}
				}
			}
			pending[name] = lc
			names = append(names, name)
		}
	}
	sort.Strings(names)
	done := map[string]cty.Value{}
	for len(pending) > 0 {
		progress := false
		for _, n := range names {
			lc, ok := pending[n]
			if !ok {
				continue
			}
			ready := true
			for _, dep := range lc.deps {
				if _, ok := done[dep]; !ok {
					if _, exists := pending[dep]; !exists {
						rng := lc.attr.Expr.Range()
						detail := fmt.Sprintf("Local %q refers to local.%s, which is not defined.", n, dep)
						if s := suggest(dep, names); s != "" {
							detail += fmt.Sprintf(" Did you mean local.%s?", s)
						}
						l.errf(&rng, "Reference to undefined local", "%s", detail)
						done[dep] = cty.DynamicVal
						continue
					}
					ready = false
				}
			}
			if !ready {
				continue
			}
			ctx := l.base.NewChild()
			ctx.Variables = map[string]cty.Value{"local": cty.ObjectVal(done)}
			v, d := lc.attr.Expr.Value(ctx)
			if !d.HasErrors() {
				d = append(d, l.budget().local(n, v, lc.attr.Expr.Range())...)
			}
			l.diags = append(l.diags, d...)
			if d.HasErrors() {
				v = cty.DynamicVal
			}
			done[n] = v
			delete(pending, n)
			progress = true
		}
		if !progress {
			var cyc []string
			for _, n := range names {
				if _, ok := pending[n]; ok {
					cyc = append(cyc, "local."+n)
				}
			}
			first := pending[strings.TrimPrefix(cyc[0], "local.")]
			rng := first.attr.Expr.Range()
			l.errf(&rng, "Cycle in local values", "These locals refer to each other in a cycle: %s.", strings.Join(cyc, ", "))
			for _, n := range cyc {
				delete(pending, strings.TrimPrefix(n, "local."))
			}
		}
	}
	return cty.ObjectVal(done)
}

// aTypeName is "a number", "a bool", "a valid list of string ..." for
// messages about a variable value.
func aTypeName(t cty.Type) string {
	switch {
	case t == cty.Number:
		return "a number"
	case t == cty.Bool:
		return "a bool (true or false)"
	}
	return "a valid " + t.FriendlyName() + " expression (quote strings inside it)"
}
