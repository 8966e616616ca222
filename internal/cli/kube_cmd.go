package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fabctl/fabctl/kube"
)

// NewCmdKube returns `fabctl kube`: the Kubernetes engine's own commands.
func NewCmdKube(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kube",
		Short: "Kubernetes engine: the manifests to install fabctl's CRD, RBAC, policy and agent DaemonSet",
		Long: `The Kubernetes engine runs the host side of fabctl on a cluster: fabctl apply
--engine kubernetes publishes one FabricHostConfig per node, and the
fabctl agent DaemonSet applies it on the node (docs/kubernetes.md).`,
		Args: usageArgs(cobra.NoArgs),
	}
	cmd.AddCommand(NewCmdKubeManifests(f, nil))
	return cmd
}

// kubeManifestsJSON is format_version 1.0 of fabctl kube manifests --json.
type kubeManifestsJSON struct {
	FormatVersion string                 `json:"format_version"`
	Image         string                 `json:"image"`
	Warnings      []string               `json:"warnings"`
	Objects       []map[string]any       `json:"objects"`
	Files         []kubeManifestFileJSON `json:"files"`
}

type kubeManifestFileJSON struct {
	Name string `json:"name"`
	YAML string `json:"yaml"`
}

// KubeManifestsOptions are the inputs of fabctl kube manifests.
type KubeManifestsOptions struct {
	IO       *IOStreams
	JSON     bool
	Manifest kube.ManifestOptions
	// DefaultImage is set when --image was not given: Manifest.Image is
	// then this build's default name, which no registry serves until the
	// image is pushed (warned).
	DefaultImage bool
}

// NewCmdKubeManifests returns `fabctl kube manifests`.
func NewCmdKubeManifests(f *Factory, runF func(*KubeManifestsOptions) error) *cobra.Command {
	opts := &KubeManifestsOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "manifests",
		Short: "Print the manifests that install the Kubernetes engine (review, then kubectl apply --server-side -f -)",
		Long: `Print the manifests fabctl ships for the Kubernetes engine, in apply order:
the fabctl-system namespace, the FabricHostConfig CRD (fabctl.io/v1alpha1),
the agent's ServiceAccount and RBAC (read FabricHostConfigs, patch status
and its Node only), the fabctl-publisher ClusterRole for the people who run
fabctl apply --engine kubernetes, a ValidatingAdmissionPolicy that lets an
agent write only its own node's objects and, on its Node, only the
fabctl.io/unconfigured:NoSchedule taint, and the agent DaemonSet.

The DaemonSet runs on the nodes --node-selector picks (a label selector as
kubectl -l takes it; default fabctl.io/fabric, the label fabctl topology
--format k8s-labels sets on each host of the spec), tolerates the
fabctl.io/unconfigured and nvidia.com/gpu taints and each --toleration, and
rolls a new image out at most --max-unavailable nodes at a time.

--image names the agent image the nodes pull. Without it the DaemonSet
names fabctl:<version>, the image make image builds from this fabctl, which
no registry serves until you push it (a warning says so).

With --json: the objects as JSON and the files as text.`,
		Example: `  fabctl kube manifests --image registry.example/fabctl:v0.3.0 | kubectl apply --server-side -f -
  fabctl kube manifests --image registry.example/fabctl:v0.3.0 --node-selector 'nvidia.com/gpu.present=true' \
      --toleration dedicated=gpu:NoSchedule
  fabctl kube manifests --json | jq '.objects[].kind'`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.Global.JSON
			if opts.Manifest.Image == "" {
				opts.Manifest.Image, opts.DefaultImage = kube.DefaultImage(readBuildInfo().Version), true
			}
			if runF != nil {
				return runF(opts)
			}
			return kubeManifestsRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Manifest.Image, "image", "", "The agent `image` of the DaemonSet (default fabctl:<version>: build one holding this binary with make image and push it)")
	fl.StringVar(&opts.Manifest.NodeSelector, "node-selector", "", "The nodes the agent runs on, a label `selector` as kubectl -l takes it (default "+kube.DefaultNodeSelector+")")
	fl.StringArrayVar(&opts.Manifest.Tolerations, "toleration", nil, "Tolerate this taint too, `KEY[=VALUE][:EFFECT]` as kubectl taint writes it (repeatable)")
	fl.StringVar(&opts.Manifest.MaxUnavailable, "max-unavailable", "", "The DaemonSet's rolling update: at most this `N|P%` of its nodes without a ready agent (default "+kube.DefaultMaxUnavailable+")")
	fl.IntVar(&opts.Manifest.ProbePort, "probe-port", 0, fmt.Sprintf("The `port` on each node's loopback where the agent answers its readiness probe (default %d)", kube.DefaultProbePort))
	return cmd
}

func kubeManifestsRun(opts *KubeManifestsOptions) error {
	ms, err := kube.Manifests(opts.Manifest)
	if err != nil {
		return FlagErrorf("%v", err)
	}
	var warnings []string
	if opts.DefaultImage {
		warnings = append(warnings, fmt.Sprintf("no --image: the DaemonSet names %s, the image `make image` builds from this fabctl, which no registry serves until you push it; pass --image REGISTRY/fabctl:TAG (docs/kubernetes.md, Install on a cluster)", opts.Manifest.Image))
	}
	if opts.JSON {
		objs, err := kube.Objects(opts.Manifest)
		if err != nil {
			return err
		}
		doc := kubeManifestsJSON{FormatVersion: jsonFormatVersion, Image: opts.Manifest.Image, Warnings: warnings}
		if doc.Warnings == nil {
			doc.Warnings = []string{}
		}
		for _, o := range objs {
			doc.Objects = append(doc.Objects, o.Object)
		}
		for _, m := range ms {
			doc.Files = append(doc.Files, kubeManifestFileJSON{Name: m.Name, YAML: m.YAML})
		}
		return writeJSON(opts.IO.Out, doc)
	}
	st := newStyles(opts.IO.ErrOut, opts.IO.ErrColorEnabled())
	for _, w := range warnings {
		fmt.Fprintf(opts.IO.ErrOut, "%s %s\n", st.Warn.Render("Warning:"), w)
	}
	for i, m := range ms {
		if i > 0 {
			fmt.Fprintln(opts.IO.Out, "---")
		}
		fmt.Fprintf(opts.IO.Out, "# fabctl kube manifests: %s\n%s", m.Name, strings.TrimLeft(m.YAML, "\n"))
	}
	return nil
}
