package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/testbed/clab"
)

// ContainerlabOptions are the inputs of fabctl testbed containerlab.
type ContainerlabOptions struct {
	IO      *IOStreams
	Factory *Factory
	JSON    bool
	Path    string
	Out     string
	Name    string
	Subnet  string
	Kinds   []string // PLATFORM=KIND
	Images  []string // KIND=IMAGE
	Strict  bool
	// AllowIncomplete writes a lab that lacks links or ports of the spec.
	AllowIncomplete bool
	Vars            []string
	VarFiles        []string
}

func newCmdTestbedContainerlab(f *Factory, runF func(*ContainerlabOptions) error) *cobra.Command {
	opts := &ContainerlabOptions{IO: f.IOStreams, Factory: f}
	cmd := &cobra.Command{
		Use:   "containerlab SPEC -o DIR",
		Short: "Write a containerlab lab of the spec: topology, startup configs, a spec pointing at the lab",
		Long: `Write a containerlab lab of SPEC into DIR, for users with docker, containerlab and
the vendor images (nothing is deployed):

  DIR/<lab>.clab.yml        one node per switch and host (canonical kinds: nokia_srlinux,
                            arista_ceos, sonic-vs, cisco_n9kv, nvidia_cumulusvx, linux),
                            static management addresses, links with the spec's MTU,
                            fabctl.dev/* labels naming each node's spec device
  DIR/configs/<node>/       each switch's configuration as fabctl renders it
  DIR/spec/                 the spec plus credentials for the lab (passwords from
                            FABCTL_CLAB_*_PASSWORD variables, which it prints with the
                            kinds' defaults) and an override file pointing every device
                            at its node: fabctl plan DIR/spec
  DIR/keyscan.sh            records the nodes' SSH host keys after the deploy

A lab proves configuration, idempotence and RDMA connectivity (Soft-RoCE), not lossless
behaviour: docs/testbed.md. A link whose port the node's kind cannot name, or a port
beyond the image's data ports, makes the lab incomplete: that is an error (nothing is
written) unless --allow-incomplete, which writes it with warnings on stderr and the counts
in the success line. --strict fails at the first link that cannot be wired, naming it.
InfiniBand fabrics have no containerlab equivalent.

Exit status: 0 written, 1 error (including an incomplete lab without --allow-incomplete).`,
		Example: `  fabctl testbed containerlab examples/testbed -o lab --allow-incomplete
  sudo containerlab deploy -t lab/testbed.clab.yml
  sh lab/keyscan.sh
  export FABCTL_CLAB_HOSTS_PASSWORD=multit00l ...   # the lines it prints, one per kind
  fabctl plan lab/spec`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = args[0]
			opts.JSON = f.Global.JSON
			if opts.Out == "" {
				return FlagErrorf("containerlab needs -o DIR")
			}
			if runF != nil {
				return runF(opts)
			}
			return containerlabRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Out, "output", "o", "", "Directory to write the lab into (created when missing)")
	fl.StringVar(&opts.Name, "name", "", "Lab name (default: the fabric's name, '-' as '_')")
	fl.StringVar(&opts.Subnet, "mgmt-subnet", clab.DefaultMgmtSubnet, "IPv4 management network of the lab; nodes get .11 upwards")
	fl.StringArrayVar(&opts.Kinds, "kind", nil, "Use another kind for a platform, `PLATFORM=KIND` (e.g. openconfig=arista_ceos; repeatable)")
	fl.StringArrayVar(&opts.Images, "image", nil, "Use another image for a kind, `KIND=IMAGE` (e.g. arista_ceos=ceos:4.33.1F; repeatable)")
	fl.BoolVar(&opts.Strict, "strict", false, "Fail at the first link that cannot be wired, naming it")
	fl.BoolVar(&opts.AllowIncomplete, "allow-incomplete", false, "Write the lab even when links are left out or ports are beyond an image's data ports")
	fl.StringArrayVar(&opts.Vars, "var", nil, "Set a spec variable, `name=value` (repeatable)")
	fl.StringArrayVar(&opts.VarFiles, "var-file", nil, "Read spec variables from an HCL `file` (repeatable)")
	return cmd
}

