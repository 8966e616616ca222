#!/bin/sh
# build.sh: build kube-apiserver and kubectl from the Go module proxy into a cache directory and
# print kube-apiserver's path on the last stdout line (kubectl is beside it). The binaries are
# reused when present. kubectl is the same release as the apiserver: the e2e applies fabctl's
# manifests with it (kubectl apply --server-side, kubectl apply --dry-run=server) and sets the
# node labels fabctl topology prints; built after kube-apiserver it reuses most of its compiled
# packages (197 more packages: kubectl's commands, cli-runtime, kustomize).
#
# The cache key is the Kubernetes version plus a hash of every build input: this module's go.mod
# and go.sum, this script and the Go toolchain version. Cache root: $FABCTL_KUBE_CACHE, default
# /var/cache/fabctl-kube (never inside the repository).
#
# The version variables set below are the ones Kubernetes' own build stamps (hack/lib/version.sh,
# kube::version::ldflags: k8s.io/component-base/version and k8s.io/client-go/pkg/version
# gitVersion, gitMajor, gitMinor, gitTreeState); without them the binary reports v0.0.0-master.
#
# Usage: testbed/kube/build.sh            (build or reuse; last line = path of kube-apiserver)
#        testbed/kube/build.sh --key      (print the cache directory only: kube-apiserver, kubectl)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
ver=$(sed -n 's/^const Version = "\(v[0-9.]*\)"$/\1/p' version.go)
grep -Eq "^(require)?[[:space:]]+k8s.io/kubernetes $ver( |\$)" go.mod || {
	echo "build.sh: go.mod does not require k8s.io/kubernetes $ver; run testbed/kube/gen-gomod.sh" >&2
	exit 1
}
hash=$( { cat go.mod go.sum build.sh; go version; go env GOARCH GOOS; } | sha256sum | cut -c1-16)
root=${FABCTL_KUBE_CACHE:-/var/cache/fabctl-kube}
dir=$root/$ver-$hash
if [ "${1:-}" = "--key" ]; then echo "$dir"; exit 0; fi
bin=$dir/kube-apiserver
if [ -x "$bin" ] && [ -x "$dir/kubectl" ]; then
	echo "build.sh: reusing $bin and $dir/kubectl" >&2
	echo "$bin"
	exit 0
fi
mkdir -p "$dir"
major=${ver#v}; major=${major%%.*}
minor=${ver#v*.}; minor=${minor%%.*}
ld="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	ld="$ld -X $p.gitVersion=$ver -X $p.gitMajor=$major -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
done
# CGO off: both are built static upstream too (hack/lib/golang.sh kube::golang::is_statically_linked).
for cmd in kube-apiserver kubectl; do
	[ -x "$dir/$cmd" ] && continue
	echo "build.sh: building $cmd $ver into $dir (cold: kube-apiserver ~1,100 CPU-seconds, kubectl after it ~150 more)" >&2
	start=$(date +%s)
	CGO_ENABLED=0 go build -mod=readonly -trimpath -ldflags "$ld" -o "$dir/$cmd.tmp.$$" "k8s.io/kubernetes/cmd/$cmd"
	mv "$dir/$cmd.tmp.$$" "$dir/$cmd"
	echo "build.sh: built $cmd in $(( $(date +%s) - start ))s" >&2
done
"$bin" --version >&2
"$dir/kubectl" version --client >&2
echo "$bin"
