"""An imported dataset served by zrecordfs: the folder's aligned batch
(DEST/@batch/...) carries the images and labels of the same samples, as
PIL reads them from the source files."""
import io
import os
import sys

import numpy as np

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
        # (classes.json is on disk; a mount serves stores and batches)
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
