"""
dataloader.py - DataLoader, the seed's endless step-based loader.  Prefetch
threads claim steps in order, gather every stream at the step's sampler
indices (the gather runs in C with the GIL released), run the transform,
and park the result until the consumer reaches that step; at most `depth`
steps are in flight or waiting, and batches are delivered in step order.
Its state is its seed, its stream position and its stream's schedule
(state_dict), so a run resumes exactly with any world or batch size.
"""
import threading

import numpy as np

from .mixture import Mixture
from .zrecord import RaggedStore, image_opts
from .zsampler import MixtureSampler, Sampler
from .zstream import Schedule
from ._closable import Closable

__all__ = ["DataLoader"]


def _stream_length(streams):
    if not isinstance(streams, dict) or not streams:
        raise TypeError("streams must be a non-empty dict {name: store}")
    lengths = {}
    for name, store in streams.items():
        if not hasattr(store, "gather"):
            raise TypeError("stream %r is not a DenseStore or RaggedStore"
                            % (name,))
        lengths[name] = len(store)
    if len(set(lengths.values())) != 1:
        raise ValueError("streams differ in length: %s" % lengths)
    length = next(iter(lengths.values()))
    if not length:
        raise ValueError("streams are empty")
    return length


class DataLoader(Closable):
    """DataLoader(streams, batch_size=256, transform=None,
    mode=Sampler.Mode.IID, seed=0, workers=2, prefetch=None,
    start_step=0, rank=0, world=1, ragged="list", pad=0, ring=None,
    start=0, schedule=None, decode=None, augment=None).

    An endless iterator of batches {name: values}: a dense stream's value
    is a stacked (B, *item_shape) array, a ragged one's is in the form
    `ragged` names (RaggedStore.gather: "list" of arrays, "packed"
    (data, offsets, shapes) or "padded" (data, lengths) with `pad`), all
    streams at the same indices.  With rank/world each process gets its
    contiguous slice of the global batch of world * batch_size.  The step
    property is the next step to be delivered: a loader built with
    start_step=loader.step continues exactly.

    streams may also be a Mixture (a NAME.mix.json): each batch then
    draws its samples from the mixture's sources in their weights'
    shares (MixtureSampler; mode is unused, ragged fields come as lists).

    Positions.  start is the stream position the run begins at (the
    samples of all ranks consumed before it); .position is the position
    reached after the batches delivered so far.  state_dict() returns
    {"seed", "position", "schedule"} (plain ints, lists and strings, as
    torch's StatefulDataLoader's state_dict: save it with the model) and
    load_state_dict() takes it back, so a loader with another world or
    batch size continues the same stream: every record of the current
    cycle is served once across the old and new ranks (cyclic), and a
    store that grew takes its new length at the next cycle boundary.
    schedule=state["schedule"] and start=state["position"] do the same
    at construction.

    ring=N reuses the dense streams' batch arrays instead of allocating
    (and page-faulting) fresh ones: a batch stays valid until the
    consumer has taken N more, then its arrays may be overwritten (copy
    what must live longer).  Default None: every batch is fresh.

    decode=SIZE / augment="rrc[:SMIN:SMAX],flip" decode the streams that
    are encoded-image stores (RaggedStore.images) in the library's gather
    into one (B, SIZE, SIZE, 3) uint8 array a step (RaggedStore.gather):
    record k of rank R's batch at step t draws its crop from (seed, start
    + (t * world + R) * batch_size + k), as `zrecord batch --augment` and
    a mount's batch files do, so every path gives the same bytes."""

    def __init__(self, streams, batch_size=256, transform=None,
                 mode=Sampler.Mode.IID, seed=0, workers=2, prefetch=None,
                 start_step=0, rank=0, world=1, ragged="list", pad=0,
                 ring=None, start=0, schedule=None, decode=None,
                 augment=None):
        self._mixture = streams if isinstance(streams, Mixture) else None
        length = (None if self._mixture else _stream_length(streams))
        if workers < 1:
            raise ValueError("workers must be >= 1")
        self.depth = prefetch if prefetch is not None else 2 * workers
        if self.depth < 1:
            raise ValueError("prefetch must be >= 1")
        if ragged not in ("list", "packed", "padded"):
            raise ValueError("ragged must be 'list', 'packed' or 'padded'")
        if ring is not None and ring < 1:
            raise ValueError("ring must be >= 1 (or None)")
        self._ragged = {"form": ragged, "pad": pad}
        self._images = None
        if decode is not None or augment is not None:
            image_opts(decode, augment)  # ValueError now, not per step
            self._images = {"decode": decode, "augment": augment}
        # A step's batch uses slot step % slots; the worker filling step
        # s runs only once the consumer has taken s - depth, so the
        # batch that used the slot before (s - slots) has been followed
        # by at least `ring` more.
        self._slots = None if ring is None else self.depth + ring
        self._bufs = {}
        self.streams = streams if self._mixture else dict(streams)
        self.transform = transform
        self._geometry = (length, batch_size, mode, rank, world)
        self.sampler = self._sampler(seed, start_step, start, schedule)
        self.batch_size = batch_size
        self._cond = threading.Condition()
        self._workers = workers
        self._closed = False
        self._begin()

    def _sampler(self, seed, step, start, schedule):
        length, batch_size, mode, rank, world = self._geometry
        if self._mixture:
            m = self._mixture
            if schedule is None:
                schedule = Schedule(m.lengths, weights=m.weights,
                                    changes=m.changes)
            return MixtureSampler(m.lengths, m.weights, batch_size, seed,
                                  rank, world, step, start, schedule)
        return Sampler(length, batch_size, mode, seed, rank, world, step,
                       start, schedule)

    def _begin(self):
        """Starts the prefetch threads at the sampler's step."""
        self._claim = self.sampler.step    # next step a worker takes
        self._deliver = self.sampler.step  # next step next() returns
        self._ready = {}                   # step -> (ok, batch or error)
        self._threads = [threading.Thread(target=self._work, daemon=True,
                                          name="loaderx-prefetch-%d" % i)
                         for i in range(self._workers)]
        for t in self._threads:
            t.start()

    @property
    def step(self):
        return self._deliver

    @property
    def position(self):
        """The stream position after the batches delivered so far."""
        return self.sampler.position(self._deliver)

    def state_dict(self):
        """{"seed", "position", "schedule"}: all a resume needs."""
        return {"seed": self.sampler.seed, "position": self.position,
                "schedule": self.sampler.schedule.to_dict()}

    def load_state_dict(self, state):
        """Continues the stream of state (from state_dict, possibly of a
        loader of another world or batch size) at its position; parked
        batches are dropped."""
        try:
            seed, pos, sched = (state["seed"], state["position"],
                                state["schedule"])
        except (TypeError, KeyError):
            raise ValueError("a loader state is {seed, position, schedule},"
                             " got %r" % (state,)) from None
        sampler = self._sampler(seed, 0, pos, sched)
        self._stop()
        self.sampler = sampler
        self._closed = False
        self._begin()

    def _out(self, name, store, count, step):
        """The ring's array for (stream, step), or None (no ring)."""
        if self._slots is None:
            return None
        key = (name, step % self._slots)
        shape = (count,) + store.item_shape
        buf = self._bufs.get(key)
        if buf is None or buf.shape != shape:
            buf = self._bufs[key] = np.empty(shape, dtype=store.dtype)
        return buf

    def _image_position(self, step):
        sm = self.sampler
        return sm.start + (step * max(sm.world, 1) + sm.rank) * \
            sm.batch_size

    def _gather(self, name, store, idx, step):
        if (self._images and isinstance(store, RaggedStore)
                and store.images):
            return store.gather(idx, seed=self.sampler.seed,
                                position=self._image_position(step),
                                **self._images)
        if isinstance(store, RaggedStore):
            return store.gather(idx, **self._ragged)
        if self._slots is not None:
            return store.gather(idx, out=self._out(name, store, len(idx),
                                                   step))
        return store.gather(idx)

    def _make(self, step):
        if self._mixture:
            src, idx = self.sampler.batch(step)
            batch = self._mixture.gather(src, idx, **self._ragged)
        else:
            idx = self.sampler.batch(step)
            batch = {name: self._gather(name, s, idx, step)
                     for name, s in self.streams.items()}
        return self.transform(batch) if self.transform else batch

    def _take(self):
        """The next step to prefetch, or None once closed."""
        with self._cond:
            while (not self._closed
                   and self._claim >= self._deliver + self.depth):
                self._cond.wait()
            if self._closed:
                return None
            self._claim += 1
            return self._claim - 1

    def _work(self):
        while True:
            step = self._take()
            if step is None:
                return
            try:
                result = (True, self._make(step))
            except BaseException as e:  # delivered to the consumer
                result = (False, e)
            with self._cond:
                if self._closed:
                    return
                self._ready[step] = result
                self._cond.notify_all()

    def __iter__(self):
        return self

    def __next__(self):
        with self._cond:
            while not self._closed and self._deliver not in self._ready:
                self._cond.wait()
            if self._closed:
                raise StopIteration
            ok, value = self._ready.pop(self._deliver)
            self._deliver += 1
            self._cond.notify_all()
        if not ok:
            self.close()
            raise value
        return value

    def close(self):
        """Stops the prefetch threads and drops parked batches; waits only
        for gathers or transforms already running.  Idempotent; the streams
        stay open (they belong to the caller)."""
        self._stop()

    def _stop(self):
        with self._cond:
            self._closed = True
            self._ready.clear()
            self._cond.notify_all()
        me = threading.current_thread()
        for t in self._threads:
            if t is not me:
                t.join()

    @property
    def closed(self):
        return self._closed

