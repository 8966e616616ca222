package kube

import (
	"context"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fabctl/fabctl/intent"
)

// NVIDIA nic-configuration-operator's API (github.com/Mellanox/
// nic-configuration-operator, api/v1alpha1): NicConfigurationTemplate
// (spec.template.roceOptimized.enabled sets trust and PFC at runtime,
// spec.template.roceOptimized.qos; status.nicDevices names the matched
// NicDevices) and NicDevice (status.node, status.ports[].networkInterface).
var (
	ncoTemplates = schema.GroupVersionResource{Group: "configuration.net.nvidia.com", Version: "v1alpha1", Resource: "nicconfigurationtemplates"}
	ncoDevices   = schema.GroupVersionResource{Group: "configuration.net.nvidia.com", Version: "v1alpha1", Resource: "nicdevices"}
)

// Overlap is a host NIC that nic-configuration-operator also configures.
type Overlap struct {
	Host     string `json:"host"`
	NIC      string `json:"nic"`
	Template string `json:"template"` // namespace/name of the NicConfigurationTemplate
	Device   string `json:"device"`   // the NicDevice
	Message  string `json:"message"`
}

// Overlaps finds the NICs of the host h that a roceOptimized
// NicConfigurationTemplate of nic-configuration-operator also manages:
// both would set the same trust and PFC settings, and each would see the
// other's writes as drift. byNode is operatorPorts' index.
func Overlaps(h *intent.Host, byNode map[string][]Overlap) []Overlap {
	var out []Overlap
	for _, x := range byNode[h.Name] {
		for _, n := range h.NICs {
			if n.Name == x.NIC {
				out = append(out, x)
				break
			}
		}
	}
	return out
}

// operatorPorts lists, by node, the network interfaces the NicDevices
// of roceOptimized NicConfigurationTemplates hold. No operator
// installed: none.
func operatorPorts(ctx context.Context, cl *Clients) (map[string][]Overlap, error) {
	tl, err := cl.Dyn.Resource(ncoTemplates).List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil // the CRD is not installed
	}
	if err != nil {
		return nil, fmt.Errorf("reading nic-configuration-operator templates: %w", err)
	}
	out := map[string][]Overlap{}
	for _, t := range tl.Items {
		on, _, _ := unstructured.NestedBool(t.Object, "spec", "template", "roceOptimized", "enabled")
		if !on {
			continue
		}
		devs, _, _ := unstructured.NestedStringSlice(t.Object, "status", "nicDevices")
		for _, dn := range devs {
			d, err := cl.Dyn.Resource(ncoDevices).Namespace(t.GetNamespace()).Get(ctx, dn, metav1.GetOptions{})
			if err != nil {
				continue
			}
			node, _, _ := unstructured.NestedString(d.Object, "status", "node")
			ports, _, _ := unstructured.NestedSlice(d.Object, "status", "ports")
			for _, p := range ports {
				pm, _ := p.(map[string]any)
				nif, _ := pm["networkInterface"].(string)
				if nif == "" || node == "" {
					continue
				}
				out[node] = append(out[node], Overlap{Host: node, NIC: nif, Template: t.GetNamespace() + "/" + t.GetName(), Device: dn,
					Message: fmt.Sprintf("host %s NIC %s is also configured by nic-configuration-operator (NicConfigurationTemplate %s/%s with roceOptimized, NicDevice %s): both set trust and PFC at runtime and would undo each other; leave the runtime QoS to one owner (disable roceOptimized in that template, or exclude the host from fabctl)",
						node, nif, t.GetNamespace(), t.GetName(), dn)})
			}
		}
	}
	for _, xs := range out {
		sort.Slice(xs, func(i, j int) bool { return xs[i].NIC < xs[j].NIC })
	}
	return out, nil
}
