# docs/local.mk - the user documentation beyond the README (the README
# links each page), shipped in the tarball; tests/docs.test checks that
# every link of README.md, CONTRIBUTING.md and docs/*.md resolves, that
# README.md stays at most 600 lines, and that architecture.md's Source
# layout table and CONTRIBUTING.md's prefix list match the tree.
EXTRA_DIST += docs/architecture.md docs/guarantees.md docs/loaderx.md \
	docs/many-hosts.md docs/mount.md docs/performance.md \
	tests/doc_links.py tests/layout_check.py
dist_noinst_SCRIPTS += tests/docs.test
TESTS += tests/docs.test
