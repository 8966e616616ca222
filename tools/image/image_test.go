package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The inputs of the test image: a version and commit of our own, so the
// labels and the default name are seen to come from them.
const (
	testVersion = "v0.0.0-imagetest"
	testCommit  = "0123456789abcdef0123456789abcdef01234567"
	testSource  = "https://example.invalid/fabctl"
	testEpoch   = "1700000000"
)

var here = Platform{OS: runtime.GOOS, Arch: runtime.GOARCH}

func testArgs(out string, extra ...string) []string {
	return append([]string{"-repo", "../..", "-out", out, "-platforms", here.String(),
		"-version", testVersion, "-commit", testCommit, "-source", testSource, "-epoch", testEpoch}, extra...)
}

var fixture struct {
	once sync.Once
	res  Result
	opts Options
	out  string
	err  error
}

// built is the image the command writes for this machine's platform,
// built once per test binary.
func built(t *testing.T) (Result, Options) {
	t.Helper()
	fixture.once.Do(func() {
		fixture.out, fixture.err = os.MkdirTemp("", "fabctl-image-test-")
		if fixture.err == nil {
			var log bytes.Buffer
			fixture.res, fixture.opts, fixture.err = run(testArgs(fixture.out), &log)
		}
	})
	if fixture.err != nil {
		t.Fatalf("building the image: %v", fixture.err)
	}
	return fixture.res, fixture.opts
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fixture.out != "" {
		os.RemoveAll(fixture.out)
	}
	os.Exit(code)
}

