#!/bin/sh
# example.sh - the README's main job on a built-in example: builds, makes a
# small image+label dataset, writes it into stores with `zrecord`, gathers a
# random batch, then mounts the stores with zrecordfs and uses them through
# the filesystem with cat, NumPy and cp.  Cleans up after itself.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/deps.sh"
b=$("$top/scripts/build.sh")
zr=$b/src/cli/zrecord
zrfs=$b/src/fs/zrecordfs
py=/usr/bin/python3
work=$(mktemp -d /tmp/zrecord-example.XXXXXX)
mnt=$work/mnt

cleanup() {
	mountpoint -q "$mnt" 2>/dev/null && fusermount3 -u "$mnt"
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

say() { printf '\n== %s\n' "$*"; }

say "1. a small dataset: 512 smooth 3x32x32 uint8 images and their labels"
$py - "$work" <<'PY'
import sys, numpy as np
w = sys.argv[1]
rng = np.random.default_rng(0)
y, x = np.mgrid[0:32, 0:32] / 32
f = rng.uniform(0.2, 1.0, (512, 3, 2, 1, 1))
imgs = 128 + 40 * np.sin(2 * np.pi * f[:, :, 0] * x) * np.cos(2 * np.pi * f[:, :, 1] * y)
imgs += (rng.integers(0, 64, imgs.shape) == 0)      # sparse sensor noise
imgs = imgs.round().clip(0, 255).astype(np.uint8)
np.save(f"{w}/images.npy", imgs[:448]); np.save(f"{w}/more.npy", imgs[448:])
np.save(f"{w}/labels.npy", (np.arange(512) % 10).astype(np.int64)[:448])
print("images.npy", imgs[:448].shape, imgs.dtype, "  more.npy", imgs[448:].shape)
PY

say "2. two stores of one dataset: zstd images, raw labels"
$zr create "$work/src/train/images" --dtype '|u1' --shape 3,32,32 --codec zstd
$zr create "$work/src/train/labels" --dtype '<i8' --shape= --codec raw
$zr append "$work/src/train/images" "$work/images.npy"
$zr append "$work/src/train/labels" "$work/labels.npy"
$zr stats "$work/src/train/images"

say "3. a random batch: zrecord batch --seed 7 --step 3 --batch-size 4 (iid)"
$zr batch "$work/src/train/images" --seed 7 --step 3 --batch-size 4 --indices \
	-o "$work/idx.npy"
$zr batch "$work/src/train/images" --seed 7 --step 3 --batch-size 4 \
	-o "$work/batch.npy"
$py -c "
import numpy as np
i = np.load('$work/idx.npy'); b = np.load('$work/batch.npy')
src = np.load('$work/images.npy')
print('indices', i.tolist(), 'batch', b.shape, b.dtype,
      'equals the source rows:', bool((b == src[i]).all()))"

say "4. mount: zrecordfs $work/src $mnt -o sampler=cyclic,batch_size=64"
mkdir -p "$mnt"
"$zrfs" "$work/src" "$mnt" -o sampler=cyclic,batch_size=64
ls "$mnt/train" "$mnt/train/images"
say "cat $mnt/train/images/stats"
cat "$mnt/train/images/stats"
say "np.load through the mount"
$py -c "
import numpy as np
m = '$mnt/train'
r = np.load(m + '/images/records/5.npy')
b = np.load(m + '/images/batch/7-3.npy')
i = np.load(m + '/images/batch/7-3.indices.npy')
l = np.load(m + '/labels/batch/7-3.npy')
src = np.load('$work/images.npy')
print('records/5.npy', r.shape, r.dtype, 'equals source:', bool((r == src[5]).all()))
print('batch/7-3.npy', b.shape, 'labels', l[:8].tolist(), '...')
print('batch equals source rows at its indices:', bool((b == src[i]).all()))
z = np.load(m + '/@batch/7-3.npz')
print('@batch/7-3.npz members', sorted(z.files), 'aligned:',
      bool((z['images'] == b).all() and (z['labels'] == l).all()))"

say "5. append with cp, then stats again"
cp "$work/more.npy" "$mnt/train/images/append"
$py -c "import json; print(json.load(open('$mnt/train/images/stats'))['records'], 'records')"

say "6. unmount"
fusermount3 -u "$mnt"
# The daemon closes (syncs) its stores just after the unmount returns.
flock -s "$work/src/train/images/meta.zr" true
$zr verify "$work/src/train/images"
