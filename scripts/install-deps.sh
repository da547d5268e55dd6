#!/usr/bin/env bash
# Install what building and testing Tern needs on Debian 12, and nothing when it is all there.
set -euo pipefail

need=()
have() { command -v "$1" >/dev/null 2>&1; }
have qemu-system-aarch64 || need+=(qemu-system-arm)
have clang || need+=(clang)
have ld.lld || need+=(lld)
have llvm-objcopy || need+=(llvm)
have dtc || need+=(device-tree-compiler)
have python3 || need+=(python3)
# ASan/UBSan runtimes for the host unit tests come with clang's libclang-rt on Debian 12.
if have clang && ! echo 'int main(void){return 0;}' | clang -x c -fsanitize=address,undefined -o /dev/null - 2>/dev/null; then
	need+=(libclang-rt-14-dev)
fi

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)

if [ ${#need[@]} -gt 0 ]; then
	echo "install-deps: installing ${need[*]}"
	"${sudo_cmd[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${need[@]}" >/dev/null
fi

if ! python3 -c 'import pytest' 2>/dev/null; then
	echo "install-deps: installing pytest"
	if [ "$(command -v python3)" = /usr/bin/python3 ]; then
		DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq python3-pytest >/dev/null
	else
		python3 -m pip install --quiet -r requirements-dev.txt
	fi
fi
python3 -c 'import sys, tomllib, pytest; assert sys.version_info >= (3, 11)'
