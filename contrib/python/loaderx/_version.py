"""_version.py - loaderx's own version, kept equal to the package's (the
ZR_VERSION_* of zrecord.h and pyproject.toml; contrib/python/tests/test_lib.py
checks all three agree)."""
__version__ = "0.1.0"
