package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image is one layer on nothing: fabctl as a static Go binary (the
// agent's code path links no cgo: libyang and the verbs traffic test are
// build tags it does not need) at BinPath, a directory of the PATH the
// config sets, so the DaemonSet's `command: [fabctl, agent, --kube]`
// (kube/manifests/40-daemonset.yaml) resolves it as the runtime does.
const (
	BinPath = "/usr/local/bin/fabctl"
	// PathEnv is the usual Linux search path (the one Docker gives a
	// container whose image sets none).
	PathEnv = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
)

// OCI annotation and label keys (opencontainers/image-spec annotations.md).
const (
	labelVersion  = "org.opencontainers.image.version"
	labelRevision = "org.opencontainers.image.revision"
	labelSource   = "org.opencontainers.image.source"
	labelCreated  = "org.opencontainers.image.created"
	labelTitle    = "org.opencontainers.image.title"
	labelDesc     = "org.opencontainers.image.description"
	refName       = "org.opencontainers.image.ref.name"
)

// Platform is one linux/<arch> the image is built for.
type Platform struct{ OS, Arch string }

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// variant is the OCI platform variant: arm64 is v8 (Go's default
// GOARM64=v8.0); amd64 has none.
func (p Platform) variant() string {
	if p.Arch == "arm64" {
		return "v8"
	}
	return ""
}

// ParsePlatforms reads "linux/amd64,linux/arm64".
func ParsePlatforms(s string) ([]Platform, error) {
	var out []Platform
	seen := map[string]bool{}
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		os, arch, ok := strings.Cut(f, "/")
		if !ok || os != "linux" || arch == "" || strings.Contains(arch, "/") {
			return nil, fmt.Errorf("platform %q: want linux/<goarch>, e.g. linux/amd64 (the agent runs on Linux nodes only)", f)
		}
		if seen[f] {
			continue
		}
		seen[f] = true
		out = append(out, Platform{OS: os, Arch: arch})
	}
	if len(out) == 0 {
		return nil, errors.New("no platform given (e.g. -platforms linux/amd64,linux/arm64)")
	}
	return out, nil
}

// BuildBinary builds fabctl for p from the repository at repo: static
// (CGO_ENABLED=0), -trimpath and stripped, with version and commit
// stamped as `make build` does. The same source and Go toolchain give
// the same bytes (Go builds are reproducible; the build ID is a hash of
// the inputs).
func BuildBinary(ctx context.Context, repo string, p Platform, version, commit, out string) error {
	ldflags := "-s -w"
	const pkg = "github.com/fabctl/fabctl/internal/cli"
	if version != "" {
		ldflags += " -X " + pkg + ".version=" + version
	}
	if commit != "" {
		ldflags += " -X " + pkg + ".commit=" + commit
	}
	cmd := exec.CommandContext(ctx, goTool(), "build", "-trimpath", "-ldflags", ldflags, "-o", out, "./cmd/fabctl")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Arch, "GOFLAGS=")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build fabctl for %s: %v\n%s", p, err, b)
	}
	return nil
}

func goTool() string {
	if g := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(g) {
		return g
	}
	return "go"
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// Meta is what the image says about the fabctl it holds, read from the
// binary itself (so labels and name cannot disagree with it).
type Meta struct {
	Version string // fabctl version --json .version
	Commit  string // .commit
	// Image is the binary's default agent image (fabctl kube manifests
	// --json .image, i.e. kube.DefaultImage(version)): the name the
	// DaemonSet it prints refers to.
	Image string
}

// ReadMeta runs bin (built for this machine) for its version and its
// default agent image.
func ReadMeta(ctx context.Context, bin string) (Meta, error) {
	var v struct{ Version, Commit string }
	if err := runJSON(ctx, bin, &v, "version", "--json"); err != nil {
		return Meta{}, err
	}
	var m struct{ Image string }
	if err := runJSON(ctx, bin, &m, "kube", "manifests", "--json"); err != nil {
		return Meta{}, err
	}
	if v.Version == "" || m.Image == "" {
		return Meta{}, fmt.Errorf("%s: version %q, default image %q: both expected", bin, v.Version, m.Image)
	}
	return Meta{Version: v.Version, Commit: v.Commit, Image: m.Image}, nil
}

func runJSON(ctx context.Context, bin string, into any, args ...string) error {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", bin, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	if err := json.Unmarshal(out, into); err != nil {
		return fmt.Errorf("%s %s: %w", bin, strings.Join(args, " "), err)
	}
	return nil
}

// Options are the inputs of one image; the same Options and binaries
// give the same digests.
type Options struct {
	// Name is the image reference the archives carry (docker-archive
	// RepoTags, the OCI layout's ref.name), e.g. fabctl:v0.3.0.
	Name string
	Meta Meta
	// Source is the org.opencontainers.image.source label (the
	// repository's URL).
	Source string
	// Created is every timestamp in the image: config, history, layer
	// entries, archive entries (SOURCE_DATE_EPOCH).
	Created time.Time
	// Binaries maps each platform to its fabctl binary.
	Binaries map[Platform]string
}

