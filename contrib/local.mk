# contrib/local.mk - the loaderx Python binding (contrib/python): its
# pytest suite runs under `make check` against the freshly built library.
TESTS += tests/python.test
EXTRA_DIST += tests/python.test \
	contrib/python/pyproject.toml contrib/python/README.md \
	contrib/python/loaderx/__init__.py contrib/python/loaderx/_lib.py \
	contrib/python/loaderx/_index.py contrib/python/loaderx/_sync.py \
	contrib/python/loaderx/_closable.py contrib/python/loaderx/_version.py \
	contrib/python/loaderx/zrecord.py contrib/python/loaderx/zsampler.py \
	contrib/python/loaderx/dataloader.py contrib/python/loaderx/utils.py \
	contrib/python/loaderx/zstream.py contrib/python/loaderx/mixture.py \
	contrib/python/tests/conftest.py contrib/python/tests/example.py \
	contrib/python/tests/refsampler.py contrib/python/tests/streams.py \
	contrib/python/tests/test_readme.py contrib/python/tests/test_store.py \
	contrib/python/tests/test_images.py contrib/python/tests/imagedata.py \
	contrib/python/tests/test_sampler.py \
	contrib/python/tests/test_positions.py contrib/python/tests/test_docs.py \
	contrib/python/tests/test_dataloader.py contrib/python/tests/test_follow.py \
	contrib/python/tests/test_fs.py contrib/python/tests/test_lib.py \
	scripts/bench_loader.py
