# kunit-rcu: RCU's Linux-kernel requirements as KUnit tests on Debian's 6.1 tree.
# See README.md.  Variables: ARCH, CONFIG, EXTRA_PATCHES, TIMEOUT, FORCE,
# KUNIT_RCU_CACHE (cache directory), MUTANTS (make mutants subset), N (make soak),
# REV, COVERAGE_ARCH, NO_RUN (make coverage).

ARCH ?= x86_64
CONFIG ?= default
EXTRA_PATCHES ?=
TIMEOUT ?= 600
MUTANTS ?=
N ?= 10
REV ?=
BENCH ?=
COVERAGE_ARCH ?= x86_64 arm64
SERIES_ARCH ?= x86_64 arm64
PYTHON ?= python3
KR := $(PYTHON) scripts/kunit-rcu
FORCE_FLAG := $(if $(FORCE),--force)

.PHONY: run check check-configs kconfig-check flavor-api coverage coverage-baseline prepare series series-build mutants \
	selftest soak bench matrix help

help:
	@echo "make run     install packages, prepare the tree, build, boot, report"
	@echo "             (ARCH=x86_64|arm64 CONFIG=<configs/NAME> EXTRA_PATCHES=\"/abs/a.patch\")"
	@echo "make check   the project's tests: tooling unit tests, x86_64 and arm64 runs of"
	@echo "             CONFIG=default, ghost, nopreempt and nohz, coverage gate, Kconfig rules"
	@echo "             (CFG-1), flavor APIs (FUT-6), mutants"
	@echo "make check-configs  every configs/NAME.config on every arch it applies to"
	@echo "make kconfig-check  CFG-1 on the .config of make check's existing builds"
	@echo "make flavor-api     FUT-6: removed bh/sched APIs gone from the prepared tree"
	@echo "make coverage       default runs on both arches, per-patch gcov table, SUMMARY.md,"
	@echo "                    HTML, gate (REV=<commit>: lines changed since it; NO_RUN=1)"
	@echo "make coverage-baseline  store kernel/rcu/ coverage of the last runs as the baseline"
	@echo "make series-build   each patch builds alone; production objects unchanged"
	@echo "                    (SERIES_ARCH=\"x86_64 arm64\")"
	@echo "make soak    boot one kernel N times (N=10), per case what it did; a case"
	@echo "             that varies fails (ARCH=\"x86_64 arm64\" CONFIG=<name>)"
	@echo "make prepare make series make mutants make selftest make bench make matrix"

run:
	$(KR) run --arch="$(ARCH)" --config="$(CONFIG)" --extra="$(EXTRA_PATCHES)" --timeout="$(TIMEOUT)" $(FORCE_FLAG)

check:
	$(KR) check --config="$(CONFIG)" --timeout="$(TIMEOUT)" $(FORCE_FLAG)

check-configs:
	$(KR) check-configs --timeout="$(TIMEOUT)" $(FORCE_FLAG)

kconfig-check:
	$(KR) kconfig-check --config="$(CONFIG)"

flavor-api:
	$(KR) flavor-api

coverage:
	$(KR) coverage --arch="$(COVERAGE_ARCH)" --rev="$(REV)" --timeout="$(TIMEOUT)" \
		$(if $(NO_RUN),--no-run) $(FORCE_FLAG)

coverage-baseline:
	$(KR) coverage-baseline --arch="$(COVERAGE_ARCH)"

prepare:
	$(KR) prepare $(FORCE_FLAG)

series:
	$(KR) series $(FORCE_FLAG)

series-build:
	$(KR) series-build --arch="$(SERIES_ARCH)"

mutants:
	$(KR) mutants --config="$(CONFIG)" --only="$(MUTANTS)"

selftest:
	$(KR) selftest

soak:
	$(KR) soak --arch="$(ARCH)" --config="$(CONFIG)" --boots="$(N)" --timeout="$(TIMEOUT)"

bench:
	$(KR) bench --arch="$(ARCH)" --config="$(CONFIG)" --bench="$(BENCH)"

matrix:
	$(KR) matrix
