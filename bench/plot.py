#!/usr/bin/env python3
# Plots the JSON written by `kafel bench --json`: GFLOP/s against size, one line per kernel.
# Baselines (OpenBLAS, cuBLAS, CLBlast) are dashed; one subplot per element type.
"""Usage: python3 bench/plot.py r.json [more.json ...] -o r.png   (.svg/.pdf by extension)"""

import argparse
import json
import math
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)


def load_records(paths):
    """Records from kafel's {"records": [...]} documents (a bare list is accepted too)."""
    records = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        records.extend(doc["records"] if isinstance(doc, dict) else doc)
    return records


def size_of(r):
    """One number per problem for the x axis: the cube root of m*n*k (= n for cubes)."""
    return round((r["m"] * r["n"] * r["k"]) ** (1.0 / 3.0), 3)


def varying_params(records):
    """{kernel: names of the parameters that take several values in these records}."""
    seen = defaultdict(lambda: defaultdict(set))
    for r in records:
        for name, value in (r.get("params") or {}).items():
            seen[r["kernel"]][name].add(value)
    return {k: sorted(n for n, vals in names.items() if len(vals) > 1) for k, names in seen.items()}


def label_of(r, varying):
    """The kernel name, plus the swept parameters' values when it was swept."""
    params = r.get("params") or {}
    swept = " ".join(f"{n}={params[n]}" for n in varying.get(r["kernel"], []) if n in params)
    return f'{r["kernel"]} {swept}' if swept else r["kernel"]


def series_by_type(records):
    """{type: {label: (baseline, [(size, gflops), ...])}} for verified results only."""
    out = defaultdict(dict)
    varying = varying_params(records)
    for r in records:
        if r.get("status", "ok") != "ok" or not r.get("verified", False):
            continue
        label = label_of(r, varying)
        entry = out[r["type"]].setdefault(label, (bool(r.get("baseline")), []))
        entry[1].append((size_of(r), r["gflops"]))
    return out


def draw(ax, dtype, series, logy):
    for label, (baseline, points) in sorted(series.items()):
        points.sort()
        xs, ys = zip(*points)
        ax.plot(xs, ys, linestyle="--" if baseline else "-", marker="o", markersize=3, label=label)
    ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    ax.set_title(dtype)
    ax.set_xlabel("size (n, or cube root of m·n·k)")
    ax.set_ylabel("GFLOP/s (median)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")


def main(argv=None):
    parser = argparse.ArgumentParser(description="Plot kafel bench JSON: GFLOP/s against size.")
    parser.add_argument("json", nargs="+", help="files written by kafel bench --json")
    parser.add_argument("-o", "--output", required=True, help="image file (.png, .svg, .pdf)")
    parser.add_argument("--logy", action="store_true", help="log scale for GFLOP/s too")
    parser.add_argument("--title", default=None, help="figure title (default: the device)")
    args = parser.parse_args(argv)

    records = load_records(args.json)
    by_type = series_by_type(records)
    if not by_type:
        print("plot.py: error: no verified results in " + ", ".join(args.json), file=sys.stderr)
        return 1
    types = sorted(by_type)
    cols = min(len(types), 2)
    rows = math.ceil(len(types) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(7 * cols, 4.5 * rows), squeeze=False)
    for ax, dtype in zip(axes.flat, types):
        draw(ax, dtype, by_type[dtype], args.logy)
    for ax in list(axes.flat)[len(types):]:
        ax.set_visible(False)
    device = next((r.get("device_name") or r.get("device") for r in records), "")
    fig.suptitle(args.title or f"kafel GEMM on {device}")
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
