"""An imported dataset served whole: zrecordfs's aligned batch
(DEST/@batch/...) and a loaderx DataLoader of its stores carry the images
and labels of the same samples, as PIL reads them from the source
files."""
import io
import os
import subprocess
import sys

import numpy as np
from PIL import Image

from importdata import class_folder, pil_array, read_bytes

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "fs"))
from fsutil import Mount  # noqa: E402


def test_mounted_dataset_batch(zr, tmp_path):
    layout = class_folder(str(tmp_path / "images"), per_class=5)
    src = tmp_path / "src"
    src.mkdir()
    zr.ok("import", tmp_path / "images", src / "ds")
    paths = [(c, p) for c in sorted(layout) for p in layout[c]]
    m = Mount(str(src), str(tmp_path / "mnt"), "batch_size=4")
    try:
        assert {"@batch", "image", "label"} <= set(os.listdir(m.path("ds")))
        with open(m.path("ds", "@batch", "iid", "4", "2-1.npz"), "rb") as f:
            z = np.load(io.BytesIO(f.read()))
        idx = np.load(m.path("ds", "@batch", "iid", "4",
                             "2-1.indices.npy"))
        assert len(idx) == 4
        for k, i in enumerate(idx):
            cls, path = paths[i]
            assert z["label"][k] == sorted(layout).index(cls)
            assert np.array_equal(z["image/%d" % k],
                                  pil_array(read_bytes(path)))
    finally:
        assert m.stop() == 0, m.stderr


def test_loaderx_dataloader_serves_samples(zr, tmp_path):
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                    "contrib", "python"))
    from loaderx.dataloader import DataLoader
    from loaderx.zrecord import DenseStore
    from loaderx.zsampler import Sampler

    layout = class_folder(str(tmp_path / "images"), per_class=4)
    zr.ok("import", "--rgb", "--center-crop", "16", tmp_path / "images",
          tmp_path / "ds")
    paths = [(c, p) for c in sorted(layout) for p in layout[c]]
    streams = {"image": DenseStore.open(str(tmp_path / "ds" / "image")),
               "label": DenseStore.open(str(tmp_path / "ds" / "label"))}
    with DataLoader(streams, batch_size=4,
                    mode=Sampler.Mode.SEQUENTIAL, workers=1) as dl:
        for step in range(3):
            b = next(dl)
            for k in range(4):
                cls, path = paths[step * 4 + k]
                full = np.asarray(Image.open(path).convert("RGB"))
                h, w = full.shape[:2]
                top, left = (h - 16) // 2, (w - 16) // 2
                assert np.array_equal(b["image"][k],
                                      full[top:top + 16, left:left + 16])
                assert b["label"][k] == sorted(layout).index(cls)
    for s in streams.values():
        s.close()


def test_mount_serves_classes_and_files(zr, tmp_path):
    """classes.json and files.txt are files of the mounted dataset folder:
    a copy made through the mount keeps them, byte for byte."""
    class_folder(str(tmp_path / "images"), per_class=2)
    src = tmp_path / "src"
    src.mkdir()
    zr.ok("import", tmp_path / "images", src / "ds")
    zr.ok("import", tmp_path / "images" / "cat", src / "flat")
    m = Mount(str(src), str(tmp_path / "mnt"))
    try:
        assert {"classes.json", "files.txt", "image", "label"} <= \
            set(os.listdir(m.path("ds")))
        assert {"files.txt", "image"} <= set(os.listdir(m.path("flat")))
        for ds in ("ds", "flat"):
            subprocess.run(["cp", "-r", m.path(ds), str(tmp_path / ds)],
                           check=True)
    finally:
        assert m.stop() == 0, m.stderr
    for name in ("ds/classes.json", "ds/files.txt", "flat/files.txt"):
        assert (tmp_path / name).read_bytes() == \
            (src / name).read_bytes(), name
    assert not (tmp_path / "flat" / "classes.json").exists()
