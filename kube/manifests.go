package kube

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
)

//go:embed manifests/*.yaml
var manifestFS embed.FS

// DefaultImage is the agent image the DaemonSet names unless told
// otherwise: the name `make image` gives the image it builds from this
// fabctl (tools/image reads it from the binary; docs/kubernetes.md). Push
// it to a registry and pass --image.
func DefaultImage(version string) string {
	if version == "" || version == "dev" || strings.ContainsAny(version, " +") {
		version = "latest"
	}
	return "fabctl:" + version
}

// Manifest is one shipped file.
type Manifest struct {
	Name string // e.g. 10-crd.yaml
	YAML string
}

// Manifests are the files fabctl ships, in apply order, with the agent
// image filled in.
func Manifests(image string) ([]Manifest, error) {
	if image == "" || strings.ContainsAny(image, " \t\n\"'") {
		return nil, fmt.Errorf("invalid agent image %q", image)
	}
	names, err := fs.Glob(manifestFS, "manifests/*.yaml")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	out := make([]Manifest, 0, len(names))
	for _, n := range names {
		b, err := manifestFS.ReadFile(n)
		if err != nil {
			return nil, err
		}
		out = append(out, Manifest{Name: strings.TrimPrefix(n, "manifests/"), YAML: strings.ReplaceAll(string(b), "{{IMAGE}}", image)})
	}
	return out, nil
}

// Objects are the manifests' objects, in apply order.
func Objects(image string) ([]*unstructured.Unstructured, error) {
	ms, err := Manifests(image)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, m := range ms {
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader([]byte(m.YAML)), 4096)
		for {
			var obj map[string]any
			if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return nil, fmt.Errorf("manifest %s: %w", m.Name, err)
			}
			if len(obj) == 0 {
				continue
			}
			out = append(out, &unstructured.Unstructured{Object: obj})
		}
	}
	return out, nil
}

// shipped maps the kinds the manifests hold to their resources (and
// whether they are namespaced): the shipped set is fixed, so no
// discovery is needed.
var shipped = map[schema.GroupVersionKind]struct {
	resource   string
	namespaced bool
}{
	{Version: "v1", Kind: "Namespace"}:                                                               {"namespaces", false},
	{Version: "v1", Kind: "ServiceAccount"}:                                                          {"serviceaccounts", true},
	{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}:                 {"customresourcedefinitions", false},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}:                         {"clusterroles", false},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"}:                  {"clusterrolebindings", false},
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicy"}:        {"validatingadmissionpolicies", false},
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicyBinding"}: {"validatingadmissionpolicybindings", false},
	{Group: "apps", Version: "v1", Kind: "DaemonSet"}:                                                {"daemonsets", true},
}

// InstallManifests applies the shipped manifests with server-side apply
// (field manager fabctl) and waits until the CRD is established: what
// `fabctl kube manifests | kubectl apply --server-side -f -` does.
func InstallManifests(ctx context.Context, dc dynamic.Interface, image string) error {
	objs, err := Objects(image)
	if err != nil {
		return err
	}
	force := true
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		r, ok := shipped[gvk]
		if !ok {
			return fmt.Errorf("manifest object %s %s: kind not in the shipped set", gvk, o.GetName())
		}
		gvr := gvk.GroupVersion().WithResource(r.resource)
		b, err := o.MarshalJSON()
		if err != nil {
			return err
		}
		var ri dynamic.ResourceInterface = dc.Resource(gvr)
		if r.namespaced {
			ri = dc.Resource(gvr).Namespace(o.GetNamespace())
		}
		if _, err := ri.Patch(ctx, o.GetName(), types.ApplyPatchType, b, metav1.PatchOptions{FieldManager: FieldManager, Force: &force}); err != nil {
			return fmt.Errorf("applying %s %s: %w", gvk.Kind, o.GetName(), err)
		}
		if gvk.Kind == "CustomResourceDefinition" {
			if err := waitEstablished(ctx, dc, gvr, o.GetName()); err != nil {
				return err
			}
		}
	}
	return nil
}

func waitEstablished(ctx context.Context, dc dynamic.Interface, gvr schema.GroupVersionResource, name string) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		u, err := dc.Resource(gvr).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			for _, c := range conds {
				m, _ := c.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("CRD %s not established after 60s (last error: %v)", name, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
