"""
streams.py - fixture stores whose contents name their own index, so any
batch shows whether its streams line up: joint[i] is filled with i,
label[i] == i, token[i] is i repeated 1 + i % 17 times.
"""
import numpy as np

from loaderx.zrecord import DenseStore, RaggedStore


def arrays(n):
    joint = (np.arange(n, dtype=np.float32)[:, None, None]
             * np.ones((1, 3, 5), dtype=np.float32))
    label = np.arange(n, dtype=np.int64)
    token = [np.full(1 + i % 17, i, dtype=np.int32) for i in range(n)]
    return {"joint": joint, "label": label, "token": token}


def create(root, n):
    """Writes the three stores under root; returns their source arrays."""
    src = arrays(n)
    for name in ("joint", "label"):
        a = src[name]
        with DenseStore.create("%s/%s" % (root, name), a.dtype,
                               a.shape[1:]) as s:
            s.append(a)
    with RaggedStore.create(root + "/token", np.int32) as s:
        s.append(src["token"])
    return src


def open_all(root):
    return {"joint": DenseStore.open(root + "/joint"),
            "label": DenseStore.open(root + "/label"),
            "token": RaggedStore.open(root + "/token")}


def close_all(streams):
    for s in streams.values():
        s.close()


def check_aligned(batch, src, indices=None):
    """Every stream of batch holds the records at the same indices (and
    at `indices`, when given)."""
    label = batch["label"]
    if indices is not None:
        assert label.tolist() == list(indices)
    assert np.array_equal(batch["joint"], src["joint"][label])
    assert len(batch["token"]) == len(label)
    for rec, i in zip(batch["token"], label):
        assert rec.dtype == np.int32 and rec.tolist() == src["token"][i]\
            .tolist()
