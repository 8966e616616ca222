// Package difftest is the differential property test of the PR gate:
// whatever `fabctl validate --static` accepts, every platform's renderer
// renders and the vendors' YANG models (libyang) accept. It generates
// fabrics at random (seeded), keeps the lint-clean ones, renders each
// switch with its driver, and validates every YANG-modelled payload; a
// fabric that breaks the property is shrunk to a smallest one that still
// does and reported. Counterexamples found are kept under
// testdata/regress as regression cases.
package difftest

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/validate/lint"
)

var (
	seedFlag = flag.Uint64("difftest.seed", 20261128, "seed of the generated fabrics")
	nFlag    = flag.Int("difftest.n", 300, "fabrics generated per run")
)

// outcome is what the property says of one fabric.
type outcome struct {
	clean    bool     // lint-clean (no load or lint error)
	payloads int      // YANG payloads validated
	failures []string // renders refused, payloads the models refuse
}

// check renders a fabric's every switch and validates its payloads.
func check(g fabricGen, v validator) outcome {
	src := g.hcl()
	s, diags := spec.LoadFiles([]spec.File{{Name: "diff.fab.hcl", Data: []byte(src)}}, spec.LoadOptions{
		Platforms: builtin.SpecPlatforms(), Env: []string{"DIFF_PW=x"}})
	if diags.HasErrors() || s == nil {
		return outcome{}
	}
	if lr := lint.Run(s); hasErrors(lr.Diagnostics) {
		return outcome{}
	}
	o := outcome{clean: true}
	f := intent.Compile(s)
	reg := builtin.Registry()
	for _, sw := range f.Switches {
		drv, err := reg.New(sw.Platform)
		if err != nil {
			o.failures = append(o.failures, fmt.Sprintf("%s: %v", sw.Name, err))
			continue
		}
		t := drivers.Target{Device: sw.Device, Intent: sw}
		r, ok := drv.(drivers.Renderer)
		if !ok {
			continue
		}
		if _, err := r.Render(t); err != nil {
			o.failures = append(o.failures, fmt.Sprintf("%s (%s) refuses to render: %v", sw.Name, sw.Platform, err))
			continue
		}
		yr, ok := drv.(drivers.YANGRenderer)
		if !ok || v == nil {
			continue
		}
		p, err := yr.YANGPayload(t)
		if err != nil {
			o.failures = append(o.failures, fmt.Sprintf("%s (%s): payload: %v", sw.Name, sw.Platform, err))
			continue
		}
		o.payloads++
		for _, issue := range v(p) {
			o.failures = append(o.failures, fmt.Sprintf("%s (%s): the %s models refuse the payload: %s", sw.Name, sw.Platform, p.Models, issue))
		}
	}
	return o
}

// validator validates a YANG payload, returning its problems.
type validator func(drivers.YANGPayload) []string

func hasErrors(ds hcl.Diagnostics) bool {
	for _, d := range ds {
		if d.Severity == hcl.DiagError {
			return true
		}
	}
	return false
}

// shrink simplifies a failing fabric one step at a time while it still
// fails (lint-clean, and rendering or validation fails).
func shrink(g fabricGen, v validator) (fabricGen, outcome) {
	cur, co := g, check(g, v)
	for {
		progressed := false
		for _, c := range cur.simpler() {
			if o := check(c, v); o.clean && len(o.failures) > 0 {
				cur, co, progressed = c, o, true
				break
			}
		}
		if !progressed {
			return cur, co
		}
	}
}

