// Package kubetb is the Kubernetes engine's test harness: a real etcd
// (Debian's etcd-server) and a real kube-apiserver (built from the module
// proxy by testbed/kube/build.sh) on random loopback ports in a temporary
// directory, with fabctl's shipped manifests applied. The nodes are not
// real: the harness plays the kubelet. For each node it creates a Node
// object (with the fabctl.io/unconfigured taint, as kubelet
// --register-with-taints would) and a Pod object bound to it (never run)
// only to mint that pod's service-account token with the TokenRequest API,
// and gives an agent process exactly a DaemonSet pod's environment
// (NODE_NAME, KUBERNETES_SERVICE_HOST/PORT, the token and CA files).
// docs/kubernetes.md ("Tests") and ../shared/reference/scale-out-kubernetes.md.
package kubetb

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/fabctl/fabctl/kube"
)

// Options configure Start.
type Options struct {
	// APIServer and Etcd are the binaries.
	APIServer, Etcd string
	// Dir holds the data, certificates and logs (a test's TempDir).
	Dir string
	// EtcdDataDir is etcd's data directory (default Dir/etcd).
	EtcdDataDir string
	// Image is the agent image the DaemonSet names (never pulled here).
	Image string
	// Install installs fabctl's manifests on the new cluster (nil:
	// kube.InstallManifests, server-side apply through client-go).
	Install func(ctx context.Context, c *Cluster) error
	// Log receives progress lines (nil: none).
	Log func(format string, args ...any)
}

// Cluster is a running etcd + kube-apiserver.
type Cluster struct {
	opts       Options
	etcdPort   int
	peerPort   int
	Port       int // the apiserver's secure port on 127.0.0.1
	Host       string
	CAFile     string
	adminToken string
	// Kubeconfig is an admin kubeconfig file (token auth, system:masters).
	Kubeconfig string
	Admin      *kube.Clients
	// Core is a typed core/v1 client (the harness's: fabctl itself uses
	// the dynamic client only).
	Core      corev1client.CoreV1Interface
	Apps      appsv1client.AppsV1Interface
	etcd      *exec.Cmd
	apiserver *exec.Cmd
}

// FreePort returns a loopback TCP port nobody listens on now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start starts etcd and the apiserver, waits until /readyz answers, and
// applies fabctl's manifests.
func Start(ctx context.Context, o Options) (*Cluster, error) {
	c := &Cluster{opts: o, Host: "127.0.0.1"}
	var err error
	for _, p := range []*int{&c.etcdPort, &c.peerPort, &c.Port} {
		if *p, err = FreePort(); err != nil {
			return nil, err
		}
	}
	if err := c.writeSecrets(); err != nil {
		return nil, err
	}
	if err := c.StartEtcd(); err != nil {
		return nil, err
	}
	if err := c.StartAPIServer(ctx); err != nil {
		c.Stop()
		return nil, err
	}
	cl, err := kube.NewClients(c.AdminConfig())
	if err != nil {
		c.Stop()
		return nil, err
	}
	c.Admin = cl
	if c.Core, err = corev1client.NewForConfig(c.AdminConfig()); err != nil {
		c.Stop()
		return nil, err
	}
	if c.Apps, err = appsv1client.NewForConfig(c.AdminConfig()); err != nil {
		c.Stop()
		return nil, err
	}
	install := o.Install
	if install == nil {
		install = func(ctx context.Context, c *Cluster) error {
			return kube.InstallManifests(ctx, c.Admin.Dyn, kube.ManifestOptions{Image: o.Image})
		}
	}
	if err := install(ctx, c); err != nil {
		c.Stop()
		return nil, fmt.Errorf("installing fabctl's manifests: %w", err)
	}
	return c, nil
}

func (c *Cluster) logf(format string, args ...any) {
	if c.opts.Log != nil {
		c.opts.Log(format, args...)
	}
}

func (c *Cluster) path(elem ...string) string {
	return filepath.Join(append([]string{c.opts.Dir}, elem...)...)
}

