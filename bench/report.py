#!/usr/bin/env python3
# Writes kafel's one-page report: a self-contained HTML file (pictures embedded) with the
# commands, devices, tables and pictures of a results folder (`bash scripts/main.sh` ends so).
"""Usage: python3 bench/report.py results/ [-o results/index.html] [--no-png]

Reads every kafel JSON file in the folder (kafel bench / devices / cov --json) and the
commands.txt beside them; also writes each picture as plots/<name>.png next to the page.
"""

import argparse
import os
import sys

from kafel_plots import data, page


def write_pictures(pictures, folder):
    os.makedirs(folder, exist_ok=True)
    for pic in pictures:
        with open(os.path.join(folder, pic.name + ".png"), "wb") as f:
            f.write(pic.png)


def write_atomically(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Write kafel's self-contained HTML report.")
    parser.add_argument("folder", help="results folder (kafel JSON files, commands.txt)")
    parser.add_argument("-o", "--output", help="HTML file (default: FOLDER/index.html)")
    parser.add_argument("--no-png", action="store_true",
                        help="embed the pictures only; do not also write plots/*.png")
    args = parser.parse_args(argv)
    output = args.output or os.path.join(args.folder, "index.html")
    try:
        results = data.load_results(args.folder)
    except data.DataError as e:
        print(f"report.py: error: {e}", file=sys.stderr)
        return 2
    for path, why in results.ignored:
        print(f"report.py: note: {path} not used: {why}", file=sys.stderr)
    text, pictures, failures = page.build_report(results, args.folder)
    for failure in failures:
        print(f"report.py: warning: picture {failure}", file=sys.stderr)
    out_dir = os.path.dirname(os.path.abspath(output))
    try:
        if not args.no_png:
            write_pictures(pictures, os.path.join(out_dir, "plots"))
        write_atomically(output, text)
    except OSError as e:
        print(f"report.py: error: cannot write {e.filename}: {e.strerror}", file=sys.stderr)
        return 1
    print(f"wrote {output} ({len(pictures)} pictures, {len(text) / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