// TestDifferential: every lint-clean generated fabric renders on every
// platform and every YANG payload is valid.
func TestDifferential(t *testing.T) {
	v := yangValidator(t)
	r := rand.New(rand.NewPCG(*seedFlag, *seedFlag))
	var clean, payloads, failed int
	seen := map[string]bool{}
	for i := 0; i < *nFlag; i++ {
		g := generate(r)
		o := check(g, v)
		if !o.clean {
			continue
		}
		clean++
		payloads += o.payloads
		if len(o.failures) == 0 {
			continue
		}
		failed++
		min, mo := shrink(g, v)
		key := strings.Join(mo.failures, "\n")
		if seen[key] {
			continue
		}
		seen[key] = true
		t.Errorf("fabric %d (seed %d) is lint-clean but:\n  %s\nsmallest fabric that still fails:\n%s",
			i, *seedFlag, strings.Join(mo.failures, "\n  "), min.hcl())
	}
	t.Logf("%d fabrics generated (seed %d), %d lint-clean, %d YANG payloads validated, %d failed", *nFlag, *seedFlag, clean, payloads, failed)
	if clean < *nFlag/10 {
		t.Errorf("only %d of %d generated fabrics are lint-clean: the generator no longer exercises the property", clean, *nFlag)
	}
}

// TestRegressions: the counterexamples the differential test found, kept
// as specs. Each is now either refused by lint (the PR gate: its
// "# expect:" lines name the rules) or rendered and valid.
func TestRegressions(t *testing.T) {
	v := yangValidator(t)
	files, _ := filepath.Glob(filepath.Join("testdata", "regress", "*.fab.hcl"))
	if len(files) == 0 {
		t.Fatal("no regression cases in testdata/regress")
	}
	sort.Strings(files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			s, diags := spec.LoadFiles([]spec.File{{Name: f, Data: b}}, spec.LoadOptions{Platforms: builtin.SpecPlatforms(), Env: []string{"DIFF_PW=x"}})
			if diags.HasErrors() {
				t.Fatalf("does not load: %s", diags.Error())
			}
			lr := lint.Run(s)
			var got []string
			for _, d := range lr.Diagnostics {
				if d.Severity == hcl.DiagError {
					if info := spec.Info(d); info != nil {
						got = append(got, info.Rule)
					}
				}
			}
			want := expectations(string(b))
			sort.Strings(got)
			if strings.Join(uniq(got), ",") != strings.Join(want, ",") {
				t.Fatalf("lint errors %v, want %v", got, want)
			}
			if len(want) > 0 {
				return // refused by the PR gate, as it must be
			}
			o := checkSpec(s, v)
			if len(o.failures) > 0 {
				t.Fatalf("lint-clean but:\n  %s", strings.Join(o.failures, "\n  "))
			}
		})
	}
}

// checkSpec is check's rendering half for a loaded, lint-clean spec.
func checkSpec(s *spec.Spec, v validator) outcome {
	o := outcome{clean: true}
	reg := builtin.Registry()
	for _, sw := range intent.Compile(s).Switches {
		drv, err := reg.New(sw.Platform)
		if err != nil {
			continue
		}
		t := drivers.Target{Device: sw.Device, Intent: sw}
		if r, ok := drv.(drivers.Renderer); ok {
			if _, err := r.Render(t); err != nil {
				o.failures = append(o.failures, fmt.Sprintf("%s (%s) refuses to render: %v", sw.Name, sw.Platform, err))
				continue
			}
		}
		if yr, ok := drv.(drivers.YANGRenderer); ok && v != nil {
			p, err := yr.YANGPayload(t)
			if err != nil {
				o.failures = append(o.failures, err.Error())
				continue
			}
			o.payloads++
			for _, issue := range v(p) {
				o.failures = append(o.failures, fmt.Sprintf("%s (%s): %s", sw.Name, sw.Platform, issue))
			}
		}
	}
	return o
}

// expectations are the rule IDs of a spec's "# expect: RULE" lines.
func expectations(src string) []string {
	var out []string
	for _, l := range strings.Split(src, "\n") {
		if _, after, ok := strings.Cut(l, "# expect:"); ok {
			for _, r := range strings.Split(after, ",") {
				if r = strings.TrimSpace(r); r != "" {
					out = append(out, r)
				}
			}
		}
	}
	sort.Strings(out)
	return uniq(out)
}

func uniq(s []string) []string {
	var out []string
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}
