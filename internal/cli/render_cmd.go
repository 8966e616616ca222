package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/cli/arguments"
	"github.com/fabctl/fabctl/internal/cli/view"
	"github.com/fabctl/fabctl/internal/safefile"
	"github.com/fabctl/fabctl/plan"
)

// RenderOptions are the inputs of fabctl render.
type RenderOptions struct {
	IO      *IOStreams
	Factory *Factory
	JSON    bool

	Path     string   // spec file or directory
	Devices  []string // --device globs
	OutDir   string   // -o DIR; "" = stdout
	Vars     []string
	VarFiles []string
	YANGDir  string // --yang-dir: validate YANG-modelled payloads offline
	Verbose  bool   // -v: with -o, list every file written
}

// NewCmdRender returns `fabctl render`.
func NewCmdRender(f *Factory, runF func(*RenderOptions) error) *cobra.Command {
	opts := &RenderOptions{IO: f.IOStreams, Factory: f}
	cmd := &cobra.Command{
		Use:   "render [SPEC]",
		Short: "Write every device's desired state without contacting any device",
		Long: `Write every device's desired state without contacting any device: for
review, golden tests and lab startup configurations.

For each device (--device limits them) render writes:

  <device>/intent.json   the vendor-neutral intent the spec compiles to
  <device>/state.txt     the flattened desired state, one "path = value"
                         line per setting in natural path order, as plan
                         compares it
  <device>/<file>        the platform's native payload (CLI lines,
                         CONFIG_DB JSON, gNMI SetRequest, host
                         operations), when the device's driver renders
                         offline; otherwise a note says why not

With -o DIR the files go under DIR (created as needed; existing files are
overwritten, others left alone) and render prints a summary (-v lists
every file, by its path); without it, everything is printed to stdout. The spec is loaded and linted first: a spec with errors is not
rendered. Output is deterministic. Credentials are never read.

With --yang-dir DIR every YANG-modelled payload (gNMI SetRequests of the
openconfig and srlinux drivers, SONiC CONFIG_DB rows) is validated
offline against the vendor models in DIR/<set> (DIR/openconfig,
DIR/srlinux, DIR/sonic), or DIR itself when it holds .yang files: paths,
config vs state, types, ranges, patterns, enums, identities, list keys,
and references to objects the payload does not create. A fabctl built
with libyang (make build LIBYANG=1) gives libyang's verdict on the
configuration the payload leaves on the device: every must, when,
if-feature (the platform's features), leafref and mandatory node; a
default build validates with goyang alone and says so. The result, per
device and path, goes to stderr (or the JSON document's "yang" members).

With --json the document's member names are all snake_case, the
intent's too (intent.json keeps the intent's own encoding, with its Go
field names): the intent's management_address and management_transport
are how fabctl reaches the device, beside the device's plan address and
fabctl driver (docs/json-output.md).

Exit status: 0 when rendered (and valid), 1 on spec errors, a write
failure or a YANG violation, 64 on a usage error.`,
		Example: `  fabctl render fabric/
  fabctl render --device 'leaf*' -o rendered/ fabric/
  fabctl render --json --device switch.spine1 fabric/ | jq '.devices[0].state'
  fabctl render --yang-dir ../yang -o rendered/ fabric/`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = "."
			if len(args) == 1 {
				opts.Path = args[0]
			}
			if err := arguments.Globs("--device", opts.Devices); err != nil {
				return usageError(err)
			}
			opts.JSON = f.Global.JSON
			if runF != nil {
				return runF(opts)
			}
			return renderRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&opts.Devices, "device", nil, "Render only devices matching `glob`: a name, an address (switch.leaf*) or role:NAME (repeatable)")
	fl.StringVarP(&opts.OutDir, "output-dir", "o", "", "Write the files under `dir` instead of stdout")
	fl.BoolVarP(&opts.Verbose, "verbose", "v", false, "With -o, list every file written, per device (default: a summary)")
	fl.StringArrayVar(&opts.Vars, "var", nil, "Set a spec variable, `name=value` (repeatable)")
	fl.StringArrayVar(&opts.VarFiles, "var-file", nil, "Read spec variables from an HCL `file` of name = value lines (repeatable)")
	fl.StringVar(&opts.YANGDir, "yang-dir", "", "Validate YANG-modelled payloads against the models in `dir` (one sub-directory per model set: openconfig, srlinux, sonic)")
	_ = cmd.MarkFlagDirname("output-dir")
	_ = cmd.MarkFlagDirname("yang-dir")
	_ = cmd.MarkFlagFilename("var-file", "fabvars", "hcl")
	return cmd
}

