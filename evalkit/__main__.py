"""``python -m evalkit``.

Like the ``evalkit`` console script (and ``python -P``), the working directory is no import
root: ``python -m`` puts it first on ``sys.path``, where a module planted in it (a shared run
directory, a cloned repository) would stand in for a plugin or a library a spec names. The
``evalkit`` package itself is imported already, so its own modules are found as before.
"""

import os
import sys

if not sys.flags.safe_path and sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

from evalkit.cli import console_main  # noqa: E402

console_main()
