// Package kube is fabctl's Kubernetes engine: the FabricHostConfig API
// (fabctl.io/v1alpha1, one cluster-scoped object per node, named after
// it), the manifests fabctl ships (CRD, RBAC, the per-node admission
// policy, the agent DaemonSet), the client configuration (kubeconfig as
// kubectl finds it, or in-cluster), and the controller side of the
// engine: publishing intents in batches, reading status for plan and
// drift, the fabric lock as a coordination.k8s.io Lease, and the check
// for an overlapping owner (NVIDIA nic-configuration-operator).
//
// The agent side (fabctl agent --kube) is in package agent (kube.go); it
// uses this package's types and client. docs/kubernetes.md describes the
// engine.
package kube

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// API identity.
const (
	Group    = "fabctl.io"
	Version  = "v1alpha1"
	Kind     = "FabricHostConfig"
	Resource = "fabrichostconfigs"
	// Protocol is the version of the FabricHostConfig envelope
	// (spec.protocol): how spec.intent is to be read. An agent refuses an
	// object of another protocol (Applied=False, reason Incompatible) and
	// leaves the host untouched.
	Protocol = 1
	// FieldManager is fabctl's server-side apply field manager.
	FieldManager = "fabctl"
	// Namespace is where the agent DaemonSet, its ServiceAccount and the
	// fabric Leases live.
	Namespace = "fabctl-system"
	// ServiceAccount is the agent's service account.
	ServiceAccount = "fabctl-agent"
	// TaintKey is the scheduling gate: a node carries
	// fabctl.io/unconfigured:NoSchedule until its agent verified the
	// node's configuration.
	TaintKey = "fabctl.io/unconfigured"
	// NodeNameExtra is the user extra a pod-bound service-account token
	// carries (ServiceAccountTokenPodNodeInfo, GA in 1.32): the node the
	// pod is bound to.
	NodeNameExtra = "authentication.kubernetes.io/node-name"
)

// GVR is the FabricHostConfig resource.
var GVR = schema.GroupVersionResource{Group: Group, Version: Version, Resource: Resource}

// Condition types.
const (
	CondApplied  = "Applied"
	CondDrifted  = "Drifted"
	CondDegraded = "Degraded"
)

// Condition reasons.
const (
	ReasonApplied      = "Applied"      // planned, applied, read back: live = desired
	ReasonUnchanged    = "Unchanged"    // live already matched
	ReasonApplying     = "Applying"     // the agent is converging this generation
	ReasonFailed       = "ApplyFailed"  // the transaction failed; the host was restored
	ReasonPartial      = "NotRestored"  // the transaction failed and could not be restored
	ReasonVerify       = "VerifyFailed" // applied, but the read-back differs
	ReasonReadFailed   = "ReadFailed"   // the live state could not be read
	ReasonIncompatible = "Incompatible" // spec.protocol is not this agent's
	ReasonIncorrect    = "IncorrectSpec"
	ReasonHeld         = "Held"     // spec.hold: not applied until released
	ReasonNoDrift      = "NoDrift"  // live DCB state is where the last apply left it
	ReasonDrift        = "DCBDrift" // a NIC's DCB state moved
	ReasonNICOK        = "AllNICsOK"
	ReasonNICIssues    = "NICIssues"
)

// Per-NIC reasons (status.nics).
const (
	NICVerified    = "Verified"     // applied (or already right) and read back
	NICDiffers     = "StillDiffers" // read back different after the apply
	NICFailed      = "ApplyFailed"  // the transaction failed on this NIC
	NICReadFailed  = "ReadFailed"   // this NIC could not be read
	NICNotVerified = "NotVerified"  // the host failed elsewhere first
)

// FabricHostConfig is one node's desired host configuration and the
// agent's report on it.
type FabricHostConfig struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   ObjectMeta `json:"metadata"`
	Spec       HostSpec   `json:"spec"`
	Status     HostStatus `json:"status,omitempty"`
}

// ObjectMeta is the part of metadata fabctl reads.
type ObjectMeta struct {
	Name            string            `json:"name"`
	Generation      int64             `json:"generation,omitempty"`
	ResourceVersion string            `json:"resourceVersion,omitempty"`
	Labels          map[string]string `json:"labels,omitempty"`
}

// HostSpec is what the controller publishes.
type HostSpec struct {
	// Fabric is the spec's fabric name (a selectable field: list one
	// fabric's objects with --field-selector spec.fabric=NAME).
	Fabric string `json:"fabric"`
	// Protocol is the envelope version (Protocol).
	Protocol int `json:"protocol"`
	// Revision is a hash of Intent (Revision), what status.observedRevision
	// is compared with.
	Revision string `json:"revision"`
	// Intent is the compiled host intent (intent.Host as JSON).
	Intent json.RawMessage `json:"intent,omitempty"`
	// Hold keeps the agent from applying this revision until the
	// controller releases it (the rollout gate).
	Hold bool `json:"hold,omitempty"`
	// Attempt is set when the publisher retries a revision the agent
	// failed (a new generation with the same intent).
	Attempt string `json:"attempt,omitempty"`
}