// renderedDevice is one device's rendering.
type renderedDevice struct {
	Address  string             `json:"address"`
	Kind     string             `json:"kind"`
	Name     string             `json:"name"`
	Platform string             `json:"platform"`
	Driver   string             `json:"driver"`
	Intent   any                `json:"intent"` // view.IntentJSON: snake_case keys
	State    intent.State       `json:"state"`
	Native   []renderedFileJSON `json:"native"`
	Note     string             `json:"native_note,omitempty"`
	// Unmanaged are the settings the spec leaves as the device runs
	// them: not in State; UnmanagedNote says what the native payload
	// does with them.
	Unmanaged     []renderedUnmanaged    `json:"unmanaged,omitempty"`
	UnmanagedNote string                 `json:"unmanaged_note,omitempty"`
	YANG          *yangResult            `json:"yang,omitempty"` // with --yang-dir, for YANG-modelled payloads
	files         []drivers.RenderedFile // intent.json, state.txt, native files
	yang          *drivers.YANGPayload   // with --yang-dir: the payload to validate
}

type renderedUnmanaged struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// withoutUnmanaged is a unit's desired state without the settings the
// spec leaves unmanaged (as plan leaves them out), and those settings.
func withoutUnmanaged(u plan.Unit) (intent.State, []renderedUnmanaged) {
	x, ok := u.Intent.(intent.Unmanager)
	if !ok || !x.HasUnmanaged() {
		return u.State, nil
	}
	leaves := x.Leaves
	st := make(intent.State, len(u.State))
	var held []renderedUnmanaged
	for k, v := range u.State {
		if why, ok := leaves(k); ok {
			held = append(held, renderedUnmanaged{Path: k, Reason: why})
			continue
		}
		st[k] = v
	}
	sort.Slice(held, func(i, j int) bool { return plan.NaturalLess(held[i].Path, held[j].Path) })
	return st, held
}

type renderedFileJSON struct {
	Name string `json:"name"`
	Data string `json:"data"`
}

// renderJSONFormatVersion is the format_version of render's --json
// document without -o. 2.0 renamed the intent's keys to snake_case
// (view.IntentJSON); the other documents, render -o's included, are
// still jsonFormatVersion.
const renderJSONFormatVersion = "2.0"

type renderJSONDoc struct {
	FormatVersion string           `json:"format_version"`
	Fabric        string           `json:"fabric"`
	SpecHash      string           `json:"spec_hash"`
	Devices       []renderedDevice `json:"devices"`
}

