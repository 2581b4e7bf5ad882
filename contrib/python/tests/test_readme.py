"""
test_readme.py - every code example of the seed README, verbatim, run in a
fresh folder with the inputs it assumes (data.npy, images, seqs, ...) and
checked against what the README says it prints or returns.  The README
reads top to bottom, so an example may use names (np, DataLoader) that an
earlier one imported; the prelude gives it those.
"""
import numpy as np
import pytest

import example
from loaderx.dataloader import DataLoader
from loaderx.zrecord import DenseStore, RaggedStore

QUICK_START = '''
import numpy as np

from loaderx.zrecord import DenseStore
from loaderx.dataloader import DataLoader

data = np.load('data.npy', mmap_mode='r')
label = np.load('label.npy', mmap_mode='r')
with DenseStore.create('train_data', data.dtype, data.shape[1:]) as ds:
    ds.append(data)
with DenseStore.create('train_label', label.dtype, label.shape[1:]) as ds:
    ds.append(label)

data_store = DenseStore.open('train_data')
label_store = DenseStore.open('train_label')
loader = DataLoader({'data': data_store, 'label': label_store},
                    transform=lambda batch: batch)
for i, batch in enumerate(loader):
    if i >= 256:
        break

print(batch['data'].shape)
print(batch['label'].shape)

loader.close()
data_store.close()
label_store.close()
'''

CREATE_DENSE = '''
import numpy as np
from loaderx.zrecord import DenseStore

data = np.load('data.npy', mmap_mode='r')
with DenseStore.create('train_data', data.dtype, data.shape[1:]) as ds:
    ds.append(data)
'''

OPEN_DENSE = '''
ds = DenseStore.open('train_data')
batch = ds[:]
ds.close()
'''

RECORDS_DENSE = '''
import numpy as np
from loaderx.zrecord import DenseStore

data = np.arange(64, dtype=np.float32).reshape(8, 2, 4)
with DenseStore.create('data', data.dtype, data.shape[1:]) as ds:
    ds.append(data)
ds = DenseStore.open('data')
ds[0, 5, 2]                          # (3, 2, 4) — shape from the persisted schema
ds.close()
'''

RECORDS_RAGGED = '''
from loaderx.zrecord import RaggedStore

seqs = [np.arange(L, dtype=np.int32) for L in (3, 1, 4, 1, 5)]
with RaggedStore.create('tokens', np.int32) as rs:
    rs.append(seqs)                       # dtype explicit; each record keeps its shape
rs = RaggedStore.open('tokens')

records = rs[0, 2, 4]                # list of ndarray — one per record, exact shapes
rs.close()
lengths = np.array([len(r) for r in records])
padded = np.zeros((len(records), lengths.max()), dtype=records[0].dtype)
for i, r in enumerate(records):
    padded[i, :len(r)] = r             # (B, max_len) — your policy, your loop
'''

COLLATE = '''
def collate(batch):
    return {'input_ids': batch['tokens'], 'label': batch['label']}

loader = DataLoader({'tokens': dense_tokens, 'label': labelset}, batch_size=32,
                    transform=collate)
batch = next(loader)
loader.close()
'''

WRITABLE = '''
from loaderx.zrecord import DenseStore, RaggedStore

ds = DenseStore.create('mnist/x', dtype=np.uint8, item_shape=(28, 28))
ds.append(images[i:i + 1024])        # synchronous native batch; returns None
ds.append(single_image[None])        # one sample is batch_size 1 — add the axis yourself
ds[:4]                               # read path is direct

tok = RaggedStore.create('tokens', dtype=np.int32)
tok.append([seq_a, seq_b, seq_c])
'''

MAINTENANCE = '''
ds.delete(np.arange(0, len(ds), 2))   # swap-last: index space stays dense, survivors reindex
ds.stats()                            # {'records', 'live_bytes', 'data_bytes', 'reclaimable'}
ds.compact()                          # reclaim the deleted bytes, in place — offline only
ds.close()
tok.close()
'''

