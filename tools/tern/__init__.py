"""tern: build, run and measure Tern systems on QEMU virt.

The API system tests use (see runner.py for details):

    from tern import run_system, run_native, ConfigError, ToolError
"""

# The one place the version is written: pyproject.toml reads it, `tern --version` prints it.
__version__ = "0.1.0"

from .errors import ConfigError, TernError, ToolError
from .results import PartitionOutput
from .runner import RunResult, run_native, run_system

__all__ = ["__version__", "ConfigError", "PartitionOutput", "RunResult", "TernError", "ToolError",
           "run_native", "run_system"]
