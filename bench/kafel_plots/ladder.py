# The ladder chart: per device and type, one bar group per problem size, one bar per rung in
# the registry's order, log GFLOP/s, baselines as reference lines, the ratio printed per bar.
"""Ladder charts of `kafel bench --json` records."""

from collections import OrderedDict

import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from . import data, style

GROUP_WIDTH = 0.84  # of the 1.0 between size groups
MAX_BAR_WIDTH = 0.3  # a ladder of one or two rungs keeps slim bars
MAX_SIZE_GROUPS = 12  # beyond this a ladder becomes unreadable


def ladder_groups(records):
    """{(device id, type): records}, in the order the records came."""
    return data.group_records(records, lambda r: (data.device_of(r), r.get("type", "?")))


def ladder_records(records):
    """What a ladder chart shows: every record, or only the cubic sizes when a shape sweep has
    more sizes than bar groups fit (the shape map shows those); [] when nothing ran."""
    if not any(data.is_ok(r) for r in records):
        return []
    if len({data.problem_key(r) for r in records}) <= MAX_SIZE_GROUPS:
        return records
    cubic = [r for r in records if data.is_cubic(r)]
    return cubic if any(data.is_ok(r) for r in cubic) else []


def _size_groups(records):
    """Ordered size keys (ascending work) and their tick labels; the op joins in when mixed."""
    with_op = len({r.get("op", "NN") for r in records}) > 1
    keys = OrderedDict()
    for r in sorted(records, key=lambda r: (r["m"] * r["n"] * r["k"], data.size_key(r))):
        key = data.size_key(r) + ((r.get("op", "NN"),) if with_op else ())
        text = data.size_text(r["m"], r["n"], r["k"]) + (f' {r.get("op")}' if with_op else "")
        keys.setdefault(key, text)
    return keys, with_op


def _y_range(values, peak):
    positive = [v for v in values if v and v > 0] + ([peak] if peak else [])
    if not positive:
        return 0.1, 10.0
    return min(positive) / 2.5, max(positive) * 6  # headroom for the ratio labels


