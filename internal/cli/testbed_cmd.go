package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/testbed/local"
)

// TestbedOptions are the inputs of fabctl testbed up/down/status/serve.
type TestbedOptions struct {
	IO   *IOStreams
	JSON bool
	Spec string // spec file or directory ("" for serve)
	Dir  string // testbed directory ("" : <spec dir>/.fabctl/testbed)
	// YANGDir (up): SONiC YANG models the SONiC emulators validate against.
	YANGDir string
	// FabricNetns (up): the namespace of the fabric ends ("": fab-fabric).
	FabricNetns string
	// ReadyTimeout (up): how long to wait for the emulators (0: local's default).
	ReadyTimeout time.Duration
	// Getenv resolves the spec's env() secrets.
	Getenv func(string) string
	// StateDir (up, down): where plan and apply keep the fabric's applied
	// record ("": .fabctl beside the spec, as for plan and apply).
	StateDir string
}

func (o *TestbedOptions) dir() string {
	if o.Dir != "" {
		return o.Dir
	}
	return local.DefaultDir(o.Spec)
}

// NewCmdTestbed returns `fabctl testbed` and its subcommands.
func NewCmdTestbed(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "testbed <command>",
		Short: "Run a spec's fabric on this machine: emulated switches, hosts in network namespaces",
		Long: `Build a working fabric on this Linux machine from a spec, for trying fabctl and
for tests (needs root):

  - every switch whose platform has an emulator in this build (` + emulatedPlatforms() + `)
    is started on the spec's address (host:port on 127.0.0.0/8) with a
    freshly generated SSH host key and the spec's credentials; the keys are written to
    DIR/known_hosts, which the spec's credentials point at;
  - every host with connect = "netns:NAME" gets that network namespace, and
    each of its NICs is a veth pair whose other end is in the shared namespace
    fab-fabric (nothing is added to the root namespace).

Switches of platforms without an emulator yet are listed, not faked. The
emulators run in a background process until "fabctl testbed down", which
removes exactly what "up" made (recorded in DIR/testbed.json).

When the spec's password variable is not set, "up" generates a password,
writes it to DIR/password (mode 0600) and says how to export it; it is never
printed. DIR defaults to .fabctl/testbed beside the spec.`,
		Example: `  export FABCTL_TESTBED_PASSWORD=$(openssl rand -hex 12)
  fabctl testbed up examples/testbed
  fabctl plan examples/testbed
  fabctl testbed status examples/testbed
  fabctl testbed down examples/testbed`,
	}
	cmd.AddCommand(newCmdTestbedUp(f, nil), newCmdTestbedDown(f, nil), newCmdTestbedStatus(f, nil), newCmdTestbedServe(f, nil),
		newCmdTestbedContainerlab(f, nil), newCmdTestbedCopy(f, nil), newCmdTestbedFault(f, nil))
	return cmd
}

// testbedArgs fills the options every testbed command takes from its
// arguments and the global flags.
func (o *TestbedOptions) testbedArgs(f *Factory, args []string) {
	o.JSON, o.Spec, o.Getenv = f.Global.JSON, ".", f.Getenv
	if len(args) > 0 {
		o.Spec = args[0]
	}
}

// testbedOpts returns the options of a testbed command from its
// arguments (testbed fault's).
func testbedOpts(f *Factory, args []string) *TestbedOptions {
	o := &TestbedOptions{IO: f.IOStreams}
	o.testbedArgs(f, args)
	return o
}

// testbedRun runs a testbed command: runF when a test injects one.
func testbedRun(o *TestbedOptions, runF, run func(*TestbedOptions) error) error {
	if runF != nil {
		return runF(o)
	}
	return run(o)
}

