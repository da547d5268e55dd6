# Tern: `make demo` and `make test` are the two commands; see README.md.
PYTHON ?= python3
PYTEST ?= $(PYTHON) -m pytest

all: hypervisor guests

deps:
	@scripts/install-deps.sh

hypervisor:
	$(MAKE) -C hypervisor

guests:
	$(MAKE) -C guests

unit-test:
	$(MAKE) -C tests/unit run

tool-test:
	$(PYTEST) -q tests/tool

system-test: all
	$(PYTEST) -q tests/system

test: deps
	$(MAKE) all
	$(MAKE) unit-test
	$(PYTEST) -q tests/tool tests/system

demo: deps
	$(MAKE) all
	./tern demo

bench: deps
	$(MAKE) all
	$(PYTHON) scripts/bench.py

clean:
	$(MAKE) -C hypervisor clean
	$(MAKE) -C guests clean
	$(MAKE) -C tests/unit clean
	rm -rf build

.PHONY: all deps hypervisor guests unit-test tool-test system-test test demo bench clean
