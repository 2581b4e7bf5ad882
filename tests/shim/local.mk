# tests/shim/local.mk - LD_PRELOAD shims the tests run real programs under.
# libiotrace logs every write, truncate, flush, rename and unlink with its
# offset and length (tests/rel/test_syncorder.py checks the sync order from
# it); liblatewait holds zrecordfs's session loop between its exit check and
# its wait (tests/fs/test_mount.py sends a signal there).  Built without the sanitizers whatever the build: it is preloaded
# into ASan programs, whose runtime must stay the only instrumented one.
check_LTLIBRARIES = tests/shim/libiotrace.la
tests_shim_libiotrace_la_SOURCES = tests/shim/iotrace.c
tests_shim_libiotrace_la_CFLAGS = -std=c11 -Wall -Wextra \
	$(WERROR_CFLAGS) -fvisibility=hidden
tests_shim_libiotrace_la_CPPFLAGS = -D_GNU_SOURCE
# -rpath: libtool builds a shared module only for a library it could
# install; check_ libraries never are.
tests_shim_libiotrace_la_LDFLAGS = -module -avoid-version -shared \
	-rpath /nowhere
tests_shim_libiotrace_la_LIBADD = -ldl

check_LTLIBRARIES += tests/shim/liblatewait.la
tests_shim_liblatewait_la_SOURCES = tests/shim/latewait.c
tests_shim_liblatewait_la_CFLAGS = $(tests_shim_libiotrace_la_CFLAGS)
tests_shim_liblatewait_la_CPPFLAGS = -D_GNU_SOURCE
tests_shim_liblatewait_la_LDFLAGS = $(tests_shim_libiotrace_la_LDFLAGS)
tests_shim_liblatewait_la_LIBADD = -ldl