func newCmdTestbedUp(f *Factory, runF func(*TestbedOptions) error) *cobra.Command {
	o := &TestbedOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "up SPEC",
		Short: "Start the emulated switches and create the host namespaces",
		Long: `Start the emulated switches and create the host namespaces and links of SPEC,
then wait until every emulator accepts connections (at most --ready-timeout;
the wait ends at once when the emulator process dies).

With --yang-dir DIR the emulators validate against the vendor's YANG models,
found per platform in DIR/sonic, DIR/openconfig and DIR/srlinux (as
../shared/yang lays them out): the SONiC emulators check every config
apply-patch and config replace result and refuse invalid ones like the real
GCU ("Given patch will produce invalid config"); the gNMI emulators check
every Set.

Exit status: 0 up, 1 error (nothing is left behind).`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.ReadyTimeout <= 0 {
				return &FlagError{Err: fmt.Errorf("--ready-timeout %s: want a positive duration such as 2m", o.ReadyTimeout)}
			}
			o.testbedArgs(f, args)
			return testbedRun(o, runF, testbedUpRun)
		},
	}
	cmd.Flags().StringVar(&o.Dir, "dir", "", "Testbed directory (default: .fabctl/testbed beside the spec)")
	cmd.Flags().StringVar(&o.YANGDir, "yang-dir", "", "`DIR` of YANG models, per platform in DIR/sonic, DIR/openconfig and DIR/srlinux: the emulators validate every SONiC patch (like GCU) and every gNMI Set against them")
	cmd.Flags().StringVar(&o.StateDir, "state-dir", "", "The `dir` plan and apply keep the fabric's applied record in, checked for a record of these devices from before this testbed (default: .fabctl beside the spec)")
	cmd.Flags().DurationVar(&o.ReadyTimeout, "ready-timeout", local.DefaultReadyTimeout, "How long to wait for every emulator to accept connections")
	cmd.Flags().StringVar(&o.FabricNetns, "fabric-netns", local.FabricNetns, "Network namespace holding the fabric ends of the host links (another name lets a second testbed of other namespaces run beside one that is up)")
	return cmd
}

func newCmdTestbedDown(f *Factory, runF func(*TestbedOptions) error) *cobra.Command {
	cmd, o := newCmdTestbedOfDir(f, runF, testbedDownRun, &cobra.Command{
		Use:   "down [SPEC]",
		Short: "Remove everything testbed up made",
		Long: `Stop the emulators and delete the namespaces, links and files that "testbed up"
made, as recorded in DIR/testbed.json.

What fabctl applied to the testbed's devices went with them: down also drops
those devices from the fabric's applied record (FABRIC.applied.json in the
state directory, .fabctl beside the spec or --state-dir), so the next
"testbed up" starts from the emulators' defaults and plan reports no drift
for it. A record written before this testbed came up is not this testbed's
and is kept (down says so). The journals stay; nothing else is touched.

Exit status: 0 removed, 1 no testbed or an error.`,
	})
	cmd.Flags().StringVar(&o.StateDir, "state-dir", "", "The `dir` plan and apply kept the fabric's applied record in (default: .fabctl beside the spec)")
	return cmd
}

func newCmdTestbedStatus(f *Factory, runF func(*TestbedOptions) error) *cobra.Command {
	cmd, _ := newCmdTestbedOfDir(f, runF, testbedStatusRun, &cobra.Command{
		Use:   "status [SPEC]",
		Short: "List the testbed's emulators, namespaces and links, and whether they are live",
		Long: `List what "testbed up" made and whether it is live: the emulator process, each
emulator's port, each namespace.

Exit status: 0 healthy, 1 no testbed, or something is down.`,
	})
	return cmd
}

// newCmdTestbedOfDir completes cmd as a testbed command of an optional
// SPEC and --dir that runs run (or runF), and returns its options.
func newCmdTestbedOfDir(f *Factory, runF, run func(*TestbedOptions) error, cmd *cobra.Command) (*cobra.Command, *TestbedOptions) {
	o := &TestbedOptions{IO: f.IOStreams}
	cmd.Args = usageArgs(cobra.MaximumNArgs(1))
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		o.testbedArgs(f, args)
		return testbedRun(o, runF, run)
	}
	cmd.Flags().StringVar(&o.Dir, "dir", "", "Testbed directory (default: .fabctl/testbed beside the spec)")
	return cmd, o
}

func newCmdTestbedServe(f *Factory, runF func(*TestbedOptions) error) *cobra.Command {
	o := &TestbedOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:    "serve --dir DIR",
		Short:  "Run the testbed's emulators until SIGTERM (started by testbed up)",
		Hidden: true,
		Args:   usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Dir == "" {
				return &FlagError{Err: errors.New("serve needs --dir")}
			}
			o.testbedArgs(f, nil)
			o.Spec = ""
			return testbedRun(o, runF, testbedServeRun)
		},
	}
	cmd.Flags().StringVar(&o.Dir, "dir", "", "Testbed directory")
	return cmd
}

// testbedServeRun runs the emulators until SIGTERM or SIGINT.
func testbedServeRun(o *TestbedOptions) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return local.Serve(ctx, o.Dir, o.IO.Out)
}

