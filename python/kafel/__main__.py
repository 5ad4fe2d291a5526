# `python -m kafel ...` (and the `kafel` console script of a pip install): runs the kafel
# command-line tool shipped inside the package, with the same arguments and exit code.
"""Runs the kafel CLI that ships in the package (kafel/bin/kafel)."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def cli_path() -> Path:
    """The CLI binary: $KAFEL_CLI when set, else bin/kafel inside this package."""
    override = os.environ.get("KAFEL_CLI")
    return Path(override) if override else Path(__file__).resolve().parent / "bin" / "kafel"


def main() -> int:
    binary = cli_path()
    if not binary.is_file():
        print(f"kafel: the command-line tool is not part of this build ({binary} is missing; "
              "build with KAFEL_BUILD_CLI=ON)", file=sys.stderr)
        return 2
    args = [str(binary), *sys.argv[1:]]
    if hasattr(os, "execv"):
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(args[0], args)  # the CLI replaces this process: signals and exit code are its
    import subprocess

    return subprocess.call(args)


if __name__ == "__main__":
    sys.exit(main())