func kvFlags(flag string, vals []string) (map[string]string, error) {
	out := map[string]string{}
	for _, v := range vals {
		k, val, ok := strings.Cut(v, "=")
		if !ok || k == "" || val == "" {
			return nil, FlagErrorf("invalid --%s %q: want NAME=VALUE", flag, v)
		}
		out[k] = val
	}
	return out, nil
}

func containerlabRun(o *ContainerlabOptions) error {
	kinds, err := kvFlags("kind", o.Kinds)
	if err != nil {
		return err
	}
	images, err := kvFlags("image", o.Images)
	if err != nil {
		return err
	}
	lf, err := loadFabric(o.Factory, o.Path, o.Vars, o.VarFiles)
	if errors.Is(err, errSpecInvalid) {
		format := formatHuman
		if o.JSON {
			format = formatJSON
		}
		lf.Stopped = "no lab was written"
		return reportSpecErrors(o.IO, lf, format)
	}
	if err != nil {
		return err
	}
	lab, err := clab.Generate(lf.Spec, lf.Fabric, lf.Sources, clab.Options{Name: o.Name, MgmtSubnet: o.Subnet,
		Kinds: kinds, Images: images, Strict: o.Strict, Renderers: builtin.Registry()})
	if err != nil {
		return err
	}
	for _, w := range lab.Warnings {
		fmt.Fprintf(o.IO.ErrOut, "Warning: %s\n", w)
	}
	if lab.Incomplete() && !o.AllowIncomplete {
		return fmt.Errorf("the lab of %s would be incomplete (%s): nothing written; choose other kinds (--kind PLATFORM=KIND) or ports, or pass --allow-incomplete to write it anyway", o.Path, lab.Counts())
	}
	if err := lab.Write(o.Out); err != nil {
		return fmt.Errorf("writing the lab: %w", err)
	}
	if o.JSON {
		var files []string
		for _, f := range lab.Files {
			files = append(files, f.Name)
		}
		return writeJSON(o.IO.Out, struct {
			Lab          string            `json:"lab"`
			Dir          string            `json:"dir"`
			Topology     string            `json:"topology"`
			Files        []string          `json:"files"`
			Nodes        map[string]string `json:"nodes"`
			Complete     bool              `json:"complete"`
			Links        int               `json:"links"`
			LinksWritten int               `json:"links_written"`
			LinksLeftOut int               `json:"links_left_out"`
			PortsBeyond  int               `json:"ports_beyond_image"`
			Warnings     []string          `json:"warnings"`
		}{lab.Name, o.Out, filepath.Join(o.Out, lab.TopologyFile()), files, lab.Nodes, !lab.Incomplete(),
			lab.Links, lab.LinksWritten, lab.LinksLeftOut, lab.PortsBeyond, append([]string{}, lab.Warnings...)})
	}
	s := newStyles(o.IO.Out, o.IO.ColorEnabled())
	if lab.Incomplete() {
		fmt.Fprintf(o.IO.Out, "%s incomplete lab %s written to %s (%d nodes, %d files; %s)\n", s.Warn.Render("!"), lab.Name, o.Out, len(lab.Nodes), len(lab.Files), lab.Counts())
	} else {
		fmt.Fprintf(o.IO.Out, "%s lab %s written to %s (%d nodes, %d files; %s)\n", s.OK.Render("✔"), lab.Name, o.Out, len(lab.Nodes), len(lab.Files), lab.Counts())
	}
	fmt.Fprintf(o.IO.Out, "  sudo containerlab deploy -t %s\n", filepath.Join(o.Out, lab.TopologyFile()))
	fmt.Fprintf(o.IO.Out, "  sh %s\n", filepath.Join(o.Out, "keyscan.sh"))
	// The lab's credentials read each kind's password from the
	// environment (nothing is written into the lab): one export per kind,
	// with the password its nodes come up with.
	width := 0
	for _, p := range lab.Passwords {
		width = max(width, len(p.Env)+len(p.Default))
	}
	for _, p := range lab.Passwords {
		fmt.Fprintf(o.IO.Out, "  export %s='%s'%s  # %s nodes, user %s: the image's default (docs/testbed.md#credentials)\n",
			p.Env, p.Default, strings.Repeat(" ", width-len(p.Env)-len(p.Default)), p.Kind, p.User)
	}
	fmt.Fprintf(o.IO.Out, "  fabctl plan %s\n", filepath.Join(o.Out, "spec"))
	return nil
}
