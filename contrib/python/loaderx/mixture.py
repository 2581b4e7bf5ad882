"""
mixture.py - Mixture, a NAME.mix.json opened as a weighted mixture of
datasets: its sources (paths relative to the file, or s3:// URLs of
stores) are stores or aligned dataset folders of the same fields, each with a weight; a DataLoader over
it draws (source, record) pairs from MixtureSampler and gathers each
field's records from their sources into one batch.
"""
import json
import os

import numpy as np

from .zrecord import DenseStore, RaggedStore
from ._closable import Closable
from ._lib import lib

__all__ = ["Mixture"]

# The field name of sources that are single stores.
STORE_FIELD = "data"


def _open_store(path):
    try:
        return DenseStore.open(path, readonly=True)
    except TypeError:
        return RaggedStore.open(path, readonly=True)


def _is_url(path):
    """Whether path is a store's URL rather than a local path: the
    library's rule (zr_path_is_url), which zrecord's resolver follows."""
    return lib.zr_path_is_url(os.fsencode(path)) == 1


def _open_source(path):
    """{field: store} of a store (STORE_FIELD) or a dataset folder (its
    stores by folder name, all of one length).  A URL (s3://BUCKET/PREFIX,
    as the library tells one) is one store, opened by the library where it
    lies."""
    if _is_url(path):
        return {STORE_FIELD: _open_store(path)}
    if os.path.exists(os.path.join(path, "meta.zr")):
        return {STORE_FIELD: _open_store(path)}
    if not os.path.isdir(path):
        raise FileNotFoundError("mixture source %s is neither a store nor "
                                "a dataset folder" % path)
    fields = {}
    for name in sorted(os.listdir(path)):
        sub = os.path.join(path, name)
        if os.path.exists(os.path.join(sub, "meta.zr")):
            fields[name] = _open_store(sub)
    lengths = {name: len(s) for name, s in fields.items()}
    if not fields or len(set(lengths.values())) != 1:
        for s in fields.values():
            s.close()
        raise ValueError("dataset folder %s needs stores of one length, "
                         "has %s" % (path, lengths or "none"))
    return fields


def _parse(text, path):
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise ValueError("%s: not JSON: %s" % (path, e)) from None
    srcs = doc.get("sources") if isinstance(doc, dict) else None
    if not isinstance(srcs, list) or not srcs:
        raise ValueError("%s: want {\"sources\": [{\"path\": ..., "
                         "\"weight\": N}, ...]}" % path)
    extra = set(doc) - {"sources", "schedule"}
    if extra:
        raise ValueError("%s: unknown keys %s" % (path, sorted(extra)))
    out = []
    for i, s in enumerate(srcs):
        if (not isinstance(s, dict) or set(s) != {"path", "weight"}
                or not isinstance(s["path"], str) or not s["path"]
                or type(s["weight"]) is not int or s["weight"] < 0):
            raise ValueError("%s: source %d must be {\"path\": a non-empty "
                             "string, \"weight\": an integer >= 0}"
                             % (path, i))
        out.append((s["path"], s["weight"]))
    if not any(w for _, w in out):
        raise ValueError("%s: every weight is 0 (give a source a weight "
                         "above 0)" % path)
    changes = []
    for c in doc.get("schedule", []):
        if (not isinstance(c, dict) or set(c) != {"from", "weights"}
                or type(c["from"]) is not int
                or not isinstance(c["weights"], list)):
            raise ValueError("%s: a schedule entry is {\"from\": position, "
                             "\"weights\": [...]}" % path)
        if not any(c["weights"]):
            raise ValueError("%s: schedule entry %d: every weight is 0 "
                             "(give a source a weight above 0)"
                             % (path, len(changes)))
        changes.append((c["from"], c["weights"]))
    return out, changes


class Mixture(Closable):
    """Mixture(path): the sources of the mixture file path, opened read
    only.  .fields: {name: (dtype, item_shape or None for ragged)};
    .lengths, .weights, .changes (the file's weight schedule);
    .sources[k]: {field: store}.  Close it after the loaders over it."""

    def __init__(self, path):
        self.path = os.fsdecode(path)
        if os.path.islink(self.path):
            # as zrecord and a mount (which shows no symlinks) refuse it
            raise ValueError("%s: a symlink: a mixture file must be a "
                             "regular file; name its target, or copy it"
                             % self.path)
        with open(self.path, encoding="utf-8") as f:
            srcs, self.changes = _parse(f.read(), self.path)
        folder = os.path.dirname(os.path.abspath(self.path))
        self.sources = []
        try:
            for p, _ in srcs:
                self.sources.append(_open_source(
                    p if _is_url(p) else os.path.join(folder, p)))
            self.fields = self._fields()
        except BaseException:
            self.close()
            raise
        self.weights = [w for _, w in srcs]
        self.lengths = [len(next(iter(s.values()))) for s in self.sources]

    @staticmethod
    def _kind(store):
        ragged = isinstance(store, RaggedStore)
        return (store.dtype, None if ragged else store.item_shape)

    def _fields(self):
        first = {n: self._kind(s) for n, s in self.sources[0].items()}
        for k, src in enumerate(self.sources):
            mine = {n: self._kind(s) for n, s in src.items()}
            if mine != first:
                raise ValueError("%s: source %d has fields %s, source 0 %s "
                                 "(sources need the same fields)"
                                 % (self.path, k, mine, first))
        return first

    def gather(self, sources, indices, form="list", pad=0):
        """{field: values} of the pairs (sources[i], indices[i]): dense
        fields stacked, ragged ones as lists (form "list" only; pad is
        unused)."""
        sources = np.asarray(sources)
        indices = np.asarray(indices)
        # Each source's samples, in batch order, are one contiguous run of
        # order: one gather per source into its run, then one scatter.
        order = np.argsort(sources, kind="stable")
        bounds = np.searchsorted(sources[order],
                                 np.arange(len(self.sources) + 1))
        out = {}
        for name, (dtype, shape) in self.fields.items():
            if shape is None:
                out[name] = self._gather_ragged(name, sources, indices,
                                                form)
                continue
            runs = np.empty((len(indices),) + shape, dtype=dtype)
            for k, src in enumerate(self.sources):
                a, b = bounds[k], bounds[k + 1]
                if b > a:
                    src[name].gather(np.ascontiguousarray(
                        indices[order[a:b]]), out=runs[a:b])
            arr = np.empty_like(runs)
            arr[order] = runs
            out[name] = arr
        return out

    def _gather_ragged(self, name, sources, indices, form):
        if form != "list":
            raise ValueError("a mixture's ragged fields come as lists "
                             "(ragged='list')")
        out = [None] * len(indices)
        for k, src in enumerate(self.sources):
            at = np.flatnonzero(sources == k)
            if at.size:
                for i, rec in zip(at, src[name].gather(indices[at])):
                    out[i] = rec
        return out

    def close(self):
        for src in self.sources:
            for s in src.values():
                s.close()
        self.sources = []

    @property
    def closed(self):
        return not self.sources
