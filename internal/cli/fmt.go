package cli

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/pmezard/go-difflib/difflib"
	"github.com/spf13/cobra"

	"github.com/fabctl/fabctl/internal/cli/view"
	"github.com/fabctl/fabctl/internal/safefile"
	"github.com/fabctl/fabctl/spec"
)

// FmtOptions are the inputs of fabctl fmt.
type FmtOptions struct {
	IO   *IOStreams
	JSON bool

	Paths     []string // files and directories; "-" is stdin
	Check     bool     // --check: report only, exit 1 when a file is not formatted
	Diff      bool     // --diff: print a unified diff of the changes
	Write     bool     // --write: rewrite files (default true; off under --check)
	List      bool     // --list: print the names of files that change (default true)
	Recursive bool     // --recursive: descend into subdirectories
	// MaxDepth bounds the nesting fmt parses (spec.CheckNesting): the
	// parser and the formatter recurse once per level.
	MaxDepth int
}

// NewCmdFmt returns `fabctl fmt`.
func NewCmdFmt(f *Factory, runF func(*FmtOptions) error) *cobra.Command {
	opts := &FmtOptions{IO: f.IOStreams, MaxDepth: spec.DepthLimit(f.Env)}
	cmd := &cobra.Command{
		Use:   "fmt [PATH...]",
		Short: "Rewrite spec files in the canonical HCL style",
		Long: `Rewrite spec files in the canonical HCL layout and style (hclwrite.Format, as
terraform fmt does).

A directory (default: the current directory) means the *.fab.hcl and *.fabvars
files directly in it; --recursive descends into subdirectories (skipping
hidden ones). A file named explicitly may be any HCL native-syntax file
(*.fab.hcl, *.fabvars, *.hcl); JSON spec files are not formatted.
"-" reads a spec from stdin and writes the formatted text to stdout.

Files that do not parse are reported with their syntax errors and left
alone. The flags also take Terraform's single-dash form (-check, -diff,
-write=false, -recursive).

Exit status: 0 when every file is (or now is) formatted, 1 on a syntax error
or, with --check, when a file is not formatted, 64 on a usage error.`,
		Example: `  fabctl fmt
  fabctl fmt -check -recursive .
  fabctl fmt --diff --write=false fabric/
  cat spec.fab.hcl | fabctl fmt -`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			if len(opts.Paths) == 0 {
				opts.Paths = []string{"."}
			}
			for _, p := range opts.Paths {
				if p == "-" && len(opts.Paths) > 1 {
					return FlagErrorf("\"-\" (stdin) cannot be combined with other paths")
				}
			}
			opts.JSON = f.Global.JSON
			if runF != nil {
				return runF(opts)
			}
			return fmtRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.Check, "check", false, "Check only: list files that are not formatted and exit 1 if any; write nothing")
	fl.BoolVar(&opts.Diff, "diff", false, "Print a unified diff of the formatting changes")
	fl.BoolVar(&opts.Write, "write", true, "Write the formatted result back to the files (always off with --check)")
	fl.BoolVar(&opts.List, "list", true, "List the files whose formatting changes")
	fl.BoolVar(&opts.Recursive, "recursive", false, "Also format files in subdirectories")
	return cmd
}

// fmt's outcome and its views are internal/cli/view's.
type (
	fmtFile   = view.FmtFile
	fmtResult = view.FmtResult
)