CODEC_DICT = '''
from loaderx.utils import train_dict
from loaderx.zrecord import DenseStore, RaggedStore

# train once on the settled data — a standalone, reusable artifact
d = train_dict(settled_array, tier="balanced")

# then any new store can install it and append explicitly
with RaggedStore.create('tokens', np.int32, codec='zstd_dict', dict_bytes=d) as ds:
    ds.append(token_generator)
with DenseStore.create('data', data.dtype, data.shape[1:],
                       codec='zstd_dict', dict_bytes=d) as ds:
    ds.append(data)
'''

RECODE = '''
from loaderx.utils import train_dict
from loaderx.zrecord import DenseStore

with DenseStore.open("src") as s, \\
     DenseStore.create("dst", dtype=s.dtype, item_shape=s.item_shape,
                       codec="zstd_dict", dict_bytes=train_dict(s)) as d:
    d.append(s[:])                             # ndarray -> dense append
'''

MULTI_STREAM = '''
from loaderx.zrecord import DenseStore, RaggedStore
from loaderx.dataloader import DataLoader

root = "xsub/train"
with DenseStore.create(root + "/joint", joint.dtype, joint.shape[1:]) as s:
    s.append(joint)
with DenseStore.create(root + "/label", label.dtype, label.shape[1:]) as s:
    s.append(label)
with RaggedStore.create(root + "/token", np.int32) as s:
    s.append(seqs)

streams = {
    "joint": DenseStore.open(root + "/joint"),
    "label": DenseStore.open(root + "/label"),
    "token": RaggedStore.open(root + "/token"),
}
streams["joint"][0, 5, 2]            # each stream keeps its own index API
loader = DataLoader(streams, batch_size=256)
batch = next(loader)                  # {name: values}, index-aligned

loader.close()
for stream in streams.values():
    stream.close()
'''

TORCH_DEVICE = '''
import torch

device = "cuda:0"
def to_device(batch):
    return {k: torch.from_numpy(v).to(device, non_blocking=True)
            for k, v in batch.items()}

streams = {
    "joint": DenseStore.open(root + "/joint"),
    "label": DenseStore.open(root + "/label"),
    "token": RaggedStore.open(root + "/token"),
}
loader = DataLoader(streams, transform=to_device)
for batch in loader:
    model(batch)                        # already on device
'''

TORCH_PINNED = '''
def to_device(batch):
    return {k: torch.from_numpy(v).pin_memory().to(device, non_blocking=True)
            for k, v in batch.items()}
'''

JAX_DEVICE = '''
import jax

def to_device(batch):
    return {k: jax.device_put(v) for k, v in batch.items()}
'''

ZSAMPLER = '''
from loaderx.zsampler import Sampler

sampler = Sampler(1_000_000, 256, Sampler.Mode.IID, seed=42)
indices = sampler.next()
'''


def prelude(**names):
    """What the earlier examples of the README already imported."""
    return dict(np=np, DenseStore=DenseStore, RaggedStore=RaggedStore,
                DataLoader=DataLoader, **names)


def test_quick_start(capsys):
    # record i of data is filled with i % 256, label i is i: alignment
    # between the two streams is then checkable from any batch.
    n = 600
    np.save("data.npy", (np.arange(n) % 256).astype(np.uint8)[:, None, None,
                                                              None]
            * np.ones((1, 3, 8, 8), dtype=np.uint8))
    np.save("label.npy", np.arange(n, dtype=np.int64))
    ns = {}
    example.run(QUICK_START, ns)
    assert capsys.readouterr().out == "(256, 3, 8, 8)\n(256,)\n"
    batch = ns["batch"]
    assert batch["data"].dtype == np.uint8
    lab = batch["label"]
    assert lab.min() >= 0 and lab.max() < n
    assert np.array_equal(batch["data"][:, 0, 0, 0], (lab % 256))
    assert data_equal("train_data", np.load("data.npy"))


def data_equal(path, expected):
    with DenseStore.open(path) as ds:
        return (ds.dtype == expected.dtype and len(ds) == len(expected)
                and np.array_equal(ds[:], expected))


def test_create_and_open_dense():
    data = np.random.default_rng(0).normal(size=(50, 3, 5)).astype("<f8")
    np.save("data.npy", data)
    ns = {}
    example.run(CREATE_DENSE, ns)
    example.run(OPEN_DENSE, ns)
    assert ns["batch"].shape == (50, 3, 5)
    assert np.array_equal(ns["batch"], data)
    assert ns["ds"].closed