// Same inputs, same bytes: the command run twice (fabctl built twice)
// writes identical archives and prints the same digest; another creation
// time gives another digest, so the comparison can fail.
func TestReproducible(t *testing.T) {
	first, _ := built(t)
	out2 := t.TempDir()
	var log bytes.Buffer
	second, _, err := run(testArgs(out2), &log)
	if err != nil {
		t.Fatal(err)
	}
	if first.Index != second.Index {
		t.Errorf("index digest differs between two builds: %s, %s", first.Index, second.Index)
	}
	if !strings.Contains(log.String(), "digest "+second.Index.String()+"\n") {
		t.Errorf("the command does not print the digest:\n%s", log.String())
	}
	files := func(r Result) []string {
		fs := []string{r.OCIArch, r.DigestTxt}
		for _, pi := range r.Images {
			fs = append(fs, pi.DockerArchive)
		}
		return fs
	}
	for i, f := range files(first) {
		if a, b := sha(t, f), sha(t, files(second)[i]); a != b {
			t.Errorf("%s differs between two builds: sha256 %s, %s", filepath.Base(f), a, b)
		}
	}
	if d, err := os.ReadFile(first.DigestTxt); err != nil || string(d) != first.Index.String()+"\n" {
		t.Errorf("%s: %q, %v; want the index digest", first.DigestTxt, d, err)
	}

	third, _, err := run(testArgs(t.TempDir(), "-epoch", "1700000001"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if third.Index == first.Index {
		t.Errorf("another creation time gave the same digest %s", third.Index)
	}
}

// The OCI layout read back with go-containerregistry: one index named
// after the image, one manifest per platform, the config the DaemonSet
// relies on, the labels, and a layer holding exactly the binary.
func TestReadBack(t *testing.T) {
	r, _ := built(t)
	epoch := time.Unix(1700000000, 0).UTC()
	if r.Name != "fabctl:"+testVersion {
		t.Errorf("image name %q, want the binary's default fabctl:%s", r.Name, testVersion)
	}
	top := layoutIndex(t, r.OCIDir)
	tm, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(tm.Manifests) != 1 || tm.Manifests[0].MediaType != types.OCIImageIndex || tm.Manifests[0].Digest != r.Index ||
		tm.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != r.Name {
		t.Fatalf("index.json: %+v; want one image index %s named %s", tm.Manifests, r.Index, r.Name)
	}
	idx, err := top.ImageIndex(r.Index)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Platform == nil || im.Manifests[0].Platform.Architecture != here.Arch || im.Manifests[0].Platform.OS != "linux" {
		t.Fatalf("index manifests %+v; want one for %s", im.Manifests, here)
	}
	if at := im.Manifests[0].ArtifactType; at != "" {
		t.Errorf("index descriptor artifactType %q: an image is no artifact (image-spec image-index.md), and skopeo 1.9 rewrites such an index", at)
	}
	if im.Annotations["org.opencontainers.image.version"] != testVersion {
		t.Errorf("index annotations %v", im.Annotations)
	}
	img, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	if mt, _ := img.MediaType(); mt != types.OCIManifestSchema1 {
		t.Errorf("manifest media type %s", mt)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"org.opencontainers.image.version":  testVersion,
		"org.opencontainers.image.revision": testCommit,
		"org.opencontainers.image.source":   testSource,
		"org.opencontainers.image.created":  "2023-11-14T22:13:20Z",
		"org.opencontainers.image.title":    "fabctl",
	}
	for k, v := range want {
		if cf.Config.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, cf.Config.Labels[k], v)
		}
	}
	if !slices.Equal(cf.Config.Entrypoint, []string{"/usr/local/bin/fabctl"}) || !slices.Equal(cf.Config.Cmd, []string{"agent", "--kube"}) {
		t.Errorf("entrypoint %q cmd %q", cf.Config.Entrypoint, cf.Config.Cmd)
	}
	if !slices.Contains(cf.Config.Env, PathEnv) {
		t.Errorf("env %q has no PATH", cf.Config.Env)
	}
	if cf.OS != "linux" || cf.Architecture != here.Arch || !cf.Created.Time.Equal(epoch) {
		t.Errorf("config os %s arch %s created %s", cf.OS, cf.Architecture, cf.Created.Time)
	}
	for _, h := range cf.History {
		if !h.Created.Time.Equal(epoch) {
			t.Errorf("history entry at %s, want %s", h.Created.Time, epoch)
		}
	}

	ls, err := img.Layers()
	if err != nil || len(ls) != 1 {
		t.Fatalf("layers %d, %v; want 1", len(ls), err)
	}
	if mt, _ := ls[0].MediaType(); mt != types.OCILayer {
		t.Errorf("layer media type %s", mt)
	}
	ents, files := readLayer(t, ls[0])
	var names []string
	for _, h := range ents {
		names = append(names, h.Name)
		if !h.ModTime.Equal(epoch) || h.Uid != 0 || h.Gid != 0 {
			t.Errorf("%s: mtime %s uid %d gid %d; want %s, root", h.Name, h.ModTime, h.Uid, h.Gid, epoch)
		}
	}
	if want := []string{"usr/", "usr/local/", "usr/local/bin/", "usr/local/bin/fabctl"}; !slices.Equal(names, want) {
		t.Errorf("layer entries %q, want %q", names, want)
	}
	if h := ents[len(ents)-1]; h.Mode != 0o755 || h.Typeflag != tar.TypeReg {
		t.Errorf("fabctl: mode %o type %c", h.Mode, h.Typeflag)
	}
	// The layer's fabctl is the one BuildBinary makes from this source
	// with the same stamps (a Go build is reproducible).
	again := filepath.Join(t.TempDir(), "fabctl")
	if err := BuildBinary(t.Context(), "../..", here, testVersion, testCommit, again); err != nil {
		t.Fatal(err)
	}
	if bin := mustRead(t, again); !bytes.Equal(files["usr/local/bin/fabctl"], bin) {
		t.Errorf("the layer's fabctl (%d bytes) is not the binary built again (%d bytes)", len(files["usr/local/bin/fabctl"]), len(bin))
	}

	// The docker-archive holds the same image (same config, so the same
	// image ID after docker load) under the same name.
	tag, err := name.NewTag(r.Name)
	if err != nil {
		t.Fatal(err)
	}
	dimg, err := tarball.ImageFromPath(r.Images[0].DockerArchive, &tag)
	if err != nil {
		t.Fatal(err)
	}
	dc, _ := dimg.ConfigName()
	oc, _ := img.ConfigName()
	if dc != oc || dc != r.Images[0].Config {
		t.Errorf("docker-archive config %s, OCI config %s, reported %s", dc, oc, r.Images[0].Config)
	}
	var dm []struct{ RepoTags []string }
	if err := json.Unmarshal(tarFile(t, r.Images[0].DockerArchive, "manifest.json"), &dm); err != nil || len(dm) != 1 || !slices.Equal(dm[0].RepoTags, []string{r.Name}) {
		t.Errorf("docker-archive manifest.json: %+v, %v; want RepoTags [%s]", dm, err, r.Name)
	}
	// The oci-archive is the layout, file for file.
	if a, b := tarFile(t, r.OCIArch, "index.json"), mustRead(t, filepath.Join(r.OCIDir, "index.json")); !bytes.Equal(a, b) {
		t.Errorf("oci-archive index.json differs from the layout's")
	}
	blob := filepath.Join("blobs", "sha256", r.Images[0].Manifest.Hex)
	if a, b := tarFile(t, r.OCIArch, filepath.ToSlash(blob)), mustRead(t, filepath.Join(r.OCIDir, blob)); !bytes.Equal(a, b) {
		t.Errorf("oci-archive manifest blob differs from the layout's")
	}
}

