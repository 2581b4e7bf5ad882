"""
dataloader.py - DataLoader, the seed's endless step-based loader.  Prefetch
threads claim steps in order, gather every stream at the step's sampler
indices (the gather runs in C with the GIL released), run the transform,
and park the result until the consumer reaches that step; at most `depth`
steps are in flight or waiting, and batches are delivered in step order.
"""
import threading

from .zsampler import Sampler
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
    start_step=0, rank=0, world=1).

    An endless iterator of batches {name: values}: a dense stream's value
    is a stacked (B, *item_shape) array, a ragged one's a list of arrays,
    all streams at the same indices.  With rank/world each process gets
    its contiguous slice of the global batch of world * batch_size.  The
    step property is the next step to be delivered: a loader built with
    start_step=loader.step continues exactly."""

    def __init__(self, streams, batch_size=256, transform=None,
                 mode=Sampler.Mode.IID, seed=0, workers=2, prefetch=None,
                 start_step=0, rank=0, world=1):
        length = _stream_length(streams)
        if workers < 1:
            raise ValueError("workers must be >= 1")
        self.depth = prefetch if prefetch is not None else 2 * workers
        if self.depth < 1:
            raise ValueError("prefetch must be >= 1")
        self.streams = dict(streams)
        self.transform = transform
        self.sampler = Sampler(length, batch_size, mode, seed, rank, world,
                               start_step)
        self.batch_size = batch_size
        self._cond = threading.Condition()
        self._claim = self.sampler.step    # next step a worker takes
        self._deliver = self.sampler.step  # next step next() returns
        self._ready = {}                   # step -> (ok, batch or error)
        self._closed = False
        self._threads = [threading.Thread(target=self._work, daemon=True,
                                          name="loaderx-prefetch-%d" % i)
                         for i in range(workers)]
        for t in self._threads:
            t.start()

    @property
    def step(self):
        return self._deliver

    def _make(self, step):
        idx = self.sampler.batch(step)
        batch = {name: s.gather(idx) for name, s in self.streams.items()}
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

