"""
_sync.py - the two concurrency helpers a store needs: a shared/exclusive
lock (gathers run side by side; delete, compact, sync and close run alone,
as include/zrecord.h requires) and the ragged writer thread with its
one-slot queue.
"""
import contextlib
import queue
import threading


class RWLock:
    """Many shared holders or one exclusive holder.  Writers wait for
    readers to leave; new readers wait while a writer is waiting, so a
    steady stream of gathers cannot starve close()."""

    def __init__(self):
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0
        self._writer = False
        self._waiting = 0

    @contextlib.contextmanager
    def shared(self):
        with self._cond:
            while self._writer or self._waiting:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                if not self._readers:
                    self._cond.notify_all()

    @contextlib.contextmanager
    def exclusive(self):
        with self._cond:
            self._waiting += 1
            while self._writer or self._readers:
                self._cond.wait()
            self._waiting -= 1
            self._writer = True
        try:
            yield
        finally:
            with self._cond:
                self._writer = False
                self._cond.notify_all()


class Writer:
    """Runs jobs in FIFO order on one background thread, fed through a
    one-slot queue: put() blocks while a job is waiting (backpressure),
    so at most one job runs and one waits.  The first failure is kept and
    raised by the next raise_pending() or drain() on the caller's side.

    Every job runs, also after a failure: jobs are independent (each
    ragged append is its own session), so one failed append never drops
    the ones queued behind it."""

    def __init__(self, name):
        self._queue = queue.Queue(maxsize=1)
        self._error = None
        self._thread = threading.Thread(target=self._run, name=name,
                                        daemon=True)
        self._thread.start()

    def _run(self):
        while True:
            job = self._queue.get()
            try:
                if job is None:
                    return
                job()
            except BaseException as e:  # surfaces on the caller's side
                if self._error is None:
                    self._error = e
            finally:
                self._queue.task_done()

    def put(self, job):
        self._queue.put(job)

    def raise_pending(self):
        err, self._error = self._error, None
        if err is not None:
            raise err

    def drain(self):
        """Waits for every queued job, then raises the first failure."""
        self._queue.join()
        self.raise_pending()

    def stop(self):
        """Drains (without raising), then ends the thread."""
        self._queue.put(None)
        self._thread.join()