// The binary in the image runs: extracted from the layer, its PATH lookup
// resolves the DaemonSet's command, it reports the labels' version and
// commit, its agent has --kube, and the DaemonSet it prints names this
// image. As root it also runs chrooted in the image's root filesystem
// (nothing but the layer: no loader, no libc), as a container would.
func TestBinaryRuns(t *testing.T) {
	r, _ := built(t)
	idx, err := layoutIndex(t, r.OCIDir).ImageIndex(r.Index)
	if err != nil {
		t.Fatal(err)
	}
	img, err := idx.Image(r.Images[0].Manifest)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	ls, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	rootfs := t.TempDir()
	extract(t, ls[0], rootfs)

	host := filepath.Join(rootfs, "usr/local/bin/fabctl")
	var ds struct {
		Image   string
		Objects []struct {
			Kind string
			Spec struct {
				Template struct {
					Spec struct {
						Containers []struct {
							Image   string
							Command []string
						}
					}
				}
			}
		}
	}
	if err := json.Unmarshal(output(t, host, "kube", "manifests", "--json"), &ds); err != nil {
		t.Fatal(err)
	}
	var cmd []string
	for _, o := range ds.Objects {
		if o.Kind == "DaemonSet" {
			c := o.Spec.Template.Spec.Containers[0]
			if c.Image != r.Name {
				t.Errorf("the DaemonSet of the image's fabctl runs %q, the image is %q", c.Image, r.Name)
			}
			cmd = c.Command
		}
	}
	if len(cmd) == 0 {
		t.Fatalf("no DaemonSet command in fabctl kube manifests --json")
	}
	inImage := lookPath(t, rootfs, cmd[0], cf.Config.Env)
	if inImage != BinPath {
		t.Errorf("DaemonSet command %q resolves to %s in the image, want %s", cmd[0], inImage, BinPath)
	}

	var v struct{ Version, Commit, Platform string }
	if err := json.Unmarshal(output(t, host, "version", "--json"), &v); err != nil {
		t.Fatal(err)
	}
	if v.Version != cf.Config.Labels["org.opencontainers.image.version"] || v.Commit != cf.Config.Labels["org.opencontainers.image.revision"] || v.Platform != here.String() {
		t.Errorf("fabctl version in the image: %+v; labels %v", v, cf.Config.Labels)
	}
	if help := string(output(t, host, "agent", "--help")); !strings.Contains(help, "--kube") {
		t.Errorf("fabctl agent --help has no --kube:\n%s", help)
	}

	if os.Geteuid() != 0 {
		skipOrFail(t, "chrooted run: not root")
		return
	}
	chrooted := func(env []string, args ...string) (string, error) {
		c := &exec.Cmd{Path: inImage, Args: append([]string{cmd[0]}, args...), Env: env, Dir: "/",
			SysProcAttr: &syscall.SysProcAttr{Chroot: rootfs}}
		b, err := c.CombinedOutput()
		return string(b), err
	}
	out, err := chrooted(cf.Config.Env, "version")
	if err != nil || !strings.Contains(out, "fabctl "+testVersion) {
		t.Errorf("fabctl version chrooted in the image: %v: %s", err, out)
	}
	// The agent starts in the image and looks for the pod's service-account
	// token where the kubelet mounts it (none here, so it stops there).
	out, err = chrooted(append(slices.Clone(cf.Config.Env), "NODE_NAME=n1", "KUBERNETES_SERVICE_HOST=127.0.0.1", "KUBERNETES_SERVICE_PORT=1"), cmd[1:]...)
	if err == nil || !strings.Contains(out, "/var/run/secrets/kubernetes.io/serviceaccount/token") {
		t.Errorf("fabctl %s chrooted without a token: %v: %s", strings.Join(cmd[1:], " "), err, out)
	}
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no epoch", []string{"-epoch", ""}, "SOURCE_DATE_EPOCH is required"},
		{"bad epoch", []string{"-epoch", "yesterday"}, `-epoch "yesterday"`},
		{"bad platform", []string{"-platforms", "darwin/arm64"}, `platform "darwin/arm64": want linux/<goarch>`},
		{"no platform", []string{"-platforms", ","}, "no platform given"},
		{"bad repo", []string{"-repo", "/nonexistent"}, "no cmd/fabctl there"},
		{"bad name", []string{"-name", "Fabctl:UPPER CASE"}, `-name "Fabctl:UPPER CASE"`},
		{"extra args", []string{"now"}, "unexpected arguments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(testArgs(t.TempDir()), tc.args...)
			_, _, err := run(args, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}

// skipOrFail skips, but under CI=true (where the tools are installed)
// fails: a skip there would hide a missing install step.
func skipOrFail(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (CI=true: this must run)", why)
	}
	t.Skip(why)
}

// lookPath resolves file in the image's root filesystem with the
// image's PATH, as the runtime does for a command that has no slash.
func lookPath(t *testing.T, rootfs, file string, env []string) string {
	t.Helper()
	for _, e := range env {
		if p, ok := strings.CutPrefix(e, "PATH="); ok {
			for _, dir := range filepath.SplitList(p) {
				fi, err := os.Stat(filepath.Join(rootfs, dir, file))
				if err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
					return path.Join(dir, file)
				}
			}
		}
	}
	t.Fatalf("%s not found on the image's PATH (env %q)", file, env)
	return ""
}