func testbedUpRun(o *TestbedOptions) error {
	st, err := local.Up(o.Spec, o.Dir, local.Options{Getenv: o.Getenv, Log: o.IO.ErrOut, YANGDir: o.YANGDir, FabricNetns: o.FabricNetns, ReadyTimeout: o.ReadyTimeout})
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(o.IO.Out, testbedJSON{jsonFormatVersion, st})
	}
	s := newStyles(o.IO.Out, o.IO.ColorEnabled())
	fmt.Fprintf(o.IO.Out, "%s testbed up in %s\n", s.OK.Render("✔"), st.Dir)
	writeTestbed(o, st)
	if path, held := staleApplied(&st.Record, o.StateDir); len(held) > 0 {
		es := newStyles(o.IO.ErrOut, o.IO.ColorEnabled())
		fmt.Fprintf(o.IO.ErrOut, "%s %s records what fabctl applied to %s before this testbed came up;\n"+
			"the emulators start from their defaults, so plan reports those settings as drift.\n"+
			"Delete it if it was an earlier testbed's (testbed down drops it when an apply ran on the testbed).\n",
			es.Warn.Render("Warning:"), path, plural(len(held), "device", "devices"))
	}
	return nil
}

func testbedDownRun(o *TestbedOptions) error {
	dir := o.dir()
	r, _ := local.ReadRecord(dir) // Down reports a missing or damaged record
	if err := local.Down(dir, o.IO.ErrOut); err != nil {
		return err
	}
	if err := forgetTestbedApplied(r, o.StateDir, o.IO.ErrOut); err != nil {
		return err
	}
	s := newStyles(o.IO.Out, o.IO.ColorEnabled())
	fmt.Fprintf(o.IO.Out, "%s testbed in %s removed\n", s.OK.Render("✔"), dir)
	return nil
}

// testbedApplied is the applied record of a testbed's fabric (in flag,
// else .fabctl beside the testbed's spec) and the testbed's devices it
// holds; the record is nil when there is none or it holds none of them.
func testbedApplied(r *local.Record, flag string) (dir string, a *plan.Applied, held []string, mod time.Time) {
	if r == nil || r.Fabric == "" || len(r.Devices) == 0 {
		return "", nil, nil, time.Time{}
	}
	dir = stateDir(r.Spec, flag)
	fi, err := os.Stat(plan.AppliedPath(dir, r.Fabric))
	if err != nil {
		return dir, nil, nil, time.Time{}
	}
	a, err = plan.LoadApplied(dir, r.Fabric)
	if err != nil {
		return dir, nil, nil, time.Time{}
	}
	for _, id := range r.Devices {
		if _, ok := a.Devices[id]; ok {
			held = append(held, id)
		}
	}
	if len(held) == 0 {
		return dir, nil, nil, time.Time{}
	}
	return dir, a, held, fi.ModTime()
}

// staleApplied names the applied record that describes the devices of a
// testbed that just came up, and which ones: it was written before the
// emulators existed, so what it holds is not on them.
func staleApplied(r *local.Record, flag string) (string, []string) {
	dir, a, held, mod := testbedApplied(r, flag)
	if a == nil || !mod.Before(r.Created) {
		return "", nil
	}
	return plan.AppliedPath(dir, a.Fabric), held
}

// forgetTestbedApplied drops a removed testbed's devices from the
// fabric's applied record: what fabctl applied to them went with the
// emulators, and a new testbed starts from the emulators' defaults (kept
// as the record would otherwise make the next plan report every setting
// as drift). A record last written before the testbed came up is not
// this testbed's: it is kept, and down says so.
func forgetTestbedApplied(r *local.Record, flag string, log io.Writer) error {
	dir, a, held, mod := testbedApplied(r, flag)
	if a == nil {
		return nil
	}
	path := plan.AppliedPath(dir, a.Fabric)
	if mod.Before(r.Created) {
		fmt.Fprintf(log, "kept %s: written before this testbed came up (%s), so it is not this testbed's; delete it if the next testbed should start without it\n",
			path, mod.UTC().Format(time.RFC3339))
		return nil
	}
	a.Forget(held)
	if err := a.Store(dir); err != nil {
		return fmt.Errorf("testbed removed, but its devices stay in %s (%w): delete it, or the next testbed's plan reports drift", path, err)
	}
	fmt.Fprintf(log, "forgot what fabctl applied to the testbed's %s (%s): they start from their defaults next time\n", plural(len(held), "device", "devices"), path)
	return nil
}

