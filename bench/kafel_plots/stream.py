# The radar stream picture from `kafel cov --json`: per-block latency against time with the
# deadline and the missed blocks, beside a latency histogram marked at median, p99 and worst.
"""Stream timelines; without a per-block "latency_ms" list, a summary of the statistics."""

import math

import matplotlib.pyplot as plt
import numpy as np

from . import style

MISSED_COLOR = "#B00000"
OFF_SCALE = 2.5  # a deadline this many times the worst block is written, not drawn


def latencies(doc):
    """The per-block latencies (ms) if the document has a usable "latency_ms" list, else None."""
    values = doc.get("latency_ms")
    if not isinstance(values, list) or not values:
        return None
    if not all(isinstance(v, (int, float)) and math.isfinite(v) and v >= 0 for v in values):
        return None
    return [float(v) for v in values]


def stats(doc, lat):
    """(median, p99, worst) as kafel reported them; computed from the list where missing."""
    arr = np.asarray(lat if lat else [0.0])
    median = doc.get("median_ms", float(np.quantile(arr, 0.5)))
    p99 = doc.get("p99_ms", float(np.quantile(arr, 0.99)))
    worst = doc.get("max_ms", float(arr.max()))
    return median, p99, worst


def deadline_of(doc):
    if doc.get("deadline_ms"):
        return float(doc["deadline_ms"])
    return 1000.0 / doc["rate"] if doc.get("rate") else None


def stream_title(doc):
    blocks = doc.get("blocks", len(doc.get("latency_ms") or []))
    rate = f', {doc["rate"]:g} blocks/s' if doc.get("rate") else ", as fast as possible"
    deadline = deadline_of(doc)
    missed = doc.get("missed")
    verdict = (f"; missed {missed} of {blocks} (deadline {deadline:g} ms)"
               if missed is not None and deadline else "")
    return (f'Radar stream: {blocks} blocks of {doc.get("channels")} ch × '
            f'{doc.get("samples", 0):,} samples on {doc.get("device", "?")} '
            f'({doc.get("kernel", "?")}){rate}{verdict}')


def _use_log(values, deadline):
    shown = [deadline] if deadline_in_view(values, deadline) else []
    positive = [v for v in values + shown if v > 0]
    return bool(positive) and max(positive) / min(positive) > 30


def deadline_in_view(lat, deadline):
    """Whether the deadline shares the axis with the data: not when it is so far above the
    worst block that the jitter would flatten into one line (the margin is written instead)."""
    return bool(deadline) and deadline <= OFF_SCALE * max(lat)


def _timeline(ax, doc, lat, deadline):
    rate = doc.get("rate") or 0
    x = np.arange(len(lat)) / rate if rate > 0 else np.arange(len(lat))
    ax.plot(x, lat, color="#0072B2", linewidth=0.8, marker="o" if len(lat) <= 200 else None,
            markersize=3, zorder=3, label="block latency")
    if deadline and deadline_in_view(lat, deadline):
        ax.axhline(deadline, color=style.DEADLINE_COLOR, linestyle="--", linewidth=1.4,
                   label=f"deadline {deadline:g} ms", zorder=2)
    elif deadline:
        ax.plot([], [], " ", label=f"deadline {deadline:g} ms: off the scale, "
                                   f"{deadline / max(lat):.1f}× the worst block")
    missed = [(xi, v) for xi, v in zip(x, lat) if deadline and v > deadline]
    if missed:
        ax.scatter([m[0] for m in missed], [m[1] for m in missed], marker="X", s=90,
                   color=MISSED_COLOR, edgecolor="black", linewidth=0.6, zorder=5,
                   label=f"missed: {len(missed)} block{'s' if len(missed) != 1 else ''}")
    ax.set_xlabel("block arrival time (s)" if rate > 0 else "block (throughput mode: no arrivals)")
    ax.set_ylabel("latency (ms)" + (", log scale" if ax.get_yscale() == "log" else ""))
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.16), ncol=3)


def _histogram(ax, lat, marks, deadline, log):
    top = max(lat + ([deadline] if deadline_in_view(lat, deadline) else []))
    lo = min(lat)
    bins = (np.geomspace(max(lo, 1e-6) * 0.95, top * 1.05, 40) if log
            else np.linspace(lo - 0.05 * (top - lo) - 1e-9, top * 1.02 + 1e-9, 40))
    ax.hist(lat, bins=bins, orientation="horizontal", color="#56B4E9", edgecolor=style.EDGE_COLOR,
            linewidth=0.4)
    ax.set_xlabel("blocks")
    ax.grid(True, axis="x", alpha=0.3)
    if deadline_in_view(lat, deadline):
        ax.axhline(deadline, color=style.DEADLINE_COLOR, linestyle="--", linewidth=1.4)
    handles = [ax.axhline(value, color="black", linestyle=ls, linewidth=1.0,
                          label=f"{name} {value:.3g} ms")
               for (name, value), ls in zip(marks, ["-", "-.", ":"])]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.0, -0.16), ncol=1)


def timeline_figure(doc):
    lat = latencies(doc)
    deadline = deadline_of(doc)
    median, p99, worst = stats(doc, lat)
    fig, (ax, hist) = plt.subplots(1, 2, figsize=(12, 4.6), sharey=True,
                                   gridspec_kw={"width_ratios": [3.2, 1]})
    if _use_log(lat, deadline):
        ax.set_yscale("log")
    _timeline(ax, doc, lat, deadline)
    _histogram(hist, lat, [("median", median), ("p99", p99), ("worst", worst)], deadline,
               ax.get_yscale() == "log")
    fig.suptitle(stream_title(doc), x=0.01, ha="left", fontsize=10)
    fig.tight_layout()
    return fig


def summary_figure(doc):
    """Without per-block latencies: median, p99 and worst against the deadline, and a note."""
    deadline = deadline_of(doc)
    median, p99, worst = stats(doc, None)
    fig, ax = plt.subplots(figsize=(9, 3.0))
    names = ["median", "p99", "worst"]
    values = [median, p99, worst]
    colors = [MISSED_COLOR if deadline and v > deadline else "#56B4E9" for v in values]
    ax.barh(names, values, color=colors, edgecolor=style.EDGE_COLOR, hatch="//")
    for i, v in enumerate(values):
        ax.text(v, i, f" {v:.3g} ms", va="center", fontsize=8)
    if deadline:
        ax.axvline(deadline, color=style.DEADLINE_COLOR, linestyle="--", linewidth=1.4,
                   label=f"deadline {deadline:g} ms")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.invert_yaxis()
    ax.set_xlabel("latency (ms)")
    ax.set_xlim(0, max(values + ([deadline] if deadline else [])) * 1.25 or 1.0)
    ax.set_title(stream_title(doc), loc="left", fontsize=9)
    ax.text(0.0, -0.42, 'no per-block latencies in this file (the "latency_ms" list): '
            "summary statistics only", transform=ax.transAxes, fontsize=8, color="#555555")
    fig.tight_layout()
    return fig


def stream_figure(doc):
    return timeline_figure(doc) if latencies(doc) else summary_figure(doc)
