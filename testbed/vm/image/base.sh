#!/usr/bin/env bash
# Stage 1 of the VM testbed image (called by ../build.sh, as root): a trimmed Debian bookworm minbase
# rootfs with the kernel, rdma-core, perftest and OpenSSH's server (section ssh), a small initrd, and
# the two modules Debian's kernel lacks (siw, netdevsim) built out of tree from linux-source-6.1.
# Writes it as a zstd tarball to $1.
# The hash of this file is the stage's cache key: any edit here rebuilds the base.
set -euo pipefail

out=$1
work=$(mktemp -d "$(dirname "$out")/work-base.XXXXXX")
root=$work/rootfs
cleanup() {
	mountpoint -q "$root/proc" && umount "$root/proc"
	rm -rf "$work"
}
trap cleanup EXIT

mirror=${FABTB_MIRROR:-http://deb.debian.org/debian}
pkgs=linux-image-amd64,rdma-core,ibverbs-providers,ibverbs-utils,rdmacm-utils,perftest,iproute2,kmod,ethtool,procps,iputils-ping,numactl,openssh-server

echo "base: debootstrap bookworm ($pkgs)" >&2
t0=$SECONDS
debootstrap --variant=minbase --include="$pkgs" bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 || {
	tail -n 40 "$work/debootstrap.log" >&2
	echo "base: debootstrap failed (last lines above)" >&2
	exit 1
}
kver=$(ls "$root/lib/modules")
[[ $kver != *$'\n'* ]] || { echo "base: more than one kernel in the rootfs: $kver" >&2; exit 1; }
echo "base: debootstrap done in $((SECONDS - t0))s, kernel $kver" >&2

# Trim what a test VM never reads (773 MB -> ~320 MB in the reference build).
rm -rf "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* \
	"$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/*
find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
m=$root/lib/modules/$kver/kernel
rm -rf "$m/sound" "$m"/drivers/{gpu,media,usb,staging,iio,comedi,hwmon,bluetooth,isdn,mmc,mtd} \
	"$m"/drivers/net/{wireless,usb,can,ethernet,wwan} "$m/drivers/infiniband/hw"

# Small initrd: Debian's default (MODULES=most, 35 MB) costs seconds of emulated boot.
printf 'MODULES=list\nCOMPRESS=gzip\n' >"$root/etc/initramfs-tools/conf.d/fabtb"
printf 'virtio_pci\nvirtio_blk\next4\n' >>"$root/etc/initramfs-tools/modules"
mount -t proc proc "$root/proc"
chroot "$root" update-initramfs -u -k "$kver" >"$work/initramfs.log" 2>&1 || {
	cat "$work/initramfs.log" >&2
	echo "base: update-initramfs failed" >&2
	exit 1
}
umount "$root/proc"

# siw and netdevsim: disabled in every Debian kernel config, so built here against the guest's headers.
hdr=/usr/src/linux-headers-$kver
if [[ ! -d $hdr ]]; then
	echo "base: installing linux-headers-$kver on the host" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "linux-headers-$kver" </dev/null >&2
fi
src=/usr/src/linux-source-6.1.tar.xz
[[ -f $src ]] || { echo "base: $src missing (apt-get install linux-source-6.1)" >&2; exit 1; }
mkdir -p "$work/src"
tar -C "$work/src" -xJf "$src" --strip-components=1 \
	linux-source-6.1/drivers/infiniband/sw/siw linux-source-6.1/drivers/net/netdevsim
extra=$root/lib/modules/$kver/extra
mkdir -p "$extra" "$root/fabtb"
printf 'kver=%s\n' "$kver" >"$root/fabtb/manifest"
for m in drivers/infiniband/sw/siw:siw:CONFIG_RDMA_SIW drivers/net/netdevsim:netdevsim:CONFIG_NETDEVSIM; do
	IFS=: read -r dir name cfg <<<"$m"
	make -s -C "$hdr" M="$work/src/$dir" "$cfg=m" modules -j"$(nproc)" >&2
	strip --strip-debug -o "$extra/$name.ko" "$work/src/$dir/$name.ko"
	printf 'kmod=%s\n' "$name" >>"$root/fabtb/manifest"
done
chroot "$root" /sbin/depmod -a "$kver"

echo "base: writing $(du -sm "$root" | cut -f1) MB rootfs to $out" >&2
tar -C "$root" --numeric-owner -I 'zstd -T0 -3 -q' -cf "$out.tmp" .
mv "$out.tmp" "$out"
