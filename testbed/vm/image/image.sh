#!/usr/bin/env bash
# Stage 2 of the VM testbed image (called by ../build.sh, as root): the base rootfs plus every testbed
# kernel module under KMODDIR/*/ and the guest init, as an ext4 image with the kernel and initrd beside it.
#
#   image.sh BASE.tar.zst KMODDIR INIT OUTDIR
set -euo pipefail

base=$1 kmoddir=$2 init=$3 out=$4
work=$(mktemp -d "$(dirname "$out")/work-img.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/rootfs
mkdir -p "$root" "$work/out" "$work/kmod"

tar -C "$root" --numeric-owner -I zstd -xf "$base"
kver=$(ls "$root/lib/modules")
hdr=/usr/src/linux-headers-$kver
if [[ ! -d $hdr ]]; then
	echo "image: installing linux-headers-$kver on the host" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "linux-headers-$kver" </dev/null >&2
fi

# Every kmod/<name>/ with a Kbuild or Makefile, built on a copy so the source tree stays clean.
extra=$root/lib/modules/$kver/extra
for dir in "$kmoddir"/*/; do
	[[ -f $dir/Kbuild || -f $dir/Makefile ]] || continue
	name=$(basename "$dir")
	cp -a "$dir" "$work/kmod/$name"
	echo "image: building kernel module kmod/$name against $kver" >&2
	if ! make -C "$hdr" M="$work/kmod/$name" modules -j"$(nproc)" >"$work/kmod/$name.log" 2>&1; then
		cat "$work/kmod/$name.log" >&2
		echo "image: kernel module kmod/$name failed to build (compiler output above)" >&2
		exit 1
	fi
	grep -E 'warning:' "$work/kmod/$name.log" >&2 || true
	found=0
	while IFS= read -r -d '' ko; do
		strip --strip-debug -o "$extra/$(basename "$ko")" "$ko"
		printf 'kmod=%s\n' "$(basename "$ko" .ko)" >>"$root/fabtb/manifest"
		found=1
	done < <(find "$work/kmod/$name" -name '*.ko' -print0)
	[[ $found -eq 1 ]] || { echo "image: kmod/$name built no .ko file" >&2; exit 1; }
done
chroot "$root" /sbin/depmod -a "$kver"

install -m 0755 "$init" "$root/fabtb/init"
mkdir -p "$root/mnt/host"

# Room for what the sections write outside tmpfs (the VM runs on a throw-away snapshot of this image).
size=$(($(du -sm "$root" | cut -f1) + 512))
mkfs.ext4 -q -F -L fabroot -d "$root" "$work/out/root.img" "${size}M" >&2
cp "$root/boot/vmlinuz-$kver" "$work/out/vmlinuz"
cp "$root/boot/initrd.img-$kver" "$work/out/initrd.img"
cp "$root/fabtb/manifest" "$work/out/manifest"
rm -rf "$out"
mv "$work/out" "$out"
