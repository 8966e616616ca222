package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The archives as the real tools see them: Debian's skopeo reads the
// oci-archive, the OCI layout and the docker-archive, and pushes them to
// a real registry (Debian's docker-registry, distribution 2.8) the way
// docs/kubernetes.md says to; the registry then serves the index digest
// make image printed. Skipped with the reason when the tools are absent,
// failed under CI=true (.ci/run installs them).

func skopeo(t *testing.T, args ...string) []byte {
	t.Helper()
	// --insecure-policy: accept any image whatever /etc/containers/policy.json says
	// (skopeo(1)); the test judges what it reads itself.
	args = append([]string{"--insecure-policy"}, args...)
	var stderr bytes.Buffer
	c := exec.Command("skopeo", args...)
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		t.Fatalf("skopeo %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

func needSkopeo(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("skopeo"); err != nil {
		skipOrFail(t, "skopeo not installed (Debian: apt-get install skopeo)")
	}
}

// inspected is the part of `skopeo inspect` output the tests read.
type inspected struct {
	Digest       string
	Labels       map[string]string
	Architecture string
	Os           string
	Env          []string
}

func TestSkopeoReads(t *testing.T) {
	needSkopeo(t)
	r, _ := built(t)
	pi := r.Images[0]
	for _, tc := range []struct {
		ref        string
		wantDigest string // "" when the transport has no manifest of ours (docker-archive)
	}{
		{"oci-archive:" + r.OCIArch, r.Index.String()},
		{"oci-archive:" + r.OCIArch + ":" + r.Name, r.Index.String()},
		{"oci:" + r.OCIDir + ":" + r.Name, r.Index.String()},
		{"docker-archive:" + pi.DockerArchive, ""},
		{"docker-archive:" + pi.DockerArchive + ":" + r.Name, ""},
	} {
		t.Run(strings.SplitN(tc.ref, ":", 2)[0], func(t *testing.T) {
			var got inspected
			if err := json.Unmarshal(skopeo(t, "inspect", tc.ref), &got); err != nil {
				t.Fatal(err)
			}
			if tc.wantDigest != "" && got.Digest != tc.wantDigest {
				t.Errorf("digest %s, want %s", got.Digest, tc.wantDigest)
			}
			if got.Labels["org.opencontainers.image.version"] != testVersion || got.Labels["org.opencontainers.image.revision"] != testCommit ||
				got.Architecture != here.Arch || got.Os != "linux" || !slices.Contains(got.Env, PathEnv) {
				t.Errorf("skopeo inspect %s: %+v", tc.ref, got)
			}
			var cfg struct {
				Config struct{ Entrypoint, Cmd []string }
			}
			if err := json.Unmarshal(skopeo(t, "inspect", "--config", tc.ref), &cfg); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(cfg.Config.Entrypoint, []string{BinPath}) || !slices.Equal(cfg.Config.Cmd, []string{"agent", "--kube"}) {
				t.Errorf("config %+v", cfg.Config)
			}
		})
	}
	// The raw manifest skopeo reads is the index whose digest make image printed.
	raw := skopeo(t, "inspect", "--raw", "oci-archive:"+r.OCIArch)
	if d := sha256.Sum256(raw); "sha256:"+hex.EncodeToString(d[:]) != r.Index.String() {
		t.Errorf("raw manifest of the oci-archive has digest sha256:%x, want %s", d, r.Index)
	}
}

// TestPush pushes what make image wrote to a real registry as
// docs/kubernetes.md says (skopeo copy --all oci-archive:..., crane push
// of the layout, skopeo copy of a docker-archive) and reads it back: the
// registry serves the index digest make image printed, also by digest
// (what a DaemonSet pinned with --image NAME@DIGEST pulls), and the
// platform image keeps its labels.
func TestPush(t *testing.T) {
	reg, err := exec.LookPath("docker-registry")
	if err != nil {
		skipOrFail(t, "docker-registry not installed (Debian: apt-get install docker-registry)")
	}
	r, _ := built(t)
	addr := startRegistry(t, reg)
	tag := strings.SplitN(r.Name, ":", 2)[1]
	repo := addr + "/fabctl"
	served := func(t *testing.T, ref string) {
		t.Helper()
		d, err := remote.Head(mustRef(t, ref))
		if err != nil {
			t.Fatal(err)
		}
		if d.Digest != r.Index || d.MediaType != types.OCIImageIndex {
			t.Errorf("%s: the registry serves %s %s; make image printed the index %s", ref, d.MediaType, d.Digest, r.Index)
		}
	}

	t.Run("skopeo oci-archive", func(t *testing.T) {
		needSkopeo(t)
		skopeo(t, "copy", "--all", "--dest-tls-verify=false", "oci-archive:"+r.OCIArch, "docker://"+repo+":"+tag)
		served(t, repo+":"+tag)
		served(t, repo+"@"+r.Index.String())
		var got inspected
		if err := json.Unmarshal(skopeo(t, "inspect", "--tls-verify=false", "docker://"+repo+"@"+r.Index.String()), &got); err != nil {
			t.Fatal(err)
		}
		if got.Digest != r.Index.String() || got.Labels["org.opencontainers.image.version"] != testVersion || got.Architecture != here.Arch {
			t.Errorf("pushed image: %+v", got)
		}
	})
	t.Run("skopeo oci layout", func(t *testing.T) {
		needSkopeo(t)
		skopeo(t, "copy", "--all", "--dest-tls-verify=false", "oci:"+r.OCIDir+":"+r.Name, "docker://"+repo+":"+tag+"-layout")
		served(t, repo+":"+tag+"-layout")
	})
	t.Run("skopeo docker-archive", func(t *testing.T) {
		needSkopeo(t)
		skopeo(t, "copy", "--dest-tls-verify=false", "docker-archive:"+r.Images[0].DockerArchive, "docker://"+repo+":"+tag+"-docker")
		img, err := remote.Image(mustRef(t, repo+":"+tag+"-docker"))
		if err != nil {
			t.Fatal(err)
		}
		// skopeo writes its own manifest for a docker-archive (it has
		// none), but the config, so the image ID, is ours.
		if c, err := img.ConfigName(); err != nil || c != r.Images[0].Config {
			t.Errorf("pushed from the docker-archive: config %s, %v; want %s", c, err, r.Images[0].Config)
		}
	})
	// crane (go-containerregistry's CLI, built from this module's pinned
	// version): `crane push DIR REF` reads DIR as an OCI layout and pushes
	// its one index (cmd/crane/cmd/push.go, loadImage).
	t.Run("crane layout", func(t *testing.T) {
		crane := filepath.Join(t.TempDir(), "crane")
		if b, err := exec.Command(goTool(), "build", "-o", crane, "github.com/google/go-containerregistry/cmd/crane").CombinedOutput(); err != nil {
			t.Fatalf("go build crane: %v\n%s", err, b)
		}
		if b, err := exec.Command(crane, "push", "--insecure", r.OCIDir, repo+":"+tag+"-crane").CombinedOutput(); err != nil {
			t.Fatalf("crane push: %v\n%s", err, b)
		}
		served(t, repo+":"+tag+"-crane")
	})
}

func mustRef(t *testing.T, s string) name.Reference {
	t.Helper()
	ref, err := name.ParseReference(s, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// startRegistry runs docker-registry on a free loopback port with its
// storage in a temporary directory; the configuration keys are those of
// Debian's /etc/docker/registry/config.yml (distribution's
// docs/configuration.md: version 0.1, storage.filesystem.rootdirectory,
// http.addr).
func startRegistry(t *testing.T, bin string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yml")
	conf := fmt.Sprintf("version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n", filepath.Join(dir, "data"), addr)
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	var logb bytes.Buffer
	cmd := exec.Command(bin, "serve", cfg)
	cmd.Stdout, cmd.Stderr = &logb, &logb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return addr
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("docker-registry on %s not up after 20 s: %v\n%s", addr, err, logb.String())
		}
	}
}

// TestPodmanLoad loads both archives into a podman store of its own
// (vfs driver, temporary root: the machine's images are not touched):
// the oci-archive keeps the index digest make image printed, and both
// give the image ID of the config (podman-load(1) reads oci-archive and
// docker-archive). Running the container is left to the cluster: this
// machine's sandbox refuses crun's setrlimit, and TestBinaryRuns runs the
// binary chrooted in the layer instead.
func TestPodmanLoad(t *testing.T) {
	if _, err := exec.LookPath("podman"); err != nil {
		skipOrFail(t, "podman not installed (Debian: apt-get install podman)")
	}
	if os.Geteuid() != 0 {
		skipOrFail(t, "podman load into a private store: not root")
	}
	r, _ := built(t)
	for _, archive := range []string{r.OCIArch, r.Images[0].DockerArchive} {
		t.Run(filepath.Base(archive), func(t *testing.T) {
			// podman refuses a runroot path over 50 characters; t.TempDir's are longer.
			dir, err := os.MkdirTemp("", "fabpod")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			podman := func(args ...string) []byte {
				t.Helper()
				args = append([]string{"--root", filepath.Join(dir, "root"), "--runroot", filepath.Join(dir, "run"),
					"--storage-driver", "vfs", "--events-backend", "none"}, args...)
				out, err := exec.Command("podman", args...).CombinedOutput()
				if err != nil {
					t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, out)
				}
				return out
			}
			out := podman("load", "-i", archive)
			if !strings.Contains(string(out), "Loaded image: localhost/"+r.Name) {
				t.Errorf("podman load: %s", out)
			}
			var imgs []struct {
				ID       string
				Digest   string
				RepoTags []string
			}
			if err := json.Unmarshal(podman("image", "inspect", r.Name), &imgs); err != nil || len(imgs) != 1 {
				t.Fatalf("podman image inspect: %v %+v", err, imgs)
			}
			if imgs[0].ID != r.Images[0].Config.Hex {
				t.Errorf("image ID %s, want the config digest %s", imgs[0].ID, r.Images[0].Config.Hex)
			}
			if archive == r.OCIArch && imgs[0].Digest != r.Index.String() {
				t.Errorf("digest %s, want the index %s", imgs[0].Digest, r.Index)
			}
		})
	}
}