// Result names what Write produced.
type Result struct {
	Name      string
	Index     v1.Hash // the image index (all platforms): what a registry serves for Name
	Images    []PlatformImage
	OCIDir    string // OCI image layout
	OCIArch   string // the same layout as a tar (skopeo oci-archive:, podman load)
	DigestTxt string
}

// PlatformImage is one platform's image.
type PlatformImage struct {
	Platform      Platform
	Manifest      v1.Hash
	Config        v1.Hash // docker's image ID after docker load
	Compressed    int64   // layer bytes as pushed (gzip)
	Uncompressed  int64   // layer bytes on the node (the binary plus tar headers)
	DockerArchive string  // docker save format (docker load, podman load, skopeo docker-archive:)
}

// Labels are the image's labels (config) and the index's annotations.
func (o Options) Labels() map[string]string {
	l := map[string]string{
		labelTitle:    "fabctl",
		labelDesc:     "fabctl agent for the Kubernetes engine: fabctl agent --kube (docs/kubernetes.md)",
		labelVersion:  o.Meta.Version,
		labelRevision: strings.TrimSuffix(o.Meta.Commit, "-dirty"),
		labelCreated:  o.Created.UTC().Format(time.RFC3339),
	}
	if o.Source != "" {
		l[labelSource] = o.Source
	}
	return l
}

// Layer is the image's one layer: the directories down to BinPath and
// the binary, root-owned, every entry at created, in path order. tar
// writes the headers from these fields alone, so the same binary gives
// the same bytes.
func Layer(bin string, created time.Time) ([]byte, error) {
	data, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir := strings.TrimPrefix(filepath.Dir(BinPath), "/")
	var dirs []string
	for d := dir; d != "."; d = filepath.Dir(d) {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	hdr := func(name string, typ byte, mode, size int64) *tar.Header {
		return &tar.Header{Name: name, Typeflag: typ, Mode: mode, Size: size, ModTime: created.UTC(), Uid: 0, Gid: 0, Uname: "root", Gname: "root", Format: tar.FormatUSTAR}
	}
	for _, d := range dirs {
		if err := tw.WriteHeader(hdr(d+"/", tar.TypeDir, 0o755, 0)); err != nil {
			return nil, err
		}
	}
	if err := tw.WriteHeader(hdr(strings.TrimPrefix(BinPath, "/"), tar.TypeReg, 0o755, int64(len(data)))); err != nil {
		return nil, err
	}
	if _, err := tw.Write(data); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// PlatformImg builds one platform's image.
func PlatformImg(o Options, p Platform, bin string) (v1.Image, error) {
	tb, err := Layer(bin, o.Created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(tb)), nil },
		tarball.WithMediaType(types.OCILayer), tarball.WithCompressionLevel(gzip.BestCompression), tarball.WithCompressedCaching)
	if err != nil {
		return nil, err
	}
	created := v1.Time{Time: o.Created.UTC()}
	cfg := &v1.ConfigFile{
		Architecture: p.Arch,
		OS:           p.OS,
		Variant:      p.variant(),
		Created:      created,
		Config: v1.Config{
			// command: [fabctl, agent, --kube] in the DaemonSet replaces
			// both; they serve `docker run IMAGE` and `docker run IMAGE version`.
			Entrypoint: []string{BinPath},
			Cmd:        []string{"agent", "--kube"},
			Env:        []string{PathEnv},
			WorkingDir: "/",
			Labels:     o.Labels(),
		},
		RootFS: v1.RootFS{Type: "layers"},
	}
	img, err := mutate.ConfigFile(empty.Image, cfg)
	if err != nil {
		return nil, err
	}
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	return mutate.Append(img, mutate.Addendum{
		Layer: layer,
		History: v1.History{
			Created:   created,
			CreatedBy: fmt.Sprintf("fabctl tools/image: fabctl %s for %s (CGO_ENABLED=0 go build -trimpath) at %s", o.Meta.Version, p, BinPath),
		},
	})
}

// Index builds every platform's image and the index over them.
func Index(o Options) (v1.ImageIndex, []v1.Image, []Platform, error) {
	var plats []Platform
	for p := range o.Binaries {
		plats = append(plats, p)
	}
	sort.Slice(plats, func(i, j int) bool { return plats[i].String() < plats[j].String() })
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	var imgs []v1.Image
	for _, p := range plats {
		img, err := PlatformImg(o, p, o.Binaries[p])
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %w", p, err)
		}
		imgs = append(imgs, img)
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: notArtifact{img}, Descriptor: v1.Descriptor{
			Platform: &v1.Platform{OS: p.OS, Architecture: p.Arch, Variant: p.variant()},
		}})
	}
	idx = mutate.Annotations(idx, o.Labels()).(v1.ImageIndex)
	return idx, imgs, plats, nil
}