func renderRun(opts *RenderOptions) error {
	f := opts.Factory
	lf, err := loadFabric(f, opts.Path, opts.Vars, opts.VarFiles)
	if errors.Is(err, errSpecInvalid) {
		format := formatHuman
		if opts.JSON {
			format = formatJSON
		}
		lf.Stopped = "nothing was rendered"
		return reportSpecErrors(opts.IO, lf, format)
	}
	if err != nil {
		return err
	}
	var units []plan.Unit
	for _, u := range plan.Units(lf.Fabric) {
		if plan.Selected(u.Device, opts.Devices, nil) {
			units = append(units, u)
		}
	}
	if len(units) == 0 {
		return FlagErrorf("no device matches --device %s", strings.Join(opts.Devices, ","))
	}
	sort.SliceStable(units, func(i, j int) bool {
		a, b := units[i].Device, units[j].Device
		if a.Kind != b.Kind {
			return a.Kind == intent.KindSwitch
		}
		return plan.NaturalLess(a.Name, b.Name)
	})
	reg := f.Drivers()
	var devs []renderedDevice
	for _, u := range units {
		d, err := renderDevice(reg, u, opts.YANGDir != "")
		if err != nil {
			return err
		}
		devs = append(devs, d)
	}
	code := ExitOK
	if opts.YANGDir != "" {
		if err := validateRendered(&yangModels{root: opts.YANGDir}, devs); err != nil {
			return err
		}
		code = reportYANG(opts.IO.ErrOut, devs, !opts.JSON)
	}
	if opts.OutDir != "" {
		if err := writeRendered(opts, devs); err != nil {
			return err
		}
		return exitWith(code)
	}
	if opts.JSON {
		if err := view.WriteJSON(opts.IO.Out, renderJSONDoc{FormatVersion: renderJSONFormatVersion, Fabric: lf.Fabric.Name, SpecHash: lf.Spec.SourceHash, Devices: devs}); err != nil {
			return err
		}
		return exitWith(code)
	}
	w := opts.IO.Out
	for i, d := range devs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "# %s (%s)\n", d.Address, d.Platform)
		for _, rf := range d.files {
			fmt.Fprintf(w, "\n## %s/%s\n", renderDir(d), rf.Name)
			w.Write(rf.Data)
			if len(rf.Data) > 0 && rf.Data[len(rf.Data)-1] != '\n' {
				fmt.Fprintln(w)
			}
		}
		if d.Note != "" {
			fmt.Fprintf(w, "\n## %s: no native payload: %s\n", renderDir(d), d.Note)
		}
		if d.UnmanagedNote != "" {
			fmt.Fprintf(w, "\n## %s: %s\n", renderDir(d), d.UnmanagedNote)
		}
	}
	return exitWith(code)
}

// renderDevice renders one device: intent, flattened state, and the
// native payload when its driver implements drivers.Renderer. The target
// carries no credentials: rendering never logs in.
func renderDevice(reg *drivers.Registry, u plan.Unit, wantYANG bool) (renderedDevice, error) {
	state, held := withoutUnmanaged(u)
	d := renderedDevice{Address: u.Device.Addr(), Kind: u.Device.Kind, Name: u.Device.Name, Platform: u.Device.Platform,
		Driver: drivers.For(u.Device), State: state, Native: []renderedFileJSON{}, Unmanaged: held}
	in, err := json.MarshalIndent(u.Intent, "", "  ")
	if err != nil {
		return d, fmt.Errorf("render %s: %w", d.Address, err)
	}
	if d.Intent, err = view.IntentJSON(u.Intent); err != nil {
		return d, fmt.Errorf("render %s: %w", d.Address, err)
	}
	var st bytes.Buffer
	for _, h := range held {
		fmt.Fprintf(&st, "# unmanaged, left as the device runs it: %s: %s\n", h.Path, strings.NewReplacer("\n", " ", "\r", " ").Replace(h.Reason))
	}
	keys := state.Keys()
	sort.SliceStable(keys, func(i, j int) bool { return plan.NaturalLess(keys[i], keys[j]) })
	for _, k := range keys {
		fmt.Fprintf(&st, "%s = %s\n", k, view.FormatValue(state[k]))
	}
	d.files = []drivers.RenderedFile{{Name: "intent.json", Data: append(in, '\n')}, {Name: "state.txt", Data: st.Bytes()}}

	drv, err := reg.New(d.Driver)
	if err != nil {
		d.Note = fmt.Sprintf("no driver for %s in this build", d.Driver)
		return d, nil
	}
	r, ok := drv.(drivers.Renderer)
	if !ok {
		d.Note = fmt.Sprintf("the %s driver does not render payloads without a device", d.Driver)
		return d, nil
	}
	files, err := r.Render(drivers.Target{Device: u.Device, Intent: u.Intent})
	if err != nil {
		return d, fmt.Errorf("render %s: %s driver: %w", d.Address, d.Driver, err)
	}
	for _, rf := range files {
		if err := checkRenderedName(rf.Name); err != nil {
			return d, fmt.Errorf("render %s: %s driver: %w", d.Address, d.Driver, err)
		}
		d.files = append(d.files, rf)
		d.Native = append(d.Native, renderedFileJSON{Name: rf.Name, Data: string(rf.Data)})
	}
	if len(files) > 0 && len(held) > 0 {
		// A device's whole configuration from its intent: render has no
		// device to leave these as they run.
		d.UnmanagedNote = fmt.Sprintf("the native payload is the device's whole configuration from its intent, the %s the spec leaves unmanaged included: render reads no device to leave them as they run; plan and apply do, and send nothing for them",
			plural(len(held), "setting", "settings"))
	}
	if yr, ok := drv.(drivers.YANGRenderer); ok && wantYANG {
		p, err := yr.YANGPayload(drivers.Target{Device: u.Device, Intent: u.Intent})
		if err != nil {
			return d, fmt.Errorf("render %s: %s driver: %w", d.Address, d.Driver, err)
		}
		d.yang = &p
	}
	return d, nil
}

