package kube

import (
	"bufio"
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
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

// Defaults of ManifestOptions.
const (
	// FabricLabel marks a node as a host of a fabric, its value the
	// fabric's name: fabctl topology --format k8s-labels sets it on each
	// host of the spec. The DaemonSet runs where it is set, unless told
	// otherwise (ManifestOptions.NodeSelector).
	FabricLabel = "fabctl.io/fabric"
	// DefaultNodeSelector selects the nodes that carry FabricLabel.
	DefaultNodeSelector = FabricLabel
	// DefaultMaxUnavailable is the DaemonSet's rolling-update bound.
	DefaultMaxUnavailable = "10%"
	// DefaultProbePort is the agent's readiness endpoint on the node's
	// loopback (telemetry serve listens on 9465 by default).
	DefaultProbePort = 9466
)

// ManifestOptions are what the shipped manifests leave to the cluster's
// operator (fabctl kube manifests' flags).
type ManifestOptions struct {
	// Image is the agent image the DaemonSet runs.
	Image string
	// NodeSelector picks the nodes the agent runs on: a label selector in
	// kubectl's -l syntax (key, !key, key=value, key!=value,
	// key in (a,b), key notin (a,b), joined by commas, all of which must
	// hold), rendered as the DaemonSet's required node affinity. Empty:
	// DefaultNodeSelector.
	NodeSelector string
	// Tolerations are added to the DaemonSet's own, each as
	// KEY[=VALUE][:EFFECT] (kubectl taint's syntax; no value: any value,
	// no effect: every effect).
	Tolerations []string
	// MaxUnavailable is the DaemonSet's rollingUpdate.maxUnavailable, a
	// count or a percentage (empty: DefaultMaxUnavailable).
	MaxUnavailable string
	// ProbePort is the port of the agent's readiness endpoint on the
	// node's loopback (0: DefaultProbePort).
	ProbePort int
}

// Manifests are the files fabctl ships, in apply order, with the agent
// image, placement and rollout of o filled in. Every value is written by
// a YAML encoder, never pasted as text, so no option can add a key or an
// object of its own.
func Manifests(o ManifestOptions) ([]Manifest, error) {
	vals, err := o.values()
	if err != nil {
		return nil, err
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
		y, err := fillManifest(string(b), vals)
		if err != nil {
			return nil, fmt.Errorf("manifest %s: %w", n, err)
		}
		out = append(out, Manifest{Name: strings.TrimPrefix(n, "manifests/"), YAML: y})
	}
	return out, nil
}

// values checks o and encodes each placeholder's value.
func (o ManifestOptions) values() (map[string]any, error) {
	if err := checkImage(o.Image); err != nil {
		return nil, err
	}
	aff, err := NodeAffinity(o.NodeSelector)
	if err != nil {
		return nil, err
	}
	var tols []any
	for _, t := range o.Tolerations {
		tol, err := ParseToleration(t)
		if err != nil {
			return nil, err
		}
		tols = append(tols, tol)
	}
	mu, err := parseMaxUnavailable(o.MaxUnavailable)
	if err != nil {
		return nil, err
	}
	port := o.ProbePort
	if port == 0 {
		port = DefaultProbePort
	}
	if port < 1 || port > 65535 {
		return nil, fmt.Errorf("probe port %d: want 1 to 65535", port)
	}
	return map[string]any{
		"IMAGE":           o.Image,
		"AFFINITY":        map[string]any{"nodeAffinity": aff},
		"TOLERATIONS":     tols,
		"MAX_UNAVAILABLE": mu,
		"PROBE_ADDR":      net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		"PROBE_PORT":      port,
	}, nil
}

// checkImage accepts a container image reference as the kubelet would
// pull it: [registry/]path[:tag][@algo:hex], no spaces or quotes (the
// value is encoded as a YAML string either way; this catches a flag
// given the wrong value).
func checkImage(image string) error {
	if image == "" {
		return errors.New("invalid agent image \"\": name the image the nodes pull")
	}
	if len(image) > 512 || strings.IndexFunc(image, func(r rune) bool {
		return r <= ' ' || r > '~' || r == '"' || r == '\'' || r == '\\'
	}) >= 0 {
		return fmt.Errorf("invalid agent image %q: a reference has no spaces, quotes or control characters", image)
	}
	return nil
}

var placeholder = regexp.MustCompile(`\{\{([A-Z_]+)\}\}`)

// fillManifest replaces the placeholders of a manifest: one alone on its line
// takes a block (a mapping, or list items continuing the list above it)
// at that line's indentation, or disappears when empty; one inside a line
// takes a flow scalar (JSON, which YAML reads as the same value).
func fillManifest(text string, vals map[string]any) (string, error) {
	var b strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if m := placeholder.FindStringSubmatch(trimmed); m != nil && m[0] == trimmed {
			v, ok := vals[m[1]]
			if !ok {
				return "", fmt.Errorf("no value for {{%s}}", m[1])
			}
			if l, isList := v.([]any); isList && len(l) == 0 {
				continue
			}
			y, err := yaml.Marshal(v)
			if err != nil {
				return "", err
			}
			indent := line[:len(line)-len(strings.TrimLeft(line, " "))]
			for _, yl := range strings.SplitAfter(strings.TrimRight(string(y), "\n"), "\n") {
				b.WriteString(indent + strings.TrimRight(yl, "\n") + "\n")
			}
			continue
		}
		var ferr error
		line = placeholder.ReplaceAllStringFunc(line, func(ph string) string {
			name := ph[2 : len(ph)-2]
			v, ok := vals[name]
			if !ok {
				ferr = fmt.Errorf("no value for {{%s}}", name)
				return ph
			}
			j, err := json.Marshal(v)
			if err != nil {
				ferr = err
			}
			return string(j)
		})
		if ferr != nil {
			return "", ferr
		}
		b.WriteString(line)
	}
	return b.String(), nil
}

