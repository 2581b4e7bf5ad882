# tests/rel.mk - reliability and security: the pytest suites of tests/rel
# (hostile inputs, crash/kill, disk full, concurrency, access) and the
# libFuzzer harnesses of tests/fuzz.  The harnesses are built with clang by
# tests/fuzz/build.sh only when the fuzz test or `make fuzz` needs them.
TESTS += tests/rel.test tests/fuzz.test tests/valgrind.test
dist_noinst_SCRIPTS += tests/rel.test tests/fuzz.test tests/valgrind.test \
	tests/fuzz/build.sh \
	tests/fuzz/run.sh tests/fuzz/mkcorpus.py tests/fuzz/mkcorpus_import.py
EXTRA_DIST += tests/fuzz/corpus $(FUZZ_SRC) tests/rel/conftest.py \
	tests/rel/zrformat.py tests/rel/mount_reader.py \
	tests/rel/test_hostile.py tests/rel/test_hostile_live.py \
	tests/rel/test_diskfull.py \
	tests/rel/test_concurrency.py tests/rel/test_access.py \
	tests/rel/test_crash.py tests/rel/test_syncorder.py \
	tests/rel/crashstates.py tests/rel/test_crashstates.py \
	tests/rel/crashmount.py tests/rel/test_crashmount.py

FUZZ_SRC = tests/fuzz/fuzz_util.c tests/fuzz/fuzz_util.h tests/rmtree.c \
	tests/rmtree.h \
	tests/fuzz/fuzz_npy.c tests/fuzz/fuzz_schema.c \
	tests/fuzz/fuzz_npystream.c tests/fuzz/fuzz_idxlist.c \
	tests/fuzz/fuzz_store.c \
	tests/fuzz/fuzz_mixfile.c tests/fuzz/fuzz_image.c tests/fuzz/fuzz_wds.c \
	tests/fuzz/fuzz_decode.c
FUZZ_CC = clang
FUZZ_BIN = tests/fuzz/bin
# The sources the harnesses exercise: whatever the library, src/files and src/common
# build from, so a new file there is picked up without touching this one.
FUZZ_LIB_SRC = $(src_lib_libzrecord_core_la_SOURCES) \
	$(src_files_libzrfiles_la_SOURCES) $(src_common_libzrcommon_la_SOURCES) \
	$(zr_import_fuzz_sources)

$(FUZZ_BIN)/built: $(FUZZ_LIB_SRC) $(FUZZ_SRC) include/zrecord.h \
		tests/fuzz/build.sh
	$(AM_V_GEN)FUZZ_CC='$(FUZZ_CC)' \
	FUZZ_CPPFLAGS='$(ZSTD_CFLAGS) $(MSGPACK_CFLAGS) $(IMPORT_CFLAGS) $(IMAGE_CFLAGS) $(CURL_CFLAGS)' \
	FUZZ_LIBS='$(ZSTD_LIBS) $(MSGPACK_LIBS) $(IMPORT_LIBS) $(IMAGE_LIBS) $(CURL_LIBS)' \
	$(SHELL) $(srcdir)/tests/fuzz/build.sh $(FUZZ_BIN) $(srcdir) \
		$(FUZZ_LIB_SRC)

# The fuzz test runs the harnesses, so its log needs them built.  They
# are built alike in every build tree (clang, libFuzzer with ASan), so the
# sanitizer build (--enable-sanitizers) neither builds nor runs them
# again: tests/fuzz.test skips there.
if !SANITIZERS
tests/fuzz.log: $(FUZZ_BIN)/built
endif

# Long runs: `make fuzz FUZZ_SECONDS=600`; new inputs and any crash land
# in tests/fuzz/work (kept between runs, so the corpus keeps growing).
FUZZ_SECONDS = 60
fuzz: $(FUZZ_BIN)/built
	@mkdir -p tests/fuzz/work
	$(SHELL) $(srcdir)/tests/fuzz/run.sh $(FUZZ_BIN) \
		$(srcdir)/tests/fuzz/corpus $(FUZZ_SECONDS) tests/fuzz/work
.PHONY: fuzz

clean-local: clean-fuzz clean-crash-explore
clean-fuzz:
	rm -rf $(FUZZ_BIN) tests/fuzz/work
.PHONY: clean-fuzz

# Library concurrency: reader threads gather while a writer appends
# (driven by tests/rel/test_concurrency.py).
check_PROGRAMS += tests/rel/stress_gather
tests_rel_stress_gather_SOURCES = tests/rel/stress_gather.c
tests_rel_stress_gather_LDADD = src/lib/libzrecord.la
# Appends and syncs until killed (tests/rel/test_crash.py).
check_PROGRAMS += tests/rel/crash_writer
tests_rel_crash_writer_SOURCES = tests/rel/crash_writer.c
tests_rel_crash_writer_LDADD = src/lib/libzrecord.la
# Drives the workloads of the crash-state explorer and checks the states it
# builds (tests/rel/crashstates.py, test_crashstates.py).
check_PROGRAMS += tests/rel/crash_workload
tests_rel_crash_workload_SOURCES = tests/rel/crash_workload.c
tests_rel_crash_workload_LDADD = src/lib/libzrecord.la

# The long run of the live-mount hostile generator (make check runs 400
# operations): `make hostile-live HOSTILE_COUNT=100000 HOSTILE_SEED=7`.
HOSTILE_COUNT = 20000
HOSTILE_SEED = 22
hostile-live: all
	cd $(srcdir)/tests/rel && top_srcdir='$(abs_top_srcdir)' \
	top_builddir='$(abs_top_builddir)' ZR_HOSTILE_COUNT=$(HOSTILE_COUNT) \
	ZR_HOSTILE_SEED=$(HOSTILE_SEED) $(PYTHON3) -m pytest -q -s \
	-p no:cacheprovider test_hostile_live.py
.PHONY: hostile-live

# The long run of the crash-state explorer (the bounded one is part of
# tests/rel.test): `make crash-explore CRASH_STATES=100000`, per workload.
CRASH_STATES = 20000
crash-explore: tests/rel/crash_workload tests/shim/libiotrace.la \
		src/fs/zrecordfs
	@rm -rf tests/rel/crash-explore && mkdir -p tests/rel/crash-explore
	$(PYTHON3) $(srcdir)/tests/rel/crashstates.py $(abs_builddir) \
		tests/rel/crash-explore --states $(CRASH_STATES)
.PHONY: crash-explore

clean-crash-explore:
	rm -rf tests/rel/crash-explore
.PHONY: clean-crash-explore
