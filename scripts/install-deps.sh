#!/usr/bin/env bash
# Install what building and testing Tern needs on Debian 12, and nothing when it is all there.
#   install-deps.sh          build and test
#   install-deps.sh --bench  also the benchmark report's plotting library
#   install-deps.sh --lint   also the static analysers `make lint` runs (clang-tidy, cppcheck)
set -euo pipefail
cd "$(dirname "$0")/.."

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
apt_updated=
apt_install() {
	if [ -z "$apt_updated" ]; then
		"${sudo_cmd[@]}" apt-get update -qq
		apt_updated=1
	fi
	echo "install-deps: installing $*"
	DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "$@" >/dev/null
}
have() { command -v "$1" >/dev/null 2>&1; }
# The Python packages of one of pyproject.toml's extras (test, bench): that file declares them.
extra() {
	python3 -c 'import sys, tomllib
with open("pyproject.toml", "rb") as f:
    print("\n".join(tomllib.load(f)["project"]["optional-dependencies"][sys.argv[1]]))' "$1"
}
pip_extra() {
	local packages
	mapfile -t packages < <(extra "$1")
	python3 -m pip install --quiet "${packages[@]}"
}
system_python() { [ "$(command -v python3)" = /usr/bin/python3 ]; }

need=()
have qemu-system-aarch64 || need+=(qemu-system-arm)
# The riscv virt board, with QEMU's OpenSBI as its firmware (issue 13).
have qemu-system-riscv64 || need+=(qemu-system-misc)
have clang || need+=(clang)
have ld.lld || need+=(lld)
have llvm-objcopy || need+=(llvm)
have dtc || need+=(device-tree-compiler)
have python3 || need+=(python3)
[ ${#need[@]} -eq 0 ] || apt_install "${need[@]}"

# ASan/UBSan and libFuzzer runtimes for the host unit tests and fuzzers (tests/unit, tests/fuzz)
# come with clang's libclang-rt on Debian 12.
if ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n){(void)d;(void)n;return 0;}' |
	clang -x c -fsanitize=fuzzer,address,undefined -o /dev/null - 2>/dev/null; then
	apt_install libclang-rt-14-dev
fi

# The tests' Python packages (pyproject.toml's `test` extra): Debian's for Debian's python3,
# else pip.
if ! python3 -c 'import pytest, hypothesis' 2>/dev/null; then
	if system_python; then
		apt_install python3-pytest python3-hypothesis
	else
		pip_extra test
	fi
fi
python3 -c 'import sys, tomllib, pytest, hypothesis; assert sys.version_info >= (3, 11)'

if [ "${1:-}" = --bench ] && ! python3 -c 'import matplotlib' 2>/dev/null; then
	if system_python; then apt_install python3-matplotlib; else pip_extra bench; fi
fi

if [ "${1:-}" = --lint ]; then
	lint=()
	have clang-tidy || lint+=(clang-tidy)
	have cppcheck || lint+=(cppcheck)   # its MISRA C 2012 addon (misra.py) comes with it
	[ ${#lint[@]} -eq 0 ] || apt_install "${lint[@]}"
fi