// NodeAffinity is the required node affinity of a label selector in
// kubectl's -l syntax (empty: DefaultNodeSelector), parsed by
// apimachinery's labels package: every requirement a match expression of
// one node selector term, so all must hold.
func NodeAffinity(selector string) (map[string]any, error) {
	if strings.TrimSpace(selector) == "" {
		selector = DefaultNodeSelector
	}
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, fmt.Errorf("node selector %q: %v", selector, err)
	}
	reqs, _ := sel.Requirements()
	if len(reqs) == 0 {
		return nil, fmt.Errorf("node selector %q selects every node: name the label of the fabric hosts", selector)
	}
	ops := map[selection.Operator]string{
		selection.Equals: "In", selection.DoubleEquals: "In", selection.In: "In",
		selection.NotEquals: "NotIn", selection.NotIn: "NotIn",
		selection.Exists: "Exists", selection.DoesNotExist: "DoesNotExist",
		selection.GreaterThan: "Gt", selection.LessThan: "Lt",
	}
	var exprs []any
	for _, r := range reqs {
		op, ok := ops[r.Operator()]
		if !ok {
			return nil, fmt.Errorf("node selector %q: operator %q has no node-affinity form", selector, r.Operator())
		}
		e := map[string]any{"key": r.Key(), "operator": op}
		if vs := r.ValuesUnsorted(); len(vs) > 0 {
			sort.Strings(vs)
			e["values"] = vs
		}
		exprs = append(exprs, e)
	}
	return map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
		"nodeSelectorTerms": []any{map[string]any{"matchExpressions": exprs}}}}, nil
}

// ParseToleration reads KEY[=VALUE][:EFFECT] as kubectl taint writes a
// taint: without a value the toleration matches any value (Exists),
// without an effect every effect.
func ParseToleration(s string) (map[string]any, error) {
	spec, effect, hasEffect := strings.Cut(s, ":")
	key, value, hasValue := strings.Cut(spec, "=")
	bad := func(why string) error {
		return fmt.Errorf("toleration %q: %s (want KEY[=VALUE][:EFFECT], e.g. nvidia.com/gpu:NoSchedule)", s, why)
	}
	if errs := validation.IsQualifiedName(key); len(errs) > 0 {
		return nil, bad("key: " + strings.Join(errs, "; "))
	}
	t := map[string]any{"key": key, "operator": "Exists"}
	if hasValue {
		if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
			return nil, bad("value: " + strings.Join(errs, "; "))
		}
		t["operator"], t["value"] = "Equal", value
	}
	if hasEffect {
		switch effect {
		case "NoSchedule", "PreferNoSchedule", "NoExecute":
			t["effect"] = effect
		default:
			return nil, bad("effect must be NoSchedule, PreferNoSchedule or NoExecute")
		}
	}
	return t, nil
}

func parseMaxUnavailable(s string) (any, error) {
	if s == "" {
		s = DefaultMaxUnavailable
	}
	if p, ok := strings.CutSuffix(s, "%"); ok {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 100 {
			return nil, fmt.Errorf("max unavailable %q: want a count of at least 1 or a percentage from 1%% to 100%%", s)
		}
		return s, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return nil, fmt.Errorf("max unavailable %q: want a count of at least 1 or a percentage from 1%% to 100%%", s)
	}
	return n, nil
}

// Objects are the manifests' objects, in apply order.
func Objects(o ManifestOptions) ([]*unstructured.Unstructured, error) {
	ms, err := Manifests(o)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, m := range ms {
		r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(m.YAML)))
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return nil, fmt.Errorf("manifest %s: %w", m.Name, err)
			}
			j, err := yaml.YAMLToJSON(doc)
			if err != nil {
				return nil, fmt.Errorf("manifest %s: %w", m.Name, err)
			}
			if t := bytes.TrimSpace(j); len(t) == 0 || string(t) == "null" || string(t) == "{}" {
				continue
			}
			// Unstructured's own decoder: integers stay int64, as the
			// API machinery has them.
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(j); err != nil {
				return nil, fmt.Errorf("manifest %s: %w", m.Name, err)
			}
			out = append(out, u)
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
func InstallManifests(ctx context.Context, dc dynamic.Interface, o ManifestOptions) error {
	objs, err := Objects(o)
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
