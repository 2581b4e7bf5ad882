# man/local.mk - the manual pages: installed by `make install`, shipped in
# the tarball, and checked by `make check` (tests/man.test: mandoc lint,
# and every option the programs' --help prints is documented).
dist_man_MANS = man/zrecord.1 man/zrecord.5 man/zrecordfs.8 \
	man/mount.zrecordfs.8
dist_noinst_SCRIPTS += tests/man.test
EXTRA_DIST += tests/man_check.py
TESTS += tests/man.test