// checkRenderedName keeps a driver's file names inside the device's
// directory and clear of render's own files.
func checkRenderedName(name string) error {
	clean := path.Clean(name)
	switch {
	case name == "" || clean != name || path.IsAbs(name) || clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(name, "\\"):
		return fmt.Errorf("rendered file name %q is not a clean relative path", name)
	case name == "intent.json" || name == "state.txt":
		return fmt.Errorf("rendered file name %q is reserved by fabctl render", name)
	}
	return nil
}

// renderDir is a device's directory under -o: its name, or for a
// subnet manager its address (sm.NAME), since it shares the name of the
// host it runs on.
func renderDir(d renderedDevice) string {
	if d.Kind == intent.KindSM {
		return d.Address
	}
	return d.Name
}

func writeRendered(opts *RenderOptions, devs []renderedDevice) error {
	w := opts.IO.Out
	native := 0
	for _, d := range devs {
		dir := filepath.Join(opts.OutDir, renderDir(d))
		var names []string
		for _, rf := range d.files {
			p := filepath.Join(dir, filepath.FromSlash(rf.Name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := safefile.WriteFile(p, rf.Data, 0o644, safefile.Output); err != nil {
				return err
			}
			names = append(names, p)
		}
		if len(d.Native) > 0 {
			native++
		}
		if opts.Verbose && !opts.JSON {
			line := fmt.Sprintf("%s (%s): %s", d.Address, d.Platform, strings.Join(names, ", "))
			if d.Note != "" {
				line += "; no native payload: " + d.Note
			}
			fmt.Fprintln(w, line)
		}
	}
	if opts.JSON {
		return view.WriteJSON(w, struct {
			FormatVersion string           `json:"format_version"`
			OutputDir     string           `json:"output_dir"`
			Devices       int              `json:"devices"`
			YANG          []yangDeviceJSON `json:"yang,omitempty"`
		}{jsonFormatVersion, opts.OutDir, len(devs), yangJSON(devs)})
	}
	fmt.Fprintf(w, "Rendered %s to %s: intent.json and state.txt in %s for each, a native payload for %d.\n",
		plural(len(devs), "device", "devices"), opts.OutDir, filepath.Join(opts.OutDir, "DEVICE")+string(filepath.Separator), native)
	if !opts.Verbose {
		writeRenderNotes(w, devs)
	}
	return nil
}

// writeRenderNotes says once per reason which devices have no native
// payload (every host of a pod shares one), not once per device.
func writeRenderNotes(w io.Writer, devs []renderedDevice) {
	var notes []string
	by := map[string][]string{}
	for _, d := range devs {
		if d.Note == "" {
			continue
		}
		if by[d.Note] == nil {
			notes = append(notes, d.Note)
		}
		by[d.Note] = append(by[d.Note], d.Address)
	}
	for _, n := range notes {
		addrs := by[n]
		which := strings.Join(addrs, ", ")
		if len(addrs) > 4 {
			which = fmt.Sprintf("%s, %s, ... %s", addrs[0], addrs[1], addrs[len(addrs)-1])
		}
		fmt.Fprintf(w, "No native payload for %s (%s): %s.\n", plural(len(addrs), "device", "devices"), which, n)
	}
}
