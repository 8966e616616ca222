package kube

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/flowcontrol"
)

// Clients are the clients the engine uses: the dynamic client (and a
// REST client for the publisher's own JSON), for FabricHostConfig, Nodes,
// Leases and the manifests, no typed client. client-go's typed
// clients would link every API group's types and apply configurations
// into fabctl (+26 MB stripped, measured), the binary that ships itself to
// every SSH host as the agent.
type Clients struct {
	Config *rest.Config
	Dyn    dynamic.Interface
	// REST is a REST client on the same connections and rate limiter:
	// the publisher writes its objects' JSON and reads the answers into
	// FabricHostConfig directly, without the dynamic client's
	// unstructured round trips (objectBody, decodeObject, ListFabric,
	// the Tracker's watch).
	REST rest.Interface
}

// NodeGVR is core/v1 Node.
var NodeGVR = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}

// NewClients builds the clients from a rest config.
func NewClients(cfg *rest.Config) (*Clients, error) {
	c := rest.CopyConfig(cfg)
	if c.UserAgent == "" {
		c.UserAgent = "fabctl"
	}
	// The defaults (QPS 5, burst 10) would make publishing thousands of
	// objects take minutes; API Priority and Fairness protects the server.
	if c.QPS == 0 {
		c.QPS, c.Burst = 200, 400
	}
	// No client-wide Timeout: client-go puts it on the http.Client
	// (rest.HTTPClientFor), which cuts every watch at that age, so each
	// agent (and the publisher's tracker) re-listed and re-watched every
	// minute: 4,096 agents cost the apiserver as much again as the
	// rollout (make bench-kube). Ordinary requests are bounded by the
	// apiserver's --request-timeout (60 s by default) and the caller's
	// context; a dead connection is found by client-go's HTTP/2 health
	// check (k8s.io/apimachinery/pkg/util/net/http.go,
	// readIdleTimeoutSeconds 30 s, pingTimeoutSeconds 15 s).
	c.Timeout = 0
	if c.RateLimiter == nil && c.QPS > 0 {
		// One limiter for both clients (each would make its own).
		c.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(c.QPS, c.Burst)
	}
	hc, err := rest.HTTPClientFor(c)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfigAndClient(c, hc)
	if err != nil {
		return nil, err
	}
	rcfg := dynamic.ConfigFor(c)
	rcfg.ContentType, rcfg.AcceptContentTypes = "application/json", "application/json" // JSON, whatever the CBOR gates say
	rcfg.GroupVersion, rcfg.APIPath = nil, ""
	rc, err := rest.UnversionedRESTClientForConfigAndClient(rcfg, hc)
	if err != nil {
		return nil, err
	}
	return &Clients{Config: c, Dyn: dyn, REST: rc}, nil
}

// ControllerConfig is the client configuration of fabctl apply|plan|drift
// --engine kubernetes: kubeconfig as kubectl finds it (--kubeconfig,
// else $KUBECONFIG, else ~/.kube/config; clientcmd's default loading
// rules), with an optional context.
func ControllerConfig(kubeconfig, context string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	over := &clientcmd.ConfigOverrides{CurrentContext: context}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, over).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w (fabctl finds it as kubectl does: --kubeconfig, $KUBECONFIG, ~/.kube/config)", err)
	}
	return cfg, nil
}

// AgentConfig is the agent's client configuration: in a pod,
// rest.InClusterConfig (KUBERNETES_SERVICE_HOST/PORT, the projected
// token and CA). tokenDir, when set, is the directory holding token and
// ca.crt instead of /var/run/secrets/kubernetes.io/serviceaccount (a
// test knob: the harness acts as the kubelet).
func AgentConfig(tokenDir string) (*rest.Config, error) {
	if tokenDir == "" {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("in-cluster configuration: %w (fabctl agent --kube runs in the fabctl-agent DaemonSet's pods)", err)
		}
		return cfg, nil
	}
	cfg, err := inClusterAt(tokenDir)
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

// inClusterAt is rest.InClusterConfig with the service-account files in
// dir: the same environment variables, the token read from dir/token
// (re-read as it rotates, BearerTokenFile) and the CA from dir/ca.crt.
func inClusterAt(dir string) (*rest.Config, error) {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, errors.New("KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set (the in-cluster environment)")
	}
	tokenFile, caFile := filepath.Join(dir, "token"), filepath.Join(dir, "ca.crt")
	if _, err := os.Stat(tokenFile); err != nil {
		return nil, fmt.Errorf("service-account token: %w", err)
	}
	if _, err := os.Stat(caFile); err != nil {
		return nil, fmt.Errorf("service-account CA: %w", err)
	}
	return &rest.Config{
		Host:            "https://" + net.JoinHostPort(host, port),
		TLSClientConfig: rest.TLSClientConfig{CAFile: caFile},
		BearerTokenFile: tokenFile,
	}, nil
}
