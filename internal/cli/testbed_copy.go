package cli

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sort"

	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/cobra"

	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/internal/safefile"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/local"
)

// TestbedCopyOptions are the inputs of fabctl testbed copy.
type TestbedCopyOptions struct {
	IO       *IOStreams
	Factory  *Factory
	JSON     bool
	Path     string
	Out      string
	First    string // --first-address
	Vars     []string
	VarFiles []string
}

func newCmdTestbedCopy(f *Factory, runF func(*TestbedCopyOptions) error) *cobra.Command {
	opts := &TestbedCopyOptions{IO: f.IOStreams, Factory: f}
	cmd := &cobra.Command{
		Use:   "copy SPEC -o DIR",
		Short: "Copy a spec to run on the local testbed: its files, testbed credentials and an override file",
		Long: `Copy SPEC into DIR so that "fabctl testbed up DIR" runs it on this machine, without
editing the spec's files:

  DIR/*.fab.hcl                  the spec's files (its own override files left out: they
                                 point at the production devices)
  DIR/` + local.CopyCredentialsFile + `         credentials the emulators accept: a password from
                                 $` + local.CopyPasswordEnv + `, the testbed's known_hosts and gNMI CA
  DIR/` + local.CopyOverrideFile + `  every emulated switch on a loopback address of its own
                                 (--first-address upwards; SSH on 2222, gNMI on 57400),
                                 every host fabctl logs into in the namespace fab-<host>

Port names need no renaming: testbed up gives each emulator every port the spec names
(an EOS split lane, a SONiC breakout, an NX-OS second slot) and refuses, naming it, a
name its platform cannot have. The copy is checked as testbed up checks it before
anything is written. DIR must not be the spec's own directory: the copy keeps its own
state (.fabctl/) apart from the production applied record and journals. Switches of
platforms without an emulator and hosts with connect = "none" are left as they are,
and listed. InfiniBand specs are refused (examples/ib-testbed shows the simulated
subnet's layout).

Exit status: 0 written, 1 error (nothing written), 64 usage error.`,
		Example: `  fabctl testbed copy prod/pod-a -o /tmp/pod-a
  fabctl testbed up /tmp/pod-a
  fabctl plan /tmp/pod-a && fabctl apply /tmp/pod-a
  fabctl testbed down /tmp/pod-a`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path, opts.JSON = args[0], f.Global.JSON
			if opts.Out == "" {
				return FlagErrorf("copy needs -o DIR")
			}
			if _, err := netip.ParseAddr(opts.First); err != nil {
				return FlagErrorf("invalid --first-address %q: %v", opts.First, err)
			}
			if runF != nil {
				return runF(opts)
			}
			return testbedCopyRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Out, "output", "o", "", "Directory to write the copy into (created when missing; not the spec's own)")
	fl.StringVar(&opts.First, "first-address", local.CopyFirstAddress, "The first switch's loopback `address`; the others follow")
	fl.StringArrayVar(&opts.Vars, "var", nil, "Set a spec variable, `name=value` (repeatable)")
	fl.StringArrayVar(&opts.VarFiles, "var-file", nil, "Read spec variables from an HCL `file` (repeatable)")
	return cmd
}

func testbedCopyRun(o *TestbedCopyOptions) error {
	lf, err := loadFabric(o.Factory, o.Path, o.Vars, o.VarFiles)
	if errors.Is(err, errSpecInvalid) {
		format := formatHuman
		if o.JSON {
			format = formatJSON
		}
		lf.Stopped = "nothing was copied"
		return reportSpecErrors(o.IO, lf, format)
	}
	if err != nil {
		return err
	}
	if same, err := sameDir(specDir(o.Path), o.Out); err != nil {
		return err
	} else if same {
		return FlagErrorf("-o %s is the spec's own directory: the copy's override file would apply to the spec itself; choose another", o.Out)
	}
	first := netip.MustParseAddr(o.First)
	load := func(files []spec.File) (*spec.Spec, hcl.Diagnostics) {
		env := append([]string(nil), o.Factory.Env...)
		return spec.LoadFiles(files, spec.LoadOptions{Vars: lf.Vars, VarFileData: lf.VarFiles, Env: env, Platforms: builtin.SpecPlatforms()})
	}
	res, err := local.Copy(lf.Spec, lf.Sources, first, load)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return err
	}
	for _, f := range res.Files {
		if err := safefile.WriteFile(filepath.Join(o.Out, f.Name), f.Data, 0o644, safefile.Output); err != nil {
			return fmt.Errorf("writing the copy: %w", err)
		}
	}
	if o.JSON {
		return writeJSON(o.IO.Out, struct {
			FormatVersion string            `json:"format_version"`
			Dir           string            `json:"dir"`
			Switches      map[string]string `json:"switches"`
			Hosts         map[string]string `json:"hosts"`
			Left          []string          `json:"left"`
			Dropped       []string          `json:"dropped_overrides"`
		}{jsonFormatVersion, o.Out, res.Switches, res.Hosts, append([]string{}, res.Left...), append([]string{}, res.Dropped...)})
	}
	s := newStyles(o.IO.Out, o.IO.ColorEnabled())
	w := o.IO.Out
	fmt.Fprintf(w, "%s copy of %s written to %s: %s on loopback addresses, %s in namespaces\n", s.OK.Render("✔"), o.Path, o.Out,
		plural(len(res.Switches), "switch", "switches"), plural(len(res.Hosts), "host", "hosts"))
	for _, m := range []struct {
		kind string
		to   map[string]string
	}{{"switch", res.Switches}, {"host", res.Hosts}} {
		names := make([]string, 0, len(m.to))
		for n := range m.to {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(w, "  %s.%s -> %s\n", m.kind, n, m.to[n])
		}
	}
	for _, l := range res.Left {
		fmt.Fprintf(w, "  %s left as it is: %s\n", s.Warn.Render("!"), l)
	}
	for _, d := range res.Dropped {
		fmt.Fprintf(w, "  %s not copied: %s (an override file of the spec)\n", s.Warn.Render("!"), d)
	}
	fmt.Fprintf(w, "Next (as root; pass the spec's --var flags to plan and apply):\n  fabctl testbed up %s\n  fabctl plan %s\n  fabctl testbed down %s\n", o.Out, o.Out, o.Out)
	return nil
}

// specDir is the directory of a spec path (the path itself when it is a
// directory).
func specDir(p string) string {
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return p
	}
	return filepath.Dir(p)
}

// sameDir reports whether a and b are one directory (b may not exist).
func sameDir(a, b string) (bool, error) {
	sa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	sb, err := os.Stat(b)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(sa, sb), nil
}