// HostStatus is what the agent reports.
type HostStatus struct {
	ObservedGeneration int64  `json:"observedGeneration,omitempty"`
	ObservedRevision   string `json:"observedRevision,omitempty"`
	// Agent is the agent's build identity and version.
	Agent string `json:"agent,omitempty"`
	// Changes is the number of settings the last apply changed.
	Changes int `json:"changes,omitempty"`
	// Applies counts the transactions with changes this agent process made
	// (a restarted apiserver must not make it apply twice).
	Applies    int64       `json:"applies,omitempty"`
	Conditions []Condition `json:"conditions,omitempty"`
	// NICs is the per-NIC report behind Degraded and Drifted.
	NICs []NICStatus `json:"nics,omitempty"`
	// Diff is a bounded summary of the last failed verification:
	// "path: want X, live Y".
	Diff []string `json:"diff,omitempty"`
	// Drift lists the settings the DCB watch saw change since the last
	// apply (at most 32).
	Drift []DriftEntry `json:"drift,omitempty"`
}

// DriftEntry is one setting changed outside fabctl.
type DriftEntry struct {
	Path    string `json:"path"`
	Applied string `json:"applied"`
	Live    string `json:"live"`
}

// Condition is a metav1.Condition's JSON shape.
type Condition struct {
	Type               string `json:"type"`
	Status             string `json:"status"` // True | False | Unknown
	ObservedGeneration int64  `json:"observedGeneration,omitempty"`
	LastTransitionTime string `json:"lastTransitionTime"`
	Reason             string `json:"reason"`
	Message            string `json:"message"`
}

// NICStatus is one NIC's state as the agent saw it.
type NICStatus struct {
	Name    string `json:"name"`
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
}

// Cond returns the condition of type t, nil when absent.
func (s *HostStatus) Cond(t string) *Condition {
	for i := range s.Conditions {
		if s.Conditions[i].Type == t {
			return &s.Conditions[i]
		}
	}
	return nil
}

// IsTrue reports whether condition t is True.
func (s *HostStatus) IsTrue(t string) bool {
	c := s.Cond(t)
	return c != nil && c.Status == "True"
}

// AppliedCurrent reports whether the agent has applied and verified this
// object's current generation.
func (o *FabricHostConfig) AppliedCurrent() bool {
	c := o.Status.Cond(CondApplied)
	return c != nil && c.Status == "True" && o.Status.ObservedGeneration == o.Metadata.Generation &&
		o.Status.ObservedRevision == o.Spec.Revision
}

// FailedCurrent reports whether the agent tried this generation and
// failed (Applied=False with a failure reason, not Applying or Held).
func (o *FabricHostConfig) FailedCurrent() bool {
	c := o.Status.Cond(CondApplied)
	if c == nil || c.Status != "False" || o.Status.ObservedGeneration != o.Metadata.Generation {
		return false
	}
	return c.Reason != ReasonApplying && c.Reason != ReasonHeld
}

// PublishedIntent is a host intent as it is published: the connection
// is the agent's own (it works on the node it runs on), so Connect and
// Sudo are cleared; nothing secret is in an intent.
func PublishedIntent(h *intent.Host) *intent.Host {
	c := *h
	c.Connect = spec.Connect{Kind: "local"}
	c.Sudo = false
	c.Device.Driver = "local"
	c.Device.Address = ""
	c.Device.Credentials = ""
	return &c
}

// EncodeIntent is the published JSON of a host intent and its revision
// (sha256 of that JSON, 16 hex digits). The JSON is compact
// (compactJSON): zero-valued fields and the spec source positions
// (every "Src": where the spec file was on the controller, which would
// give the same intent a new revision on another machine) are left out,
// and object keys are sorted, so equal intents give equal revisions.
func EncodeIntent(h *intent.Host) (json.RawMessage, string, error) {
	b, err := compactJSON(PublishedIntent(h))
	if err != nil {
		return nil, "", fmt.Errorf("host %s: encoding its intent: %w", h.Name, err)
	}
	sum := sha256.Sum256(b)
	return b, hex.EncodeToString(sum[:])[:16], nil
}

// DecodeIntent reads spec.intent, refusing fields this build does not
// know (an intent from a newer fabctl).
func DecodeIntent(raw json.RawMessage) (*intent.Host, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, fmt.Errorf("spec.intent is empty")
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	var h intent.Host
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("spec.intent is not a host intent of this fabctl build: %v", err)
	}
	return &h, nil
}

// FromUnstructured converts an object of the dynamic client.
func FromUnstructured(u *unstructured.Unstructured) (*FabricHostConfig, error) {
	b, err := u.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var o FabricHostConfig
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, fmt.Errorf("%s %s: %w", Kind, u.GetName(), err)
	}
	return &o, nil
}

// ToUnstructured is the apply configuration of an object (no status).
func ToUnstructured(o *FabricHostConfig) (*unstructured.Unstructured, error) {
	m := map[string]any{
		"apiVersion": Group + "/" + Version,
		"kind":       Kind,
		"metadata":   map[string]any{"name": o.Metadata.Name},
	}
	var sp map[string]any
	b, err := json.Marshal(o.Spec)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &sp); err != nil {
		return nil, err
	}
	if !o.Spec.Hold {
		sp["hold"] = false // owned by fabctl: releasing is an explicit false
	}
	m["spec"] = sp
	if len(o.Metadata.Labels) > 0 {
		m["metadata"].(map[string]any)["labels"] = o.Metadata.Labels
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// statusPatch is a merge patch of the status subresource.
func statusPatch(st *HostStatus) ([]byte, error) {
	return json.Marshal(map[string]any{"status": st})
}

// StatusPatch is the JSON merge patch that sets an object's whole status
// (conditions and NICs are lists: a merge patch replaces them whole).
func StatusPatch(st *HostStatus) ([]byte, error) { return statusPatch(st) }

var _ runtime.Object = (*unstructured.Unstructured)(nil)
