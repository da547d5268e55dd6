"""`python3 -m tern` (with tools/ on the module path) is the same as ./tern."""

import sys

from .cli import main

sys.exit(main())
