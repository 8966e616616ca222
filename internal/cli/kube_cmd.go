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
	cmd.AddCommand(newCmdKubeManifests(f))
	return cmd
}

// kubeManifestsJSON is format_version 1.0 of fabctl kube manifests --json.
type kubeManifestsJSON struct {
	FormatVersion string                 `json:"format_version"`
	Image         string                 `json:"image"`
	Objects       []map[string]any       `json:"objects"`
	Files         []kubeManifestFileJSON `json:"files"`
}

type kubeManifestFileJSON struct {
	Name string `json:"name"`
	YAML string `json:"yaml"`
}

func newCmdKubeManifests(f *Factory) *cobra.Command {
	var image string
	cmd := &cobra.Command{
		Use:   "manifests",
		Short: "Print the manifests that install the Kubernetes engine (review, then kubectl apply --server-side -f -)",
		Long: `Print the manifests fabctl ships for the Kubernetes engine, in apply order:
the fabctl-system namespace, the FabricHostConfig CRD (fabctl.io/v1alpha1),
the agent's ServiceAccount and RBAC (read FabricHostConfigs, patch status
and its Node only), the fabctl-publisher ClusterRole for the people who run
fabctl apply --engine kubernetes, a ValidatingAdmissionPolicy that lets an
agent write only its own node's objects, and the agent DaemonSet.

With --json: the objects as JSON and the files as text.`,
		Example: `  fabctl kube manifests --image registry.example/fabctl:v0.3.0 | kubectl apply --server-side -f -
  fabctl kube manifests --json | jq '.objects[].kind'`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if image == "" {
				image = kube.DefaultImage(readBuildInfo().Version)
			}
			ms, err := kube.Manifests(image)
			if err != nil {
				return FlagErrorf("--image: %v", err)
			}
			if f.Global.JSON {
				objs, err := kube.Objects(image)
				if err != nil {
					return err
				}
				doc := kubeManifestsJSON{FormatVersion: jsonFormatVersion, Image: image}
				for _, o := range objs {
					doc.Objects = append(doc.Objects, o.Object)
				}
				for _, m := range ms {
					doc.Files = append(doc.Files, kubeManifestFileJSON{Name: m.Name, YAML: m.YAML})
				}
				return writeJSON(f.IOStreams.Out, doc)
			}
			for i, m := range ms {
				if i > 0 {
					fmt.Fprintln(f.IOStreams.Out, "---")
				}
				fmt.Fprintf(f.IOStreams.Out, "# fabctl kube manifests: %s\n%s", m.Name, strings.TrimLeft(m.YAML, "\n"))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&image, "image", "", "The agent `image` of the DaemonSet (default fabctl:<version>: build one holding this binary)")
	return cmd
}