func testbedStatusRun(o *TestbedOptions) error {
	st, err := local.Stat(o.dir())
	if err != nil {
		return err
	}
	if o.JSON {
		if err := writeJSON(o.IO.Out, testbedJSON{jsonFormatVersion, st}); err != nil {
			return err
		}
	} else {
		writeTestbed(o, st)
	}
	if !st.Healthy() {
		if !o.JSON {
			fmt.Fprintln(o.IO.ErrOut, "testbed is not healthy: something it made is gone (fabctl testbed down, then up)")
		}
		return exitWith(ExitError)
	}
	return nil
}

// writeTestbed prints the human view of a testbed.
func writeTestbed(o *TestbedOptions, st *local.Status) {
	w := o.IO.Out
	s := newStyles(w, o.IO.ColorEnabled())
	mark := func(ok bool) string {
		if ok {
			return s.OK.Render("up")
		}
		return s.Fail.Render("down")
	}
	fmt.Fprintf(w, "spec %s\n", st.Spec)
	if len(st.Emulators) > 0 {
		fmt.Fprintf(w, "emulators (pid %d, %s):\n", st.PID, mark(st.Running))
		for _, e := range st.Emulators {
			proto := drivers.TransportSSH
			if p, ok := builtin.Platform(e.Platform); ok {
				proto = p.Transport // gnmi: a gNMI target over TLS
			}
			fmt.Fprintf(w, "  %-8s %-10s %-4s %s@%s  %s\n", e.Name, e.Platform, proto, e.Username, e.Address, mark(st.Reachable[e.Name]))
		}
	}
	for _, sk := range st.Skipped {
		fmt.Fprintf(w, "  %s %s\n", s.Warn.Render("skipped"), sk.Reason)
	}
	if len(st.Namespaces) > 0 {
		ns := append([]string(nil), st.Namespaces...)
		sort.Strings(ns)
		var parts []string
		for _, n := range ns {
			parts = append(parts, n+" "+mark(st.NetnsLive[n]))
		}
		fmt.Fprintf(w, "namespaces: %s\n", strings.Join(parts, ", "))
	}
	for _, l := range st.Links {
		if l.Switch != "" {
			fmt.Fprintf(w, "  %s: %s (netns %s) <-> %s:%s (veth %s, netns %s)\n", l.Host, l.NIC, l.Netns, l.Switch, l.Port, l.Peer, st.FabricNetns)
			continue
		}
		fmt.Fprintf(w, "  %s: %s (netns %s) <-> %s (netns %s)\n", l.Host, l.NIC, l.Netns, l.Peer, st.FabricNetns)
	}
	portOf := map[string]string{}
	for _, p := range st.Ports {
		portOf[p.Veth] = p.Switch + ":" + p.Port
	}
	for _, t := range st.Trunks {
		fmt.Fprintf(w, "  %s (veth %s) <-> %s (veth %s)\n", portOf[t.A], t.A, portOf[t.B], t.B)
	}
	if len(st.LLDP) > 0 {
		fmt.Fprintf(w, "lldpd: %d agents (one per switch and host namespace; sockets /run/lldpd.*.socket)\n", len(st.LLDP))
	} else if st.LLDPNote != "" {
		fmt.Fprintf(w, "  %s %s\n", s.Warn.Render("lldp"), st.LLDPNote)
	}
	f := st.Faults
	for _, m := range f.Miswired {
		fmt.Fprintf(w, "  %s %s and %s swapped at the switch\n", s.Warn.Render("fault"), m[0], m[1])
	}
	for _, d := range f.Down {
		fmt.Fprintf(w, "  %s %s down (cable pulled)\n", s.Warn.Render("fault"), d)
	}
	for _, k := range slices.Sorted(maps.Keys(f.SpeedMbps)) {
		fmt.Fprintf(w, "  %s %s reports %s\n", s.Warn.Render("fault"), k, linktruth.SpeedString(f.SpeedMbps[k]))
	}
	if len(st.Emulators) > 0 {
		fmt.Fprintf(w, "known_hosts %s/%s\n", st.Dir, local.KnownHostsFile)
	}
}

// testbedJSON is testbed up's and status's --json document: the record
// and its liveness (local.Status) under format_version.
type testbedJSON struct {
	FormatVersion string `json:"format_version"`
	*local.Status
}

// emulatedPlatforms lists the switch platforms with an emulator in this
// build, for the testbed help (the list drivers/builtin keeps).
func emulatedPlatforms() string {
	var names []string
	for _, p := range builtin.Platforms() {
		if p.Emulator != "" {
			names = append(names, p.Name)
		}
	}
	return strings.Join(names, ", ")
}
