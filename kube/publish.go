package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// Publish writes one host's spec with server-side apply (field manager
// fabctl) and returns the object as stored.
func Publish(ctx context.Context, cl *Clients, name string, sp HostSpec, attempt string) (*FabricHostConfig, error) {
	sp.Attempt = attempt
	b, err := objectBody(name, sp)
	if err != nil {
		return nil, err
	}
	backoff := 200 * time.Millisecond
	deadline := time.Now().Add(2 * time.Minute)
	var forbidden time.Time // the first 403
	for {
		raw, err := result(cl.REST.Patch(types.ApplyPatchType).AbsPath(objectPath(name)).
			Param("fieldManager", FieldManager).Param("force", "true").Body(b).Do(ctx))
		if err == nil {
			return decodeObject(name, raw)
		}
		// An apiserver or etcd outage (no API status, 5xx, 429) is waited
		// out, and so is a 403 for forbiddenWindow from the first one (an
		// apiserver that just restarted refuses until its authorizer caught
		// up: counted from the start of the write, an outage as long as the
		// window left no time for that); a 422 or 404 is final.
		if apierrors.IsForbidden(err) && forbidden.IsZero() {
			forbidden = time.Now()
		}
		retry := transient(err) || apierrors.IsForbidden(err) && time.Since(forbidden) < forbiddenWindow
		if !retry || time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("publishing %s %s: %w", Kind, name, err)
		}
		sleepCtx(ctx, backoff)
		backoff = min(2*backoff, 5*time.Second)
	}
}

// forbiddenWindow is how long Publish retries 403s after the first one.
var forbiddenWindow = 20 * time.Second

// objectPath is the API path of the FabricHostConfig named name ("" for
// the collection).
func objectPath(name string) string {
	p := "/apis/" + Group + "/" + Version + "/" + Resource
	if name != "" {
		p += "/" + name
	}
	return p
}

// objectBody is the JSON of an object as the publisher writes it
// (create, or server-side apply's configuration): apiVersion, kind, the
// name and the spec, with spec.hold written even when false (fabctl owns
// it: releasing is an explicit false). The publisher writes these bytes
// and reads the answer into FabricHostConfig directly: the dynamic
// client's unstructured maps cost two more JSON passes each way, for
// every host (measured: kube.create was 13% of the bench's CPU).
func objectBody(name string, sp HostSpec) ([]byte, error) {
	type spec struct {
		HostSpec
		Hold bool `json:"hold"` // shadows HostSpec's omitempty Hold
	}
	return json.Marshal(struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Metadata   map[string]string `json:"metadata"`
		Spec       spec              `json:"spec"`
	}{Group + "/" + Version, Kind, map[string]string{"name": name}, spec{sp, sp.Hold}})
}

// decodeObject reads the apiserver's answer.
func decodeObject(name string, raw []byte) (*FabricHostConfig, error) {
	var o FabricHostConfig
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, fmt.Errorf("%s %s: the apiserver's answer: %w", Kind, name, err)
	}
	return &o, nil
}

// result is a request's answer, and its error as the API server's
// Status says it (Result.Raw's error is the HTTP code's generic one,
// which every code makes IsUnexpectedServerError: transient would retry
// a 422 or an AlreadyExists for two minutes).
func result(r rest.Result) ([]byte, error) {
	raw, err := r.Raw()
	if err != nil {
		return raw, r.Error()
	}
	return raw, nil
}

// getObject reads the FabricHostConfig named name.
func getObject(ctx context.Context, cl *Clients, name string) (*FabricHostConfig, error) {
	raw, err := result(cl.REST.Get().AbsPath(objectPath(name)).Do(ctx))
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", Kind, name, err)
	}
	return decodeObject(name, raw)
}

// transient reports an error worth retrying: no answer from the server,
// or an answer that says "later".
func transient(err error) bool {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return true // connection refused or reset, timeout: no API status
	}
	return apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsInternalError(err) || apierrors.IsUnexpectedServerError(err)
}

// create publishes a host's first spec with a plain create (field
// manager fabctl); later publishes use server-side apply with the same
// manager.
func create(ctx context.Context, cl *Clients, name string, sp HostSpec) (*FabricHostConfig, error) {
	b, err := objectBody(name, sp)
	if err != nil {
		return nil, err
	}
	backoff := 200 * time.Millisecond
	start := time.Now()
	for {
		raw, err := result(cl.REST.Post().AbsPath(objectPath("")).Param("fieldManager", FieldManager).Body(b).Do(ctx))
		if err == nil {
			return decodeObject(name, raw)
		}
		if !transient(err) || time.Since(start) > 2*time.Minute || ctx.Err() != nil {
			if apierrors.IsAlreadyExists(err) {
				return nil, err
			}
			return nil, fmt.Errorf("publishing %s %s: %w", Kind, name, err)
		}
		sleepCtx(ctx, backoff)
		backoff = min(2*backoff, 5*time.Second)
	}
}

// timeoutMessage says why a released host counts as failed: no report
// in time; when the API server failed meanwhile (apiErr), that first, as
// the agent may have been unable to report.
func timeoutMessage(timeout time.Duration, node string, apiErr error) string {
	if apiErr != nil {
		return fmt.Sprintf("no report from the node's agent within %s, and the API server failed meanwhile (%v): the agent may not have been able to report; check the API server and etcd, then see the node's state with fabctl plan --engine kubernetes", timeout, apiErr)
	}
	return fmt.Sprintf("no report from the node's agent within %s: is the fabctl-agent DaemonSet running on node %s?", timeout, node)
}