func output(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	var stderr bytes.Buffer
	c := exec.Command(bin, args...)
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		t.Fatalf("%s %s: %v: %s", bin, strings.Join(args, " "), err, stderr.String())
	}
	return out
}

func readLayer(t *testing.T, l v1.Layer) ([]*tar.Header, map[string][]byte) {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var hs []*tar.Header
	files := map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[h.Name] = b
		}
	}
	return hs, files
}

func extract(t *testing.T, l v1.Layer, root string) {
	t.Helper()
	hs, files := readLayer(t, l)
	for _, h := range hs {
		p := filepath.Join(root, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(p, root+string(filepath.Separator)) {
			t.Fatalf("layer entry %q leaves the root", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, fs.FileMode(h.Mode)); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.WriteFile(p, files[h.Name], fs.FileMode(h.Mode)); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("layer entry %q of type %c", h.Name, h.Typeflag)
		}
	}
}

func tarFile(t *testing.T, archive, name string) []byte {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("%s: no %s (%v)", archive, name, err)
		}
		if h.Name == name {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sha(t *testing.T, p string) string {
	t.Helper()
	s := sha256.Sum256(mustRead(t, p))
	return hex.EncodeToString(s[:])
}

func TestPushTarget(t *testing.T) {
	for _, tc := range []struct{ name, dest, repo string }{
		{"fabctl:v1", "REGISTRY/fabctl:v1", "REGISTRY/fabctl"},
		{"team/fabctl:v1", "REGISTRY/team/fabctl:v1", "REGISTRY/team/fabctl"},
		{"registry.example/fabctl:v1", "registry.example/fabctl:v1", "registry.example/fabctl"},
		{"127.0.0.1:5000/team/fabctl:v1", "127.0.0.1:5000/team/fabctl:v1", "127.0.0.1:5000/team/fabctl"},
	} {
		if d, r := pushTarget(tc.name); d != tc.dest || r != tc.repo {
			t.Errorf("pushTarget(%q) = %q, %q; want %q, %q", tc.name, d, r, tc.dest, tc.repo)
		}
	}
}

// layoutIndex opens the OCI layout at dir and returns its top index
// (index.json).
func layoutIndex(t *testing.T, dir string) v1.ImageIndex {
	t.Helper()
	lp, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	top, err := lp.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	return top
}