// writeSecrets makes the serving CA and certificate (127.0.0.1), the
// service-account signing key, the admin token file and kubeconfig.
func (c *Cluster) writeSecrets() error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "fabctl-kubetb-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(48 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	caCert, _ := x509.ParseCertificate(caDER)
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	srvTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(48 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"}}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	keyPEM := func(k *ecdsa.PrivateKey) []byte {
		b, _ := x509.MarshalECPrivateKey(k)
		return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: b})
	}
	saPub, _ := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	tok := make([]byte, 24)
	if _, err := rand.Read(tok); err != nil {
		return err
	}
	c.adminToken = fmt.Sprintf("%x", tok)
	c.CAFile = c.path("ca.crt")
	files := map[string][]byte{
		"ca.crt":     pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		"server.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srvDER}),
		"server.key": keyPEM(srvKey),
		"sa.key":     keyPEM(saKey),
		"sa.pub":     pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPub}),
		// --token-auth-file: token,user,uid,"group1,group2"
		"tokens.csv": []byte(c.adminToken + `,kubetb-admin,kubetb-admin,"system:masters"` + "\n"),
	}
	for name, b := range files {
		if err := os.WriteFile(c.path(name), b, 0o600); err != nil {
			return err
		}
	}
	c.Kubeconfig = c.path("admin.kubeconfig")
	return os.WriteFile(c.Kubeconfig, []byte(c.kubeconfig("kubetb-admin", c.adminToken)), 0o600)
}

