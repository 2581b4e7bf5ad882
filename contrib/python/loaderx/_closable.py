"""
_closable.py - the lifetime protocol shared by stores and loaders: close()
on leaving a with-block and, as a last resort, on garbage collection.
"""


class Closable:
    """Mixin for classes with an idempotent close()."""

    def close(self):
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
