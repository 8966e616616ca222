#!/usr/bin/env bash
# Builds (or reuses) the VM testbed image and prints its directory on the last line of stdout; all
# progress goes to stderr. Contract and cache layout: README.md beside this file.
#
#   testbed/vm/build.sh              build what is missing (root), print the image directory
#   testbed/vm/build.sh --host-deps  only install the host packages (root)
#
# Two cached stages in ${FABCTL_VM_CACHE:-/var/cache/fabctl-vm}, each named by a hash of its inputs:
#   base-<hash>.tar.zst  image/base.sh: debootstrap, trim, initrd, siw, netdevsim  (minutes)
#   img-<hash>/          image/image.sh: base + kmod/*/ + image/init -> root.img   (seconds)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${FABCTL_VM_CACHE:-/var/cache/fabctl-vm}

# Host packages: qemu (without the GUI recommends), debootstrap, mkfs.ext4 -d, the kernel module
# toolchain and sources, and rdma-core headers for cgo binaries run in the guest.
host_pkgs=(qemu-system-x86 debootstrap e2fsprogs zstd xz-utils gcc make libc6-dev bc flex bison libelf-dev
	linux-source-6.1 libibverbs-dev librdmacm-dev)

need_root() {
	if [[ $(id -u) -ne 0 ]]; then
		echo "build.sh: $1 needs root (debootstrap, chroot, apt-get); run it as root" >&2
		exit 1
	fi
}

host_deps() {
	local missing=() p
	for p in "${host_pkgs[@]}"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
	done
	[[ ${#missing[@]} -eq 0 ]] && return 0
	need_root "installing ${missing[*]}"
	echo "build.sh: apt-get install ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q </dev/null >&2
	apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null >&2
}

if [[ ${1:-} == --host-deps ]]; then
	host_deps
	exit 0
fi
[[ $# -eq 0 ]] || { echo "usage: build.sh [--host-deps]" >&2; exit 2; }

hash16() { sha256sum | cut -c1-16; }

base_key=$(hash16 <"$here/image/base.sh")
# The image key covers the base, the image stage, the guest init and every source file of the testbed
# kernel modules (build products a developer may have left in kmod/ are not inputs).
image_key=$(
	{
		echo "base $base_key"
		sha256sum "$here/image/image.sh" "$here/image/init" | cut -d' ' -f1
		if [[ -d $here/kmod ]]; then
			(cd "$here/kmod" && find . -type f ! -name '*.o' ! -name '*.ko' ! -name '*.mod' ! -name '*.mod.c' \
				! -name '.*.cmd' ! -name 'modules.order' ! -name 'Module.symvers' ! -name '*.a' -print0 |
				LC_ALL=C sort -z | xargs -0 -r sha256sum)
		fi
	} | hash16
)
base=$cache/base-$base_key.tar.zst
img=$cache/img-$image_key

if [[ -f $img/root.img ]]; then
	touch "$img" 2>/dev/null || true # marks it recently used (see the pruning below)
	echo "build.sh: cached image $img" >&2
	echo "$img"
	exit 0
fi

need_root "building the image"
mkdir -p "$cache"
exec 9>"$cache/lock"
if ! flock -n 9; then
	echo "build.sh: another build holds $cache/lock; waiting" >&2
	flock 9
fi
if [[ -f $img/root.img ]]; then # built by the holder of the lock meanwhile
	echo "$img"
	exit 0
fi
host_deps

t0=$SECONDS
if [[ -f $base ]]; then
	echo "build.sh: cached base $base" >&2
	touch "$base"
else
	echo "build.sh: building base $base" >&2
	"$here/image/base.sh" "$base"
	echo "build.sh: base built in $((SECONDS - t0))s" >&2
fi
t1=$SECONDS
"$here/image/image.sh" "$base" "$here/kmod" "$here/image/init" "$img"
echo "build.sh: image built in $((SECONDS - t1))s (total $((SECONDS - t0))s): $img" >&2

# Keep the 3 newest images and any used in the last hour (another run may be about to boot it; a VM
# already running keeps its deleted image open), and the 2 newest bases.
ls -1dt "$cache"/img-* 2>/dev/null | tail -n +4 | while read -r old; do
	if [[ -n $(find "$old" -maxdepth 0 -mmin +60) ]]; then rm -rf "$old"; fi
done
ls -1t "$cache"/base-*.tar.zst 2>/dev/null | tail -n +3 | xargs -r rm -f
echo "$img"
