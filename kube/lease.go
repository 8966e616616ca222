package kube

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// LeaseName is the fabric lock's Lease in Namespace: fabctl-lock-<fabric>,
// the fabric name made a DNS label (characters other than letters,
// digits, '-' and '.' become '-', lower case; as the lock file's name
// with '_' for '-').
func LeaseName(fabric string) string {
	var b strings.Builder
	for _, r := range fabric {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.':
			b.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			b.WriteRune(r - 'A' + 'a')
		default:
			b.WriteByte('-')
		}
	}
	name := b.String()
	if name == "" || strings.Trim(name, ".") == "" {
		name = "fabric"
	}
	return "fabctl-lock-" + name
}

// LeaseInfoKey is the annotation holding the holder's record (the lock
// file's JSON: apply.LockInfo).
const LeaseInfoKey = "fabctl.io/lock"

// LeaseDuration is how long a lock outlives a holder that stopped
// renewing it (a crashed CLI): the next run may take it after that.
const LeaseDuration = 30 * time.Second

// LeaseGVR is coordination.k8s.io/v1 Lease. fabctl reads and writes it
// with the dynamic client and the few fields below (coordination/v1
// LeaseSpec's JSON names), not the typed client: that client would link
// every API group's types into the binary the agent ships to each host.
var LeaseGVR = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}

// LeaseMeta is a Lease's metadata as the lock reads and writes it.
type LeaseMeta struct {
	Name            string            `json:"name"`
	Namespace       string            `json:"namespace"`
	ResourceVersion string            `json:"resourceVersion,omitempty"`
	Annotations     map[string]string `json:"annotations,omitempty"`
}

// LeaseSpec is coordination/v1 LeaseSpec's fields the lock uses.
type LeaseSpec struct {
	HolderIdentity       *string           `json:"holderIdentity,omitempty"`
	LeaseDurationSeconds *int32            `json:"leaseDurationSeconds,omitempty"`
	AcquireTime          *metav1.MicroTime `json:"acquireTime,omitempty"`
	RenewTime            *metav1.MicroTime `json:"renewTime,omitempty"`
}

// Lease is a coordination.k8s.io/v1 Lease in Namespace.
type Lease struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Metadata   LeaseMeta `json:"metadata"`
	Spec       LeaseSpec `json:"spec"`
}

// Holder is the Lease's holder identity ("" when free).
func (l *Lease) Holder() string {
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// Held reports a Lease with a holder that renewed it within its duration.
func (l *Lease) Held(now time.Time) bool {
	if l.Holder() == "" || l.Spec.RenewTime == nil {
		return false
	}
	d := LeaseDuration
	if l.Spec.LeaseDurationSeconds != nil {
		d = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	return now.Sub(l.Spec.RenewTime.Time) < d
}

func leases(cl *Clients) dynamic.ResourceInterface {
	return cl.Dyn.Resource(LeaseGVR).Namespace(Namespace)
}

// GetLease reads the Lease named name.
func GetLease(ctx context.Context, cl *Clients, name string) (*Lease, error) {
	u, err := leases(cl).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	b, err := u.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var l Lease
	return &l, json.Unmarshal(b, &l)
}

func (l *Lease) unstructured() (*unstructured.Unstructured, error) {
	l.APIVersion, l.Kind = "coordination.k8s.io/v1", "Lease"
	b, err := json.Marshal(l)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	return u, u.UnmarshalJSON(b)
}

// CreateLease creates l (field manager fabctl).
func CreateLease(ctx context.Context, cl *Clients, l *Lease) error {
	u, err := l.unstructured()
	if err == nil {
		_, err = leases(cl).Create(ctx, u, metav1.CreateOptions{FieldManager: FieldManager})
	}
	return err
}

// UpdateLease writes l with its resourceVersion: a conflict says someone
// else wrote it since it was read.
func UpdateLease(ctx context.Context, cl *Clients, l *Lease) error {
	u, err := l.unstructured()
	if err == nil {
		_, err = leases(cl).Update(ctx, u, metav1.UpdateOptions{FieldManager: FieldManager})
	}
	return err
}

// LeaseHolder is the holder of a fabric's Lease ("" when free or absent).
func LeaseHolder(ctx context.Context, cl *Clients, fabric string) (string, error) {
	l, err := GetLease(ctx, cl, LeaseName(fabric))
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return l.Holder(), nil
}