func fmtRun(opts *FmtOptions) error {
	res := &fmtResult{Check: opts.Check, HCLFiles: map[string]*hcl.File{}}
	write := opts.Write && !opts.Check
	var fv view.FmtView = &view.FmtHuman{IO: opts.IO, List: opts.List}
	if opts.JSON {
		fv = &view.FmtJSON{IO: opts.IO}
	}

	if len(opts.Paths) == 1 && opts.Paths[0] == "-" {
		res.Stdin = true
		src, err := io.ReadAll(opts.IO.In)
		if err != nil {
			return fmt.Errorf("reading stdin: %w", err)
		}
		if out, ok := formatSource(res, "<stdin>", src, opts.MaxDepth); ok {
			ff := fmtFile{Path: "-", Changed: !bytes.Equal(src, out)}
			if opts.Diff && ff.Changed {
				ff.Diff = unifiedDiff("<stdin>", src, out)
			}
			if !opts.Check && !opts.Diff {
				ff.Formatted = string(out)
			}
			res.Files = append(res.Files, ff)
		}
	} else {
		paths, diags := collectFmtFiles(opts.Paths, opts.Recursive)
		res.Diagnostics = append(res.Diagnostics, diags...)
		for _, p := range paths {
			src, err := safefile.ReadFile(p, safefile.Spec)
			if err != nil {
				res.Diagnostics = append(res.Diagnostics, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot read file", Detail: err.Error()})
				continue
			}
			out, ok := formatSource(res, p, src, opts.MaxDepth)
			if !ok {
				continue
			}
			ff := fmtFile{Path: p, Changed: !bytes.Equal(src, out)}
			if ff.Changed && opts.Diff {
				ff.Diff = unifiedDiff(p, src, out)
			}
			if ff.Changed && write {
				if err := writeFilePreservingMode(p, out); err != nil {
					res.Diagnostics = append(res.Diagnostics, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot write file", Detail: err.Error()})
				} else {
					ff.Written = true
				}
			}
			res.Files = append(res.Files, ff)
		}
	}
	if err := fv.Result(res); err != nil {
		return err
	}
	if res.Failed() {
		return exitWith(ExitError)
	}
	return nil
}

// formatSource parses src (so syntax errors are reported; hclwrite.Format
// formats any token stream) and returns the formatted bytes.
func formatSource(res *fmtResult, name string, src []byte, maxDepth int) ([]byte, bool) {
	if maxDepth <= 0 {
		maxDepth = spec.DefaultMaxDepth
	}
	if d := spec.CheckNesting(src, name, false, maxDepth); d != nil {
		res.HCLFiles[name] = &hcl.File{Body: hcl.EmptyBody(), Bytes: src}
		res.Diagnostics = append(res.Diagnostics, d)
		return nil, false
	}
	f, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	if f == nil {
		f = &hcl.File{Bytes: src}
	}
	res.HCLFiles[name] = f
	if diags.HasErrors() {
		res.Diagnostics = append(res.Diagnostics, diags...)
		return nil, false
	}
	return hclwrite.Format(src), true
}

// fmtSuffixes are the file endings fmt picks up in directories.
var fmtSuffixes = []string{".fab.hcl", ".fabvars"}

func isFmtFile(name string) bool {
	for _, s := range fmtSuffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// collectFmtFiles expands the paths to a sorted, de-duplicated file list.
func collectFmtFiles(paths []string, recursive bool) ([]string, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "No file or directory at " + p, Detail: err.Error()})
			continue
		}
		if !st.IsDir() {
			if strings.HasSuffix(p, ".json") || !(strings.HasSuffix(p, ".hcl") || isFmtFile(p)) {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Not an HCL spec file",
					Detail: fmt.Sprintf("%s: fmt formats HCL native syntax (*.fab.hcl, *.fabvars, *.hcl), not JSON or other files.", p)})
				continue
			}
			add(p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path == p {
					return nil
				}
				if !recursive || strings.HasPrefix(d.Name(), ".") {
					return filepath.SkipDir
				}
				return nil
			}
			if d.Type().IsRegular() && isFmtFile(d.Name()) {
				add(path)
			}
			return nil
		})
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot read directory " + p, Detail: err.Error()})
		}
	}
	sort.Strings(out)
	return out, diags
}

// writeFilePreservingMode rewrites a spec file atomically (safefile),
// keeping its mode. A path the operator gave as a link is rewritten
// where the link points (the link stays).
func writeFilePreservingMode(path string, data []byte) error {
	if p, err := filepath.EvalSymlinks(path); err == nil {
		path = p
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	return safefile.WriteFile(path, data, st.Mode().Perm(), safefile.Spec)
}

// unifiedDiff returns a diff -u style diff of a file's formatting change.
func unifiedDiff(name string, a, b []byte) string {
	d, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A:        difflib.SplitLines(string(a)),
		B:        difflib.SplitLines(string(b)),
		FromFile: "old/" + name,
		ToFile:   "new/" + name,
		Context:  3,
	})
	if err != nil {
		return ""
	}
	return d
}
