// Command image builds fabctl's agent image (the one the Kubernetes
// engine's DaemonSet runs) without a container engine: `make image`.
//
// It builds fabctl static for each platform, reads the version, commit
// and default agent image name from the binary itself (fabctl version
// --json, fabctl kube manifests --json), and writes a reproducible image
// (every timestamp SOURCE_DATE_EPOCH, entries in path order) under -out:
//
//	fabctl-<tag>.oci/                         OCI image layout (an index over the platforms)
//	fabctl-<tag>.oci.tar                      the same as an oci-archive
//	fabctl-<tag>-linux-<arch>.docker.tar      docker-archive, one per platform
//	fabctl-<tag>.digest                       the index digest
//
// This is a nested module so that fabctl's own go.mod never depends on
// go-containerregistry.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
)

func main() {
	if _, _, err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

// run is the command: it returns what it wrote and the options it used.
func run(args []string, stdout io.Writer) (Result, Options, error) {
	r, o, err := build(args)
	if err != nil {
		return r, o, err
	}
	rel := func(p string) string {
		if wd, err := os.Getwd(); err == nil {
			if r, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(r, "..") {
				return r
			}
		}
		return p
	}
	fmt.Fprintf(stdout, "image %s (fabctl %s, commit %s)\n", r.Name, o.Meta.Version, o.Meta.Commit)
	fmt.Fprintf(stdout, "  index   %s\n", r.Index)
	for _, pi := range r.Images {
		fmt.Fprintf(stdout, "  %-12s manifest %s  config %s  layer %.1f MB (%.1f MB unpacked)\n", pi.Platform, pi.Manifest, pi.Config, float64(pi.Compressed)/1e6, float64(pi.Uncompressed)/1e6)
	}
	fmt.Fprintf(stdout, "  OCI layout     %s\n  oci-archive    %s\n", rel(r.OCIDir), rel(r.OCIArch))
	for _, pi := range r.Images {
		fmt.Fprintf(stdout, "  docker-archive %s\n", rel(pi.DockerArchive))
	}
	dest, repo := pushTarget(r.Name)
	fmt.Fprintf(stdout, "push it (docs/kubernetes.md), e.g.:\n  skopeo copy --all oci-archive:%s docker://%s\n  fabctl kube manifests --image %s@%s\n",
		rel(r.OCIArch), dest, repo, r.Index)
	fmt.Fprintf(stdout, "digest %s\n", r.Index)
	return r, o, nil
}

func build(args []string) (Result, Options, error) {
	fail := func(err error) (Result, Options, error) { return Result{}, Options{}, err }
	fl := flag.NewFlagSet("image", flag.ContinueOnError)
	repo := fl.String("repo", "../..", "fabctl repository root (the module with ./cmd/fabctl)")
	out := fl.String("out", "", "output directory (default <repo>/dist)")
	plats := fl.String("platforms", "linux/amd64,linux/arm64", "platforms, comma separated")
	version := fl.String("version", "", "fabctl version stamped into the binary (make passes git describe)")
	commit := fl.String("commit", "", "fabctl commit stamped into the binary")
	source := fl.String("source", "", "org.opencontainers.image.source label (the repository URL)")
	imgName := fl.String("name", "", "image reference the archives carry (default: the binary's default agent image, fabctl kube manifests --json .image)")
	epoch := fl.String("epoch", os.Getenv("SOURCE_DATE_EPOCH"), "every timestamp in the image, seconds since 1970 (default $SOURCE_DATE_EPOCH)")
	if err := fl.Parse(args); err != nil {
		return fail(err)
	}
	if fl.NArg() > 0 {
		return fail(fmt.Errorf("unexpected arguments %q", fl.Args()))
	}
	if *epoch == "" {
		return fail(fmt.Errorf("-epoch or SOURCE_DATE_EPOCH is required (make image sets it to the commit time), so that the same inputs give the same image"))
	}
	sec, err := strconv.ParseInt(*epoch, 10, 64)
	if err != nil || sec < 0 {
		return fail(fmt.Errorf("-epoch %q: want seconds since 1970", *epoch))
	}
	platforms, err := ParsePlatforms(*plats)
	if err != nil {
		return fail(err)
	}
	root, err := filepath.Abs(*repo)
	if err != nil {
		return fail(err)
	}
	if !fileExists(filepath.Join(root, "cmd", "fabctl")) {
		return fail(fmt.Errorf("-repo %s: no cmd/fabctl there", root))
	}
	if *imgName != "" {
		if _, err := name.NewTag(*imgName, name.WeakValidation); err != nil {
			return fail(fmt.Errorf("-name %q: %w", *imgName, err))
		}
	}
	if *out == "" {
		*out = filepath.Join(root, "dist")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	bins, err := os.MkdirTemp("", "fabctl-image-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(bins)
	o := Options{Name: *imgName, Source: *source, Created: time.Unix(sec, 0).UTC(), Binaries: map[Platform]string{}}
	here := Platform{OS: runtime.GOOS, Arch: runtime.GOARCH}
	for _, p := range platforms {
		b := filepath.Join(bins, "fabctl-"+p.OS+"-"+p.Arch)
		fmt.Fprintf(os.Stderr, "image: go build fabctl for %s\n", p)
		if err := BuildBinary(ctx, root, p, *version, *commit, b); err != nil {
			return fail(err)
		}
		o.Binaries[p] = b
	}
	// The labels and the default name come from a binary of this
	// machine's platform, built from the same source with the same flags.
	probe, ok := o.Binaries[here]
	if !ok {
		probe = filepath.Join(bins, "fabctl-probe")
		if err := BuildBinary(ctx, root, here, *version, *commit, probe); err != nil {
			return fail(err)
		}
	}
	if o.Meta, err = ReadMeta(ctx, probe); err != nil {
		return fail(err)
	}
	if o.Name == "" {
		o.Name = o.Meta.Image
	}
	r, err := Write(o, *out)
	return r, o, err
}

// pushTarget is where the printed example pushes name, and the repository
// to pin by digest: the name itself when it names its registry (a first
// component with "." or ":", docker's rule), else under REGISTRY/.
func pushTarget(ref string) (dest, repo string) {
	first, _, hasSlash := strings.Cut(ref, "/")
	if t, err := name.NewTag(ref, name.WeakValidation); err == nil && hasSlash && strings.ContainsAny(first, ".:") {
		return ref, t.Context().Name()
	}
	return "REGISTRY/" + ref, "REGISTRY/" + strings.SplitN(ref, ":", 2)[0]
}