func (c *Cluster) kubeconfig(user, token string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: kubetb
  cluster:
    server: https://127.0.0.1:%d
    certificate-authority: %s
users:
- name: %s
  user:
    token: %s
contexts:
- name: kubetb
  context: {cluster: kubetb, user: %s}
current-context: kubetb
`, c.Port, c.CAFile, user, token, user)
}

// WriteKubeconfig writes a kubeconfig for a bearer token (another
// "machine" running fabctl) and returns its path.
func (c *Cluster) WriteKubeconfig(name, token string) (string, error) {
	p := c.path(name + ".kubeconfig")
	return p, os.WriteFile(p, []byte(c.kubeconfig(name, token)), 0o600)
}

// AdminToken is the admin's bearer token.
func (c *Cluster) AdminToken() string { return c.adminToken }

// AdminConfig is the admin's rest config.
func (c *Cluster) AdminConfig() *rest.Config {
	return c.TokenConfig(c.adminToken)
}

// TokenConfig is a rest config authenticating with token.
func (c *Cluster) TokenConfig(token string) *rest.Config {
	return &rest.Config{Host: "https://127.0.0.1:" + strconv.Itoa(c.Port), BearerToken: token,
		TLSClientConfig: rest.TLSClientConfig{CAFile: c.CAFile}, QPS: 500, Burst: 1000}
}

// StartEtcd starts (or restarts) etcd on its ports and data directory.
func (c *Cluster) StartEtcd() error {
	client := "http://127.0.0.1:" + strconv.Itoa(c.etcdPort)
	peer := "http://127.0.0.1:" + strconv.Itoa(c.peerPort)
	// Flags: etcd 3.4 (Debian etcd-server 3.4.23) `etcd --help`.
	data := c.opts.EtcdDataDir
	if data == "" {
		data = c.path("etcd")
	}
	cmd := exec.Command(c.opts.Etcd, "--name", "kubetb", "--data-dir", data,
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "kubetb="+peer, "--log-level", "warn")
	if err := c.spawn(cmd, "etcd.log"); err != nil {
		return err
	}
	c.etcd = cmd
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if r, err := http.Get(client + "/health"); err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				return nil
			}
		}
		if exited(cmd) {
			return fmt.Errorf("etcd exited: %s", tail(c.path("etcd.log")))
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("etcd not healthy after 60s: %s", tail(c.path("etcd.log")))
}

// StartAPIServer starts (or restarts) kube-apiserver and waits for /readyz.
func (c *Cluster) StartAPIServer(ctx context.Context) error {
	// Flags: kube-apiserver v1.37 --help; the choices are those measured in
	// ../shared/reference/scale-out-kubernetes.md (section 1): it must
	// advertise 127.0.0.1 without an endpoint reconciler, and allow the
	// privileged DaemonSet.
	cmd := exec.Command(c.opts.APIServer,
		"--etcd-servers", "http://127.0.0.1:"+strconv.Itoa(c.etcdPort),
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", strconv.Itoa(c.Port),
		"--tls-cert-file", c.path("server.crt"), "--tls-private-key-file", c.path("server.key"),
		"--cert-dir", c.path("certs"),
		"--token-auth-file", c.path("tokens.csv"),
		"--authorization-mode", "RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", c.path("sa.pub"), "--service-account-signing-key-file", c.path("sa.key"),
		"--service-cluster-ip-range", "10.96.0.0/24",
		"--endpoint-reconciler-type", "none",
		"--allow-privileged=true",
		"--v", "1")
	if err := c.spawn(cmd, "kube-apiserver.log"); err != nil {
		return err
	}
	c.apiserver = cmd
	start := time.Now()
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: c.caPool()}}}
	deadline := start.Add(240 * time.Second)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("https://127.0.0.1:%d/readyz", c.Port), nil)
		req.Header.Set("Authorization", "Bearer "+c.adminToken)
		if r, err := hc.Do(req); err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				c.logf("kube-apiserver ready in %s", time.Since(start).Round(100*time.Millisecond))
				return nil
			}
		}
		if exited(cmd) {
			return fmt.Errorf("kube-apiserver exited: %s", tail(c.path("kube-apiserver.log")))
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(250 * time.Millisecond)
	}
	return fmt.Errorf("kube-apiserver not ready after 240s: %s", tail(c.path("kube-apiserver.log")))
}

func (c *Cluster) caPool() *x509.CertPool {
	pool := x509.NewCertPool()
	b, _ := os.ReadFile(c.CAFile)
	pool.AppendCertsFromPEM(b)
	return pool
}

func (c *Cluster) spawn(cmd *exec.Cmd, logName string) error {
	f, err := os.OpenFile(c.path(logName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return err
	}
	go func() { _ = cmd.Wait(); f.Close() }()
	return nil
}

func exited(cmd *exec.Cmd) bool {
	return cmd.Process == nil || cmd.Process.Signal(syscall.Signal(0)) != nil
}

// StopAPIServer stops kube-apiserver (SIGTERM, then SIGKILL).
func (c *Cluster) StopAPIServer() { stop(c.apiserver) }

// StopEtcd stops etcd.
func (c *Cluster) StopEtcd() { stop(c.etcd) }

// Stop stops both.
func (c *Cluster) Stop() {
	stop(c.apiserver)
	stop(c.etcd)
}

func stop(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	for i := 0; i < 100 && !exited(cmd); i++ {
		time.Sleep(100 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	for i := 0; i < 50 && !exited(cmd); i++ {
		time.Sleep(100 * time.Millisecond)
	}
}

// Log is the tail of a component's log ("etcd" or "kube-apiserver").
func (c *Cluster) Log(name string) string { return tail(c.path(name + ".log")) }

func tail(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	return strings.Join(lines, "\n")
}

// AddNode creates the Node object (tainted fabctl.io/unconfigured, as
// kubelet --register-with-taints would, and labelled as a host of a
// fabric, as fabctl topology --format k8s-labels would) and the agent's
// Pod on it, as the DaemonSet controller and the scheduler would; it
// returns the pod.
func (c *Cluster) AddNode(ctx context.Context, name string) (*corev1.Pod, error) {
	if err := c.CreateNode(ctx, name, map[string]string{kube.FabricLabel: "kubetb"}, nil); err != nil {
		return nil, err
	}
	return c.CreateAgentPod(ctx, name)
}

// CreateNode creates a Node object as a kubelet registers it: its
// hostname label and the given labels, the fabctl.io/unconfigured taint
// (kubelet --register-with-taints) and the given taints.
func (c *Cluster) CreateNode(ctx context.Context, name string, labels map[string]string, taints []corev1.Taint) error {
	l := map[string]string{"kubernetes.io/hostname": name}
	for k, v := range labels {
		l[k] = v
	}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l},
		Spec: corev1.NodeSpec{Taints: append([]corev1.Taint{{Key: kube.TaintKey, Effect: corev1.TaintEffectNoSchedule}}, taints...)}}
	if _, err := c.Core.Nodes().Create(ctx, n, metav1.CreateOptions{FieldManager: "kubelet"}); err != nil {
		return fmt.Errorf("node %s: %w", name, err)
	}
	return nil
}

// NodeReady plays the node's kubelet and the node lifecycle controller
// once the kubelet is up: the kubelet posts the Ready condition, and the
// controller lifts node.kubernetes.io/not-ready:NoSchedule, the taint the
// apiserver's TaintNodesByCondition admission puts on every new Node
// (kubernetes v1.37.2 plugin/pkg/admission/nodetaint/admission.go;
// pkg/controller/nodelifecycle/node_lifecycle_controller.go
// doNoScheduleTaintingPass). DaemonSet pods do not tolerate that taint
// (only not-ready:NoExecute): the DaemonSet runs on a node once it is
// Ready.
func (c *Cluster) NodeReady(ctx context.Context, name string) error {
	n, err := c.Core.Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	now := metav1.Now()
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		Message: "kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now}}
	if n, err = c.Core.Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{FieldManager: "kubelet"}); err != nil {
		return fmt.Errorf("node %s Ready: %w", name, err)
	}
	keep := n.Spec.Taints[:0]
	for _, t := range n.Spec.Taints {
		if t.Key != corev1.TaintNodeNotReady || t.Effect != corev1.TaintEffectNoSchedule {
			keep = append(keep, t)
		}
	}
	n.Spec.Taints = keep
	if _, err := c.Core.Nodes().Update(ctx, n, metav1.UpdateOptions{FieldManager: "kube-controller-manager"}); err != nil {
		return fmt.Errorf("node %s: lifting %s: %w", name, corev1.TaintNodeNotReady, err)
	}
	return nil
}

// daemonSet reads the agent DaemonSet the cluster holds (what fabctl's
// manifests installed).
func (c *Cluster) daemonSet(ctx context.Context) (*appsv1.DaemonSet, error) {
	ds, err := c.Apps.DaemonSets(kube.Namespace).Get(ctx, "fabctl-agent", metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("the agent DaemonSet: %w", err)
	}
	return ds, nil
}

// daemonPod is the pod the DaemonSet controller makes for node: the
// template, the namespace, the node, and the tolerations the controller
// adds to every daemon pod (kubernetes v1.37.2
// pkg/controller/daemon/daemon_controller.go NewPod and
// pkg/controller/daemon/util/daemonset_util.go
// AddOrUpdateDaemonPodTolerations; not importable outside
// k8s.io/kubernetes, so listed here).
func daemonPod(ds *appsv1.DaemonSet, node string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: *ds.Spec.Template.ObjectMeta.DeepCopy(), Spec: *ds.Spec.Template.Spec.DeepCopy()}
	p.Namespace = ds.Namespace
	p.Name = "fabctl-agent-" + node
	p.Spec.NodeName = node
	add := []corev1.Toleration{
		{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
		{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
		{Key: corev1.TaintNodeDiskPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: corev1.TaintNodePIDPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	}
	if p.Spec.HostNetwork {
		add = append(add, corev1.Toleration{Key: corev1.TaintNodeNetworkUnavailable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	}
	p.Spec.Tolerations = append(p.Spec.Tolerations, add...)
	return p
}

// Places reports whether the agent DaemonSet runs a pod on node, and if
// not why: the DaemonSet controller's own test (kubernetes v1.37.2
// pkg/controller/daemon/daemon_controller.go predicates) with the same
// library calls, k8s.io/component-helpers' required node affinity and
// untolerated NoSchedule/NoExecute taints.
func (c *Cluster) Places(ctx context.Context, node string) (bool, string, error) {
	ds, err := c.daemonSet(ctx)
	if err != nil {
		return false, "", err
	}
	n, err := c.Core.Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return false, "", err
	}
	p := daemonPod(ds, node)
	if ok, err := nodeaffinity.GetRequiredNodeAffinity(p).Match(n); err != nil || !ok {
		return false, fmt.Sprintf("node affinity does not match (labels %v)", n.Labels), err
	}
	t, untolerated := v1helper.FindMatchingUntoleratedTaint(klog.Background(), n.Spec.Taints, p.Spec.Tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoExecute || t.Effect == corev1.TaintEffectNoSchedule
	}, false)
	if untolerated {
		return false, "untolerated taint " + t.ToString(), nil
	}
	return true, "", nil
}

// CreateAgentPod creates the agent's pod on node from the DaemonSet's
// template, as the DaemonSet controller would, bound to the node (what
// the scheduler's binding does): the pod passes the apiserver's pod
// admission (Pod Security on the namespace, the priority class, the
// service account) as the real one would. It is never run.
func (c *Cluster) CreateAgentPod(ctx context.Context, node string) (*corev1.Pod, error) {
	ds, err := c.daemonSet(ctx)
	if err != nil {
		return nil, err
	}
	pod, err := c.Core.Pods(kube.Namespace).Create(ctx, daemonPod(ds, node), metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("agent pod of node %s: %w", node, err)
	}
	return pod, nil
}

// Taint puts the fabctl.io/unconfigured taint back on a node (a node
// re-registering after a reboot).
func (c *Cluster) Taint(ctx context.Context, name string) error {
	n, err := c.Core.Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	for _, t := range n.Spec.Taints {
		if t.Key == kube.TaintKey {
			return nil
		}
	}
	n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: kube.TaintKey, Effect: corev1.TaintEffectNoSchedule})
	_, err = c.Core.Nodes().Update(ctx, n, metav1.UpdateOptions{})
	return err
}

// Tainted reports whether a node carries fabctl.io/unconfigured.
func (c *Cluster) Tainted(ctx context.Context, name string) (bool, error) {
	n, err := c.Core.Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	for _, t := range n.Spec.Taints {
		if t.Key == kube.TaintKey {
			return true, nil
		}
	}
	return false, nil
}

// PodToken mints the service-account token of the agent's pod with the
// TokenRequest API, bound to the pod (what the kubelet projects into the
// pod): its user carries authentication.kubernetes.io/node-name.
func (c *Cluster) PodToken(ctx context.Context, pod *corev1.Pod) (string, error) {
	exp := int64(3600)
	tr := &authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{ExpirationSeconds: &exp,
		BoundObjectRef: &authnv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}}}
	got, err := c.Core.ServiceAccounts(kube.Namespace).CreateToken(ctx, kube.ServiceAccount, tr, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token of pod %s: %w", pod.Name, err)
	}
	return got.Status.Token, nil
}

// PodFiles writes the token and CA where the projected volume would put
// them (dir/token, dir/ca.crt) and returns dir.
func (c *Cluster) PodFiles(dir, token string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	ca, err := os.ReadFile(c.CAFile)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), ca, 0o600); err != nil {
		return "", err
	}
	return dir, os.WriteFile(filepath.Join(dir, "token"), []byte(token), 0o600)
}

// PodEnv is the environment the kubelet gives the DaemonSet's pod on
// node: the downward-API values and the in-cluster service variables.
func (c *Cluster) PodEnv(node string) []string {
	return []string{"NODE_NAME=" + node, "POD_NAMESPACE=" + kube.Namespace,
		"KUBERNETES_SERVICE_HOST=127.0.0.1", "KUBERNETES_SERVICE_PORT=" + strconv.Itoa(c.Port)}
}

// ErrNoBinaries says what to do when the binaries are missing.
var ErrNoBinaries = errors.New("kube-apiserver or etcd missing")

// TokenConfigDefault is the admin's config with client-go's rate limits
// left for kube.NewClients to set, as fabctl's CLI has them.
func (c *Cluster) TokenConfigDefault() *rest.Config {
	cfg := c.AdminConfig()
	cfg.QPS, cfg.Burst = 0, 0
	return cfg
}