def test_records_dense():
    ns = {}
    shown = example.run(RECORDS_DENSE, ns)
    got = shown.value("ds[0, 5, 2]")
    assert got.shape == (3, 2, 4)
    assert np.array_equal(got, ns["data"][[0, 5, 2]])


def test_records_ragged():
    ns = prelude()
    example.run(RECORDS_RAGGED, ns)
    assert [r.shape for r in ns["records"]] == [(3,), (4,), (5,)]
    assert all(r.dtype == np.int32 for r in ns["records"])
    assert ns["padded"].tolist() == [[0, 1, 2, 0, 0], [0, 1, 2, 3, 0],
                                     [0, 1, 2, 3, 4]]


def test_collate_loader():
    tokens = np.arange(100 * 16, dtype=np.int32).reshape(100, 16)
    with DenseStore.create("tok", tokens.dtype, (16,)) as s:
        s.append(tokens)
    with DenseStore.create("lab", np.int64, ()) as s:
        s.append(np.arange(100, dtype=np.int64))
    with DenseStore.open("tok") as dense_tokens, \
            DenseStore.open("lab") as labelset:
        ns = prelude(dense_tokens=dense_tokens, labelset=labelset)
        example.run(COLLATE, ns)
    batch = ns["batch"]
    assert sorted(batch) == ["input_ids", "label"]
    assert batch["input_ids"].shape == (32, 16)
    assert np.array_equal(batch["input_ids"], tokens[batch["label"]])
    assert ns["loader"].closed


def test_writable_stores_and_maintenance():
    rng = np.random.default_rng(1)
    images = rng.integers(0, 255, size=(1024, 28, 28), dtype=np.uint8)
    single = rng.integers(0, 255, size=(28, 28), dtype=np.uint8)
    seqs = [np.arange(n, dtype=np.int32) for n in (7, 1, 300)]
    ns = prelude(images=images, single_image=single, i=0, seq_a=seqs[0],
                 seq_b=seqs[1], seq_c=seqs[2])
    shown = example.run(WRITABLE, ns)
    assert shown.value("ds.append(images[i:i + 1024])") is None
    assert np.array_equal(shown.value("ds[:4]"), images[:4])
    everything = np.concatenate([images, single[None]])
    assert len(ns["ds"]) == 1025

    shown = example.run(MAINTENANCE, ns)
    stats = shown.value("ds.stats()")
    assert sorted(stats) == ["data_bytes", "live_bytes", "reclaimable",
                             "records"]
    assert stats["records"] == 512
    assert stats["reclaimable"] == stats["data_bytes"] - stats["live_bytes"]
    assert stats["reclaimable"] > 0
    with DenseStore.open("mnist/x") as ds:
        assert ds.stats()["reclaimable"] == 0
        survivors = ds[:]
    # swap-last delete of every even index keeps exactly the odd records
    assert sorted(map(bytes, survivors)) == sorted(map(bytes,
                                                       everything[1::2]))
    with RaggedStore.open("tokens") as tok:
        assert [r.tolist() for r in tok[:]] == [s.tolist() for s in seqs]


def test_codec_dict():
    rng = np.random.default_rng(2)
    vocab = rng.integers(0, 50000, size=64, dtype=np.int32)
    settled = vocab[rng.integers(0, 64, size=(4000, 64))]
    lengths = rng.integers(1, 200, size=300)
    seqs = [vocab[rng.integers(0, 64, size=n)] for n in lengths]
    data = settled[:1000]
    ns = prelude(settled_array=settled, token_generator=iter(seqs),
                 data=data)
    example.run(CODEC_DICT, ns)
    d = ns["d"]
    assert isinstance(d, bytes) and 0 < len(d) <= 128 * 1024
    with RaggedStore.open("tokens") as rs:
        assert rs.codec == "zstd_dict"
        assert [r.tolist() for r in rs[:]] == [s.tolist() for s in seqs]
    with DenseStore.open("data") as ds:
        assert ds.codec == "zstd_dict"
        assert np.array_equal(ds[:], data)
        stats = ds.stats()
        assert stats["live_bytes"] * 2 < data.nbytes  # it compresses


