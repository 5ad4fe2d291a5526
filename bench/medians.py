#!/usr/bin/env python3
# Ratios to a baseline across processes: one `kafel bench --json` file per run of the same
# command, each run's ratio per kernel, roles and shape, and their median (what the docs quote).
"""Usage: python3 bench/medians.py RUN.json [RUN.json ...] [--baseline NAME] [--target X]
                                  [--markdown]

A ratio is the baseline's median time over the kernel's, from records of one file (one process):
the GPU's clock and the libraries' choices move from process to process by a few per cent, so
single-process ratios near 1.0 decide nothing, and the median over processes is the figure.
Only verified records count; a row lists how many runs it has. --target X marks the rows whose
median is below X; the exit code is 0 when none is, 3 when one is (1 for unreadable input).
"""

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kafel_plots.data import (DataError, baseline_gflops, baseline_names,  # noqa: E402
                              bench_records, is_record, is_verified, kind_of, ratio_to_baseline,
                              read_json)


def shape_text(r):
    batch = r.get("batch", 1) or 1
    shape = f"{r['m']}x{r['n']}x{r['k']}"
    return shape if batch == 1 else f"{batch}x{shape}"


def run_ratios(doc, baseline):
    """{(kernel, config, type, shape, op): ratio} of one run, against `baseline` or the first
    baseline that ran the same problem; only verified records on both sides."""
    records = [r for r in bench_records(doc) if is_record(r) and is_verified(r)]
    bases = baseline_gflops(records)
    names = [baseline] if baseline else baseline_names(records)
    out = {}
    for r in records:
        if r.get("baseline"):
            continue
        for name in names:
            ratio = ratio_to_baseline(r, bases, name)
            if ratio is not None:
                key = (r["kernel"], r.get("config", ""), r.get("type", ""), shape_text(r),
                       r.get("op", "NN"))
                out[key] = ratio
                break
    return out


def collect(paths, baseline):
    rows = {}  # key -> [ratio per run that has it]
    for path in paths:
        doc = read_json(path)
        if kind_of(doc) != "bench":
            raise DataError(f"{path}: not a kafel bench JSON file (kafel bench --json)")
        ratios = run_ratios(doc, baseline)
        if not ratios:
            raise DataError(f"{path}: no verified kernel record with a verified baseline beside "
                            "it (run kafel bench with --vs)")
        for key, ratio in ratios.items():
            rows.setdefault(key, []).append(ratio)
    return rows


def table(rows, runs, target, markdown):
    head = ["kernel", "roles", "m x n x k", "per run", "median", "runs"]
    body = []
    below = 0
    for (kernel, config, type_, shape, _op), ratios in rows.items():
        med = statistics.median(ratios)
        mark = ""
        if target is not None and med < target:
            mark = " *"
            below += 1
        label = kernel if not config or config == "(defaults)" else f"{kernel} {config}"
        body.append([label, type_, shape, " ".join(f"{x:.2f}" for x in ratios),
                     f"{med:.3f}{mark}", f"{len(ratios)}/{runs}"])
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(row) + " |" for row in body]
    else:
        widths = [max(len(row[i]) for row in [head] + body) for i in range(len(head))]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip()
                 for row in [head] + body]
    if target is not None:
        lines.append(f"{below} of {len(body)} rows below {target:g}x (marked *)")
    return "\n".join(lines), below


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Median ratio to the baseline over several kafel bench runs.")
    parser.add_argument("runs", nargs="+", help="kafel bench --json files, one per process")
    parser.add_argument("--baseline", help="baseline kernel (default: any baseline record)")
    parser.add_argument("--target", type=float, help="mark medians below this ratio")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args(argv)
    try:
        rows = collect(args.runs, args.baseline)
    except DataError as e:
        print(f"medians.py: {e}", file=sys.stderr)
        return 1
    text, below = table(rows, len(args.runs), args.target, args.markdown)
    print(text)
    return 3 if below else 0


if __name__ == "__main__":
    sys.exit(main())
