#!/usr/bin/env python3
# Ladder charts of `kafel bench --json` files: per device and type, rungs in ladder order, log
# GFLOP/s, baselines as lines with the ratio on each bar (bench/kafel_plots/ladder.py draws).
"""Usage: python3 bench/plot.py r.json [more.json ...] -o r.png   (.svg/.pdf by extension)

One row per (device, type) found in the files. The whole report page with roofline, stream
timeline and shape map: python3 bench/report.py results/ -o results/index.html
"""

import argparse
import sys

from kafel_plots import data, ladder, style


def main(argv=None):
    parser = argparse.ArgumentParser(description="Ladder charts of kafel bench JSON files.")
    parser.add_argument("json", nargs="+", help="files written by kafel bench --json")
    parser.add_argument("-o", "--output", required=True, help="image file (.png, .svg, .pdf)")
    args = parser.parse_args(argv)
    try:
        results = data.load_files(args.json)
    except data.DataError as e:
        print(f"plot.py: error: {e}", file=sys.stderr)
        return 2
    for path, why in results.ignored:
        print(f"plot.py: note: {path} not used: {why}", file=sys.stderr)
    records = results.all_records()
    shown = [r for group in ladder.ladder_groups(records).values()
             for r in ladder.ladder_records(group)]
    fig = ladder.ladder_figure(shown)
    if fig is None:
        print("plot.py: error: no benchmark result that ran in " + ", ".join(args.json),
              file=sys.stderr)
        return 1
    try:
        style.save(fig, args.output)
    except (OSError, ValueError) as e:
        print(f"plot.py: error: cannot write {args.output}: {e}", file=sys.stderr)
        return 1
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