// notArtifact keeps artifactType out of the image's index descriptor.
// go-containerregistry fills it with the config media type for every
// manifest (partial.Descriptor); image-spec v1.1 (image-index.md) defines
// it for a manifest "used for an artifact", which this image is not, and
// Debian's skopeo 1.9 drops the field it does not know when it copies the
// index, so the registry would serve another digest than make image
// printed (TestSkopeoPush).
type notArtifact struct{ v1.Image }

func (notArtifact) ArtifactType() (string, error) { return "", nil }

// FileBase is the archives' base name: fabctl-<tag> for fabctl:<tag>.
func FileBase(ref name.Tag) string {
	repo := ref.RepositoryStr()
	return filepath.Base(repo) + "-" + ref.TagStr()
}

// Write builds the image and writes it under out: the OCI layout
// (<base>.oci/), the same as an oci-archive (<base>.oci.tar), one
// docker-archive per platform (<base>-<os>-<arch>.docker.tar) and the
// index digest (<base>.digest). Existing outputs of the same name are
// replaced.
func Write(o Options, out string) (Result, error) {
	if o.Created.IsZero() {
		return Result{}, errors.New("no creation time (SOURCE_DATE_EPOCH): the image would not be reproducible")
	}
	ref, err := name.NewTag(o.Name, name.WeakValidation)
	if err != nil {
		return Result{}, fmt.Errorf("image name %q: %w", o.Name, err)
	}
	if len(o.Binaries) == 0 {
		return Result{}, errors.New("no binaries")
	}
	idx, imgs, plats, err := Index(o)
	if err != nil {
		return Result{}, err
	}
	base := FileBase(ref)
	r := Result{Name: o.Name, OCIDir: filepath.Join(out, base+".oci"), OCIArch: filepath.Join(out, base+".oci.tar"), DigestTxt: filepath.Join(out, base+".digest")}
	if r.Index, err = idx.Digest(); err != nil {
		return Result{}, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return Result{}, err
	}
	if err := os.RemoveAll(r.OCIDir); err != nil {
		return Result{}, err
	}
	lp, err := layout.Write(r.OCIDir, empty.Index)
	if err != nil {
		return Result{}, err
	}
	// ref.name is what `skopeo copy oci:DIR:NAME` and
	// `oci-archive:FILE:NAME` select (image-spec image-layout.md).
	if err := lp.AppendIndex(idx, layout.WithAnnotations(map[string]string{refName: o.Name})); err != nil {
		return Result{}, err
	}
	if err := TarDir(r.OCIDir, r.OCIArch, o.Created); err != nil {
		return Result{}, err
	}
	for i, img := range imgs {
		p := plats[i]
		pi := PlatformImage{Platform: p, DockerArchive: filepath.Join(out, fmt.Sprintf("%s-%s-%s.docker.tar", base, p.OS, p.Arch))}
		if pi.Manifest, err = img.Digest(); err != nil {
			return Result{}, err
		}
		if pi.Config, err = img.ConfigName(); err != nil {
			return Result{}, err
		}
		ls, err := img.Layers()
		if err != nil {
			return Result{}, err
		}
		for _, l := range ls {
			n, err := l.Size()
			if err != nil {
				return Result{}, err
			}
			pi.Compressed += n
			rc, err := l.Uncompressed()
			if err != nil {
				return Result{}, err
			}
			u, err := io.Copy(io.Discard, rc)
			rc.Close()
			if err != nil {
				return Result{}, err
			}
			pi.Uncompressed += u
		}
		if err := writeAtomic(pi.DockerArchive, func(f *os.File) error { return tarball.Write(ref, img, f) }); err != nil {
			return Result{}, err
		}
		r.Images = append(r.Images, pi)
	}
	if err := os.WriteFile(r.DigestTxt, []byte(r.Index.String()+"\n"), 0o644); err != nil {
		return Result{}, err
	}
	return r, nil
}

// TarDir writes dir as a tar at dst: entries in path order, directories
// 0755 and files 0644, root-owned, every time at created, so the same
// tree gives the same bytes (filepath.WalkDir walks in lexical order).
func TarDir(dir, dst string, created time.Time) error {
	return writeAtomic(dst, func(f *os.File) error {
		tw := tar.NewWriter(f)
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == dir {
				return err
			}
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			h := &tar.Header{Name: rel, ModTime: created.UTC(), Uname: "root", Gname: "root", Format: tar.FormatUSTAR}
			switch {
			case d.IsDir():
				h.Typeflag, h.Mode, h.Name = tar.TypeDir, 0o755, rel+"/"
				return tw.WriteHeader(h)
			case d.Type().IsRegular():
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				h.Typeflag, h.Mode, h.Size = tar.TypeReg, 0o644, int64(len(b))
				if err := tw.WriteHeader(h); err != nil {
					return err
				}
				_, err = tw.Write(b)
				return err
			default:
				return fmt.Errorf("%s: not a regular file or directory", p)
			}
		})
		if err != nil {
			return err
		}
		return tw.Close()
	})
}

func writeAtomic(dst string, write func(*os.File) error) error {
	f, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), dst)
}
