# The shape map: kafel's fastest kernel over the baseline across non-cubic shapes, as heat maps
# of m class x n class, one panel per k class (geometric mean per cell, the count beside it).
"""Shape maps of `kafel bench --json` records with non-cubic sizes."""

from collections import OrderedDict, defaultdict

import matplotlib.pyplot as plt
import numpy as np
from matplotlib import colors, ticker

from . import data, style

# Class edges: sizes below 16, 16-63, 64-255, 256-1023, 1024-4095, 4096 and up.
EDGES = [16, 64, 256, 1024, 4096]
NO_DATA = "#d9d9d9"
RATIO_SPAN = 4.0  # the colour scale runs from 1/4x to 4x the baseline (clipped beyond)


def size_class(v):
    """Index of the class holding size v."""
    for i, edge in enumerate(EDGES):
        if v < edge:
            return i
    return len(EDGES)


def class_label(i):
    if i == 0:
        return f"<{EDGES[0]}"
    if i == len(EDGES):
        return f"≥{EDGES[-1]}"
    return f"{EDGES[i - 1]}–{EDGES[i] - 1}"


def shape_ratios(records):
    """[(m, n, k, best ours / primary baseline)] of the non-cubic problems with both."""
    baselines = data.baseline_gflops(records)
    names = data.baseline_names(records)
    best = OrderedDict()
    for r in records:
        if r.get("baseline") or data.is_cubic(r) or not data.is_ok(r):
            continue
        key = data.problem_key(r)
        if key not in best or r["gflops"] > best[key]["gflops"]:
            best[key] = r
    out = []
    for key, r in best.items():
        for name in names:
            ratio = data.ratio_to_baseline(r, baselines, name)
            if ratio:
                out.append((r["m"], r["n"], r["k"], ratio))
                break
    return out


def shape_groups(records):
    """{(device, type): records} that hold at least one non-cubic problem with a baseline."""
    groups = data.group_records(records, lambda r: (data.device_of(r), r.get("type", "?")))
    return OrderedDict((key, rs) for key, rs in groups.items() if shape_ratios(rs))


def _cells(ratios):
    cells = defaultdict(list)
    for m, n, k, ratio in ratios:
        cells[(size_class(k), size_class(m), size_class(n))].append(ratio)
    return cells


def _cell_text_color(rgba):
    luminance = 0.2126 * rgba[0] + 0.7152 * rgba[1] + 0.0722 * rgba[2]
    return "black" if luminance > 0.5 else "white"


def shape_figure(records, title=None):
    """One panel per k class; None when no non-cubic problem has a baseline to compare to."""
    ratios = shape_ratios(records)
    if not ratios:
        return None
    cells = _cells(ratios)
    k_classes = sorted({c[0] for c in cells})
    m_classes = sorted({c[1] for c in cells})
    n_classes = sorted({c[2] for c in cells})
    norm = colors.LogNorm(vmin=1 / RATIO_SPAN, vmax=RATIO_SPAN)
    cmap = plt.get_cmap("PuOr")  # diverging, colour-blind safe; numbers carry it in grey
    width = 1.6 + 0.75 * len(n_classes)
    fig, axes = plt.subplots(1, len(k_classes), figsize=(width * len(k_classes) + 1.2,
                                                         1.2 + 0.55 * len(m_classes) + 1.0),
                             squeeze=False, sharey=True)
    for ax, kc in zip(axes[0], k_classes):
        grid = np.full((len(m_classes), len(n_classes)), np.nan)
        for (k, m, n), values in cells.items():
            if k == kc:
                grid[m_classes.index(m), n_classes.index(n)] = data.geometric_mean(values)
        ax.set_facecolor(NO_DATA)  # cells without a measured shape show through
        image = ax.imshow(grid, cmap=cmap, norm=norm, aspect="auto")
        for (k, m, n), values in cells.items():
            if k != kc:
                continue
            value = grid[m_classes.index(m), n_classes.index(n)]
            ax.text(n_classes.index(n), m_classes.index(m),
                    f"{style.fmt_ratio(value)}\n({len(values)})", ha="center", va="center",
                    fontsize=7, color=_cell_text_color(cmap(norm(value))))
        ax.set_xticks(range(len(n_classes)))
        ax.set_xticklabels([class_label(c) for c in n_classes], rotation=30, ha="right")
        ax.set_yticks(range(len(m_classes)))
        ax.set_yticklabels([class_label(c) for c in m_classes])
        ax.set_xlabel("n")
        ax.set_title(f"k {class_label(kc)}")
        for spine in ax.spines.values():
            spine.set_visible(False)
    axes[0][0].set_ylabel("m")
    bar = fig.colorbar(image, ax=list(axes[0]), shrink=0.85, pad=0.02)
    bar.ax.yaxis.set_minor_formatter(ticker.NullFormatter())
    bar.set_label("fastest kafel kernel ÷ baseline\n(geometric mean; shapes per cell; grey: none)")
    bar.set_ticks([0.25, 0.5, 1, 2, 4])
    bar.set_ticklabels(["0.25×", "0.5×", "1×", "2×", "4×"])
    first = records[0]
    base = data.baseline_names(records)
    fig.suptitle(title or f'Shape map: {first.get("type", "?")} on '
                          f'{first.get("device_name") or data.device_of(first)}, '
                          f'{len(ratios)} non-cubic shapes against {base[0] if base else "?"}',
                 x=0.01, ha="left", fontsize=10)
    return fig