class _Ladder:
    """One axes' worth of ladder: the records of one device and type."""

    def __init__(self, ax, records):
        self.ax = ax
        self.records = records
        self.varying = data.varying_params(records)
        order = data.ladder_order(records, self.varying)
        self.rungs = [label for label, is_base in order.items() if not is_base]
        self.baselines = [label for label, is_base in order.items() if is_base]
        self.sizes, self.with_op = _size_groups(records)
        self.peak = data.peak_of([r for r in records if not r.get("baseline")])
        self.cell = {}
        for r in records:
            self.cell.setdefault((self._size_of(r), data.label_of(r, self.varying)), r)
        self.bottom, self.top = _y_range([r.get("gflops") for r in records if data.is_ok(r)],
                                         self.peak)

    def _size_of(self, r):
        return data.size_key(r) + ((r.get("op", "NN"),) if self.with_op else ())

    def bar_width(self):
        return min(GROUP_WIDTH / max(len(self.rungs), 1), MAX_BAR_WIDTH)

    def bar_x(self, group, rung):
        return group + self.bar_width() * (rung + 0.5 - len(self.rungs) / 2)

    def primary_baseline(self, size):
        for name in self.baselines:
            r = self.cell.get((size, name))
            if r is not None and data.is_ok(r):
                return r
        return None

    def draw(self):
        ax = self.ax
        ax.set_yscale("log")
        ax.set_ylim(self.bottom, self.top)
        for g, size in enumerate(self.sizes):
            self._draw_group(g, size)
        self._draw_peak()
        ax.set_xlim(-0.5, len(self.sizes) - 0.5)
        ax.set_xticks(range(len(self.sizes)))
        labels = list(self.sizes.values())
        crowded = sum(len(t) for t in labels) * 0.09 > figure_width(self.records) - 2
        ax.set_xticklabels(labels, rotation=25 if crowded else 0,
                           ha="right" if crowded else "center")
        ax.set_xlabel("problem size (m×n×k)")
        ax.set_ylabel("GFLOP/s (median, log scale)")
        style.log_axis(ax.yaxis)
        ax.grid(True, axis="y", which="major", alpha=0.35)
        ax.grid(True, axis="y", which="minor", alpha=0.12)
        ax.set_axisbelow(True)

    def _draw_group(self, g, size):
        if g > 0:
            self.ax.axvline(g - 0.5, color="#cccccc", linewidth=0.6)
        base = self.primary_baseline(size)
        for j, label in enumerate(self.rungs):
            r = self.cell.get((size, label))
            if r is not None:
                self._draw_bar(self.bar_x(g, j), j, r, base)
        for b, name in enumerate(self.baselines):
            r = self.cell.get((size, name))
            if r is not None and data.is_ok(r):
                self.ax.hlines(r["gflops"], g - GROUP_WIDTH / 2 - 0.04, g + GROUP_WIDTH / 2 + 0.04,
                               linewidth=1.6, zorder=4, **style.baseline_style(b))

    def _draw_bar(self, x, j, r, base):
        st = style.series_style(j)
        w = self.bar_width()
        fontsize = max(4.5, min(7.5, 60 * w))
        if not data.is_ok(r):
            failed = r.get("status") == "failed"
            self.ax.text(x, self.bottom * 1.15, "FAIL" if failed else "skip", rotation=90,
                         ha="center", va="bottom", fontsize=fontsize,
                         color="#B00000" if failed else "#777777",
                         fontweight="bold" if failed else "normal")
            return
        verified = data.is_verified(r)
        self.ax.bar(x, r["gflops"] - self.bottom, bottom=self.bottom, width=w * 0.92,
                    color=st["color"] if verified else "white", hatch=st["hatch"],
                    edgecolor=style.EDGE_COLOR if verified else st["color"],
                    linewidth=0.5 if verified else 1.2, linestyle="-" if verified else "--",
                    zorder=3)
        text = style.fmt_ratio(r["gflops"] / base["gflops"]) if base else style.fmt_gflops(
            r["gflops"])
        if not verified:
            text += " ?"
        self.ax.text(x, r["gflops"] * 1.1, text, rotation=90, ha="center", va="bottom",
                     fontsize=fontsize, zorder=5, bbox=style.LABEL_BOX)

    def _draw_peak(self):
        if self.peak:
            self.ax.axhline(self.peak, color="#555555", linestyle=(0, (6, 2, 1, 2)), linewidth=1.0,
                            zorder=2)

    def legend_handles(self):
        handles = [Patch(facecolor=style.series_style(j)["color"],
                         hatch=style.series_style(j)["hatch"], edgecolor=style.EDGE_COLOR,
                         linewidth=0.5, label=label) for j, label in enumerate(self.rungs)]
        for b, name in enumerate(self.baselines):
            handles.append(Line2D([], [], linewidth=1.6, label=f"{name} (baseline)",
                                  **style.baseline_style(b)))
        if self.peak:
            handles.append(Line2D([], [], color="#555555", linestyle=(0, (6, 2, 1, 2)),
                                  label=f"device peak {style.fmt_gflops(self.peak)} GFLOP/s"))
        if any(data.is_ok(r) and not data.is_verified(r) for r in self.records):
            handles.append(Patch(facecolor="white", edgecolor="#444444", linestyle="--",
                                 label="hollow, '?': NOT verified"))
        if any(r.get("status") == "failed" for r in self.records):
            handles.append(Patch(facecolor="none", edgecolor="none",
                                 label="FAIL: failed to run or verify"))
        if any(r.get("status") == "skipped" for r in self.records):
            handles.append(Patch(facecolor="none", edgecolor="none",
                                 label="skip: not supported here"))
        return handles

    def legend_title(self):
        note = "rungs, in ladder order"
        if self.baselines:
            note += f"\nnumber on a bar: × {self.baselines[0]}"
        else:
            note += "\nnumber on a bar: GFLOP/s"
        return note


def draw_ladder(ax, records, title=None):
    """Draws one device-and-type ladder on `ax`; returns the legend handles and title."""
    ladder = _Ladder(ax, records)
    ladder.draw()
    first = records[0]
    device = first.get("device_name") or data.device_of(first)
    ax.set_title(title or f'GEMM ladder: {first.get("type", "?")} on {device} '
                          f"({data.device_of(first)})", loc="left")
    return ladder.legend_handles(), ladder.legend_title()


def figure_width(records):
    ladder_bars = len({data.label_of(r, data.varying_params(records)) for r in records})
    sizes = len({data.problem_key(r)[1:] for r in records})
    return max(7.5, min(30.0, 2.0 + 0.2 * ladder_bars * sizes))


def ladder_figure(records):
    """One row per (device, type) of the records; None when nothing ran."""
    groups = [g for g in ladder_groups(records).values() if any(data.is_ok(r) for r in g)]
    if not groups:
        return None
    width = max(figure_width(g) for g in groups)
    fig, axes = plt.subplots(len(groups), 1, figsize=(width, 4.4 * len(groups)), squeeze=False)
    for ax, group in zip(axes[:, 0], groups):
        handles, title = draw_ladder(ax, group)
        ax.legend(handles=handles, title=title, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                  borderaxespad=0.0, title_fontsize=8, alignment="left")
    fig.tight_layout()
    return fig
