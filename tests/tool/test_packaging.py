"""pyproject.toml and ./tern are one program: the same entry point, the same version."""

import importlib
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import tern
from tern import cli

REPO_ROOT = Path(__file__).resolve().parents[2]


def pyproject():
    with open(REPO_ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def resolve(spec):
    """`module:attribute` or "module.attribute" (setuptools' attr:) as the object it names."""
    module, _, name = spec.partition(":") if ":" in spec else spec.rpartition(".")
    return getattr(importlib.import_module(module), name)


def test_launcher_prints_the_version():
    proc = subprocess.run([sys.executable, str(REPO_ROOT / "tern"), "--version"],
                          capture_output=True, text=True, timeout=30)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"tern {tern.__version__}\n", "")


def test_module_prints_the_same_version():
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT / "tools"))
    proc = subprocess.run([sys.executable, "-m", "tern", "--version"], capture_output=True,
                          text=True, timeout=30, env=env, cwd=REPO_ROOT)
    assert proc.stdout == f"tern {tern.__version__}\n"


def test_console_script_is_what_the_launcher_runs():
    project = pyproject()
    assert project["project"]["scripts"] == {"tern": "tern.cli:main"}
    assert resolve(project["project"]["scripts"]["tern"]) is cli.main
    # ./tern puts tools/ on the path and runs tern.cli's main: the package pip installs.
    launcher = (REPO_ROOT / "tern").read_text()
    assert 'Path(__file__).resolve().parent / "tools"' in launcher
    assert "from tern.cli import main" in launcher
    setuptools = project["tool"]["setuptools"]
    assert setuptools["package-dir"] == {"": "tools"} and setuptools["packages"] == ["tern"]
    assert (REPO_ROOT / "tools" / "tern" / "cli.py").resolve() == \
        Path(cli.__file__).resolve()


def test_version_has_one_source():
    project = pyproject()
    assert "version" not in project["project"] and project["project"]["dynamic"] == ["version"]
    attr = project["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    assert resolve(attr) == tern.__version__
    assert tern.__version__.count(".") == 2


def test_no_runtime_dependencies_and_test_extras():
    project = pyproject()["project"]
    assert project["dependencies"] == [] and project["requires-python"] == ">=3.11"
    extras = project["optional-dependencies"]
    assert {r.split(">=")[0] for r in extras["test"]} == {"pytest", "hypothesis"}
    assert extras["dev"] == ["tern[test]"]