def test_recode_to_dict():
    data = np.tile(np.arange(256, dtype=np.uint16), (2000, 1))
    data[:, 0] = np.arange(2000)
    with DenseStore.create("src", data.dtype, data.shape[1:],
                           codec="raw") as s:
        s.append(data)
    example.run(RECODE, prelude())
    with DenseStore.open("dst") as d:
        assert d.codec == "zstd_dict"
        assert d.item_shape == (256,) and d.dtype == np.uint16
        assert np.array_equal(d[:], data)


def multi_stream_inputs(n=300):
    joint = np.arange(n, dtype=np.float32)[:, None, None] * np.ones(
        (1, 3, 5), dtype=np.float32)
    label = np.arange(n, dtype=np.int64)
    seqs = [np.full(1 + i % 17, i, dtype=np.int32) for i in range(n)]
    return dict(joint=joint, label=label, seqs=seqs)


def check_aligned(batch, inputs):
    label = batch["label"]
    assert np.array_equal(batch["joint"], inputs["joint"][label])
    assert [t.tolist() for t in batch["token"]] == [
        inputs["seqs"][i].tolist() for i in label]


def test_multi_stream():
    inputs = multi_stream_inputs()
    ns = prelude(**inputs)
    shown = example.run(MULTI_STREAM, ns)
    assert np.array_equal(shown.value('streams["joint"][0, 5, 2]'),
                          inputs["joint"][[0, 5, 2]])
    batch = ns["batch"]
    assert batch["joint"].shape == (256, 3, 5)
    assert len(batch["token"]) == 256
    check_aligned(batch, inputs)
    assert all(s.closed for s in ns["streams"].values())


def stop_after(ns, count):
    """A stand-in model that ends the example's endless loop."""
    seen = []

    def model(batch):
        seen.append(batch)
        if len(seen) == count:
            ns["loader"].close()
    return model, seen


def run_torch_example(ns, code):
    model, seen = stop_after(ns, 3)
    ns["model"] = model
    example.run(code, ns)
    for s in ns["streams"].values():
        s.close()
    return seen


def test_torch_device_with_cpu_stand_in():
    torch = pytest.importorskip("torch", reason="python3-torch missing")
    inputs = multi_stream_inputs()
    example.run(MULTI_STREAM, prelude(**inputs))
    # No accelerator here: the same code with device "cpu".  As written
    # the example also sends the ragged "token" stream (a list) through
    # torch.from_numpy, which cannot take a list: the transform's error
    # must reach the consumer.
    code = TORCH_DEVICE.replace('"cuda:0"', '"cpu"')
    ns = prelude(root="xsub/train")
    with pytest.raises(TypeError, match="np.ndarray"):
        run_torch_example(ns, code)
    ns["loader"].close()
    for s in ns["streams"].values():
        s.close()
    # With the dense streams only it runs to the end, tensors on device.
    dense = code.replace('"token": RaggedStore.open(root + "/token"),', "")
    ns = prelude(root="xsub/train")
    seen = run_torch_example(ns, dense)
    assert len(seen) == 3
    for batch in seen:
        assert isinstance(batch["joint"], torch.Tensor)
        assert batch["joint"].device.type == "cpu"
        assert batch["joint"].shape == (256, 3, 5)
        assert torch.equal(batch["joint"][:, 0, 0],
                           batch["label"].to(torch.float32))


def test_torch_pinned_transfer():
    torch = pytest.importorskip("torch", reason="python3-torch missing")
    if not torch.cuda.is_available():
        pytest.skip("pin_memory() needs a CUDA device; none on this machine")
    ns = prelude(torch=torch, device="cuda:0")
    example.run(TORCH_PINNED, ns)
    out = ns["to_device"]({"x": np.arange(4)})
    assert out["x"].device.type == "cuda"


def test_jax_device_put():
    jax = pytest.importorskip("jax", reason="jax is not packaged in Debian")
    ns = prelude()
    example.run(JAX_DEVICE, ns)
    out = ns["to_device"]({"x": np.arange(4)})
    assert np.array_equal(np.asarray(out["x"]), np.arange(4))
    del jax


def test_zsampler():
    import refsampler
    ns = {}
    example.run(ZSAMPLER, ns)
    idx = ns["indices"]
    assert idx.shape == (256,)
    assert idx.tolist() == refsampler.batch(1, 42, 1_000_000, 256, 0)
    assert ns["sampler"].step == 1
