# Tern: `make demo` and `make test` are the two commands; see README.md.
PYTHON ?= python3
PYTEST ?= $(PYTHON) -m pytest

all: hypervisor guests

deps:
	@scripts/install-deps.sh

# arm64 (QEMU virt, build/arm64/) and riscv64 (QEMU virt, build/riscv64/).
hypervisor:
	$(MAKE) -C hypervisor PLATFORM=qemu-virt-arm64 BUILD=build/arm64
	$(MAKE) -C hypervisor PLATFORM=qemu-virt-riscv64 BUILD=build/riscv64

guests:
	$(MAKE) -C guests

# Both ports' host unit tests (tests/unit/build/{arm64,riscv64}/unit-tests).
unit-test:
	$(MAKE) -C tests/unit run

tool-test:
	$(PYTEST) -q tests/tool

system-test: all
	$(PYTEST) -q tests/system

# Every fuzz target (tests/fuzz) for FUZZ_SECONDS, two at a time; `fuzz-smoke` is CI's short run.
FUZZ_SECONDS ?= 60
fuzz:
	$(MAKE) -C tests/fuzz -j2 run FUZZ_SECONDS=$(FUZZ_SECONDS)

fuzz-smoke:
	$(MAKE) fuzz FUZZ_SECONDS=60

# Line coverage of hypervisor/core and each port's guest-reachable arch code by the unit tests
# (llvm-cov, both ports' builds); fails below tests/unit/Makefile's floors (90 %).
coverage:
	$(MAKE) -C tests/unit coverage

test: deps
	$(MAKE) all linux
	$(MAKE) unit-test
	$(PYTEST) -q tests/tool tests/system

demo: deps
	$(MAKE) all
	./tern demo

deps-bench:
	@scripts/install-deps.sh --bench

deps-lint:
	@scripts/install-deps.sh --lint

# Static analysis of the hypervisor, zero findings: clang-tidy, cppcheck with MISRA C 2012,
# and the build's stack check (docs/static-analysis.md).
lint: deps-lint
	scripts/lint.sh

# The full matrix, recorded in docs/ (about 10 minutes on 2 cores).
bench: deps deps-bench
	$(MAKE) all linux
	./tern bench --out docs/bench --doc docs/benchmarks.md

# A few minutes: fewer samples, icount shift 4 only, report under build/.
bench-quick: deps deps-bench
	$(MAKE) all linux
	./tern bench --quick --out build/bench-quick --doc build/bench-quick/benchmarks.md

# Debian's kernel, busybox-static and rt-tests, made into {Image,initramfs.cpio.gz}: arm64's in
# build/linux/ (Debian 12), riscv64's in build/linux-riscv64/ (Debian 13, or sid if its indices
# do not verify: see the script). The initramfs has tern-chan and tern-vio in it, and is remade
# (nothing fetched again) when either changes.
linux: tern-chan tern-vio tern-vsock
	scripts/linux/fetch-linux.sh arm64
	scripts/linux/fetch-linux.sh riscv64

# The Linux guest's channel program, both ports (guests/linux/tern-chan).
tern-chan:
	$(MAKE) -C guests tern-chan

# The Linux guest's VirtIO backend, both ports (guests/linux/tern-vio).
tern-vio:
	$(MAKE) -C guests tern-vio

# The Linux guest's vsock echo client, both ports (guests/linux/tern-vsock).
tern-vsock:
	$(MAKE) -C guests tern-vsock

# Linux on two cores beside the latency guest (examples/linux-rt.toml).
linux-demo: deps
	$(MAKE) all linux
	./tern run examples/linux-rt.toml --icount 4

# Xen 4.17 with the null scheduler for the bench (Debian's source package, about a minute).
xen-null:
	scripts/xen/build-xen-null.sh

# The same with RTDS, ARINC 653 and boot-time cpupools too, for the shared-core bench rows.
xen-sched:
	scripts/xen/build-xen-null.sh sched

clean:
	$(MAKE) -C hypervisor clean
	$(MAKE) -C guests clean
	$(MAKE) -C tests/unit clean
	$(MAKE) -C tests/fuzz clean
	rm -rf build

.PHONY: linux tern-chan tern-vio tern-vsock linux-demo xen-null xen-sched all deps deps-bench deps-lint lint hypervisor guests unit-test tool-test system-test test demo bench bench-quick clean fuzz fuzz-smoke coverage
