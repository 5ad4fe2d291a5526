# The look shared by every kafel picture: a qualitative palette that survives greyscale and
# colour blindness (Okabe-Ito, ordered so neighbours differ in lightness), hatches, PNG output.
"""Colours, hatches and markers per series (in ladder order), and figure -> PNG bytes."""

import io

import matplotlib

matplotlib.use("Agg")  # files only, never a window; must precede pyplot
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import ticker  # noqa: E402

# Okabe & Ito's colour-blind-safe set without black (black draws baselines), ordered so that
# consecutive rungs alternate dark / light when printed in grey.
PALETTE = ["#0072B2", "#F0E442", "#D55E00", "#56B4E9", "#009E73", "#E69F00", "#CC79A7",
           "#999999"]
# Seven hatches against eight colours: (colour, hatch) pairs repeat only after 56 series.
HATCHES = ["", "///", "...", "xxx", "\\\\\\", "+++", "ooo"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "*"]
BASELINE_COLOR = "black"
BASELINE_STYLES = ["--", ":", "-."]
DEADLINE_COLOR = "#D55E00"
EDGE_COLOR = "#222222"
LABEL_BOX = {"facecolor": "white", "edgecolor": "none", "alpha": 0.75, "pad": 0.6}
DPI = 110


def series_style(index):
    """Face colour, hatch and marker of the index-th series of a ladder."""
    return {
        "color": PALETTE[index % len(PALETTE)],
        "hatch": HATCHES[index % len(HATCHES)],
        "marker": MARKERS[index % len(MARKERS)],
    }


def baseline_style(index):
    return {"color": BASELINE_COLOR, "linestyle": BASELINE_STYLES[index % len(BASELINE_STYLES)]}


def apply_defaults():
    plt.rcParams.update({
        "font.size": 9,
        "axes.titlesize": 10,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "hatch.linewidth": 0.6,
        "legend.fontsize": 8,
        "legend.frameon": False,
    })


def png_bytes(fig):
    """The figure as PNG bytes (tight box so legends outside the axes are kept); closes it."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def save(fig, path):
    """Writes the figure (format from the extension: png, svg, pdf); closes it."""
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)


def fmt_gflops(value):
    """GFLOP/s as printed on the pictures: 3.21, 71.4, 6,221."""
    if value >= 1000:
        return f"{value:,.0f}"
    return f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def fmt_ratio(ratio):
    """A ratio to a baseline: 0.013×, 0.86×, 1.92×, 12×."""
    if ratio >= 10:
        return f"{ratio:.0f}×"
    return f"{ratio:.2f}×" if ratio >= 0.1 else f"{ratio:.2g}×"


def log_axis(axis, subs=(1.0, 2.0, 5.0)):
    """Log ticks at 1, 2, 5 × 10^k written as plain numbers (3.2 and 50,000, not 10^4)."""
    axis.set_major_locator(ticker.LogLocator(base=10, subs=subs))
    axis.set_major_formatter(ticker.FuncFormatter(lambda v, _: fmt_number(v)))
    axis.set_minor_formatter(ticker.NullFormatter())


def fmt_number(value):
    if value >= 1000:
        return f"{value:,.0f}"
    return f"{value:g}"


apply_defaults()
