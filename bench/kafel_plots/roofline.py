# The roofline of one device: its compute peaks and memory bandwidth as roofs, every GEMM
# kernel x size and every covariance measurement as a point at its arithmetic intensity.
"""Roofline pictures: is a kernel compute- or memory-bound, and how far below its roof."""

import math
from collections import OrderedDict

import matplotlib.pyplot as plt
from matplotlib.lines import Line2D

from . import data, style

ROOF_COLOR = "#333333"
COV_MARKERS = ["*", "P", "X", "h"]


class _Series:
    def __init__(self, label, baseline):
        self.label = label
        self.baseline = baseline
        self.points = []  # (intensity, GFLOP/s, attainable GFLOP/s, cubic)


def gemm_series(records):
    """{label: _Series} of the device's GEMM results that ran, in ladder order."""
    varying = data.varying_params(records)
    multi_type = len({r.get("type") for r in records}) > 1
    series = OrderedDict()
    for r in records:
        intensity = data.gemm_intensity(r)
        if not data.is_ok(r) or intensity is None:
            continue
        label = data.label_of(r, varying) + (f' {r.get("type")}' if multi_type else "")
        s = series.setdefault(label, _Series(label, bool(r.get("baseline"))))
        peak = r["gflops"] * 100.0 / r["peak_pct"] if (r.get("peak_pct") or 0) > 0 else None
        s.points.append((intensity, r["gflops"], peak, data.is_cubic(r)))
    return series


def attainable(peak, bandwidth, intensity):
    """The roof above a point: min(compute peak, bandwidth × intensity), None if unknown."""
    bounds = [v for v in (peak, bandwidth * intensity if bandwidth else None) if v]
    return min(bounds) if bounds else None


def fmt_share(percent):
    return f"{percent:.1f}%" if percent < 1 else f"{percent:.0f}%"


def merge_close_roofs(roofs, tolerance=0.03):
    """Roofs within `tolerance` of each other share one line and one label ("f32, f64 ...")."""
    merged = []
    for name, peak in roofs:
        for i, (other, value) in enumerate(merged):
            if abs(peak - value) <= tolerance * max(peak, value):
                merged[i] = (f"{other}, {name}", max(peak, value))
                break
        else:
            merged.append((name, peak))
    return merged


class _Roofline:
    def __init__(self, ax, device, records, cov_points):
        self.ax = ax
        self.device = device or {}
        self.roofs = merge_close_roofs(data.device_roofs(self.device))
        self.bandwidth = float(self.device.get("bandwidth_gbs") or 0)
        self.series = gemm_series(records)
        self.cov = cov_points

    def limits(self):
        xs = [p[0] for s in self.series.values() for p in s.points] + [c[2] for c in self.cov]
        ys = [p[1] for s in self.series.values() for p in s.points] + [c[3] for c in self.cov]
        if self.bandwidth:
            xs += [peak / self.bandwidth for _, peak in self.roofs]
        ys += [peak for _, peak in self.roofs]
        xs, ys = [x for x in xs if x > 0] or [1.0], [y for y in ys if y > 0] or [1.0]
        return (min(xs) / 4, max(xs) * 4), (min(ys) / 4, max(ys) * 3)

    def draw(self):
        ax = self.ax
        ax.set_xscale("log")
        ax.set_yscale("log")
        (x0, x1), (y0, y1) = self.limits()
        ax.set_xlim(x0, x1)
        ax.set_ylim(y0, y1)
        self._draw_roofs(x0, x1)
        handles = []
        ours = 0
        for s in self.series.values():
            if s.baseline:
                st = {"color": style.BASELINE_COLOR, "marker": "D"}
            else:
                st = style.series_style(ours)
                ours += 1
            handles.append(self._draw_series(s, st))
        for i, (_, label, intensity, gflops) in enumerate(self.cov):
            roof = attainable(self.roofs[0][1] if self.roofs else None, self.bandwidth, intensity)
            if roof:
                label += f": {fmt_share(100.0 * gflops / roof)} of roof"
            handles.append(ax.scatter([intensity], [gflops], s=110, zorder=6,
                                      marker=COV_MARKERS[i % len(COV_MARKERS)],
                                      color=style.PALETTE[(i + 2) % len(style.PALETTE)],
                                      edgecolor=style.EDGE_COLOR, linewidth=0.6, label=label))
        ax.set_xlabel("arithmetic intensity (FLOP per byte of minimum traffic, log)")
        ax.set_ylabel("GFLOP/s (median, log scale)")
        style.log_axis(ax.yaxis)
        style.log_axis(ax.xaxis, subs=(1.0,))
        ax.grid(True, which="major", alpha=0.3)
        return handles

    def _draw_roofs(self, x0, x1):
        ax = self.ax
        top = max((p for _, p in self.roofs), default=None)
        if self.bandwidth:
            ridge = top / self.bandwidth if top else x1
            ax.plot([x0, ridge], [self.bandwidth * x0, self.bandwidth * ridge], color=ROOF_COLOR,
                    linewidth=1.8, zorder=2)
        for i, (name, peak) in enumerate(self.roofs):
            start = peak / self.bandwidth if self.bandwidth else x0
            ax.plot([start, x1], [peak, peak], color=ROOF_COLOR, zorder=2,
                    linewidth=1.8 if i == 0 else 1.0, linestyle="-" if i == 0 else "--")
            ax.text(x1 / 1.1, peak * 1.06, f"{name}: {style.fmt_gflops(peak)} GFLOP/s",
                    ha="right", va="bottom", fontsize=7.5, color=ROOF_COLOR)

    def label_bandwidth(self):
        """Writes the bandwidth along its diagonal; call once the axes have their final size."""
        if not self.bandwidth:
            return
        ax = self.ax
        x0, x1 = ax.get_xlim()
        top = max((p for _, p in self.roofs), default=None)
        ridge = top / self.bandwidth if top else x1
        x = x0 * (ridge / x0) ** 0.25
        y = self.bandwidth * x
        # The text follows the diagonal: its slope in screen coordinates.
        p0 = ax.transData.transform((x, y))
        p1 = ax.transData.transform((x * 2, y * 2))
        angle = math.degrees(math.atan2(p1[1] - p0[1], p1[0] - p0[0]))
        ax.text(x, y * 1.25, f"memory {style.fmt_gflops(self.bandwidth)} GB/s", rotation=angle,
                rotation_mode="anchor", ha="left", va="bottom", fontsize=7.5, color=ROOF_COLOR)

    def _draw_series(self, s, st):
        """Cubic sizes filled and joined (the ladder), other shapes small and hollow."""
        pts = sorted(s.points)
        cubic = [p for p in pts if p[3]]
        other = [p for p in pts if not p[3]]
        label = s.label + (" (baseline)" if s.baseline else "")
        share = self.best_share(pts)
        if share is not None:
            label += f": best {fmt_share(share)} of roof"
        if other:
            label += f" (+{len(other)} non-cubic, hollow)"
            self.ax.scatter([p[0] for p in other], [p[1] for p in other], marker=st["marker"],
                            facecolor="none", edgecolor=st["color"], linewidth=0.7, s=14,
                            alpha=0.7, zorder=3)
        if len(cubic) > 1:
            self.ax.plot([p[0] for p in cubic], [p[1] for p in cubic], color=st["color"],
                         linewidth=0.8, zorder=4)
        self.ax.scatter([p[0] for p in cubic], [p[1] for p in cubic], marker=st["marker"],
                        color=st["color"], edgecolor=style.EDGE_COLOR, linewidth=0.5, s=36,
                        zorder=5)
        return Line2D([], [], linestyle="none", marker=st["marker"], markersize=6,
                      markerfacecolor=st["color"] if cubic else "none",
                      markeredgecolor=style.EDGE_COLOR if cubic else st["color"], label=label)

    def best_share(self, pts):
        """Percent of the roof above the series' fastest point (None when no roof is known)."""
        if not pts:
            return None
        best = max(pts, key=lambda p: p[1])
        peak = best[2] or (self.roofs[0][1] if self.roofs else None)
        roof = attainable(peak, self.bandwidth, best[0])
        return 100.0 * best[1] / roof if roof else None


def roofline_figure(device, records, cov_points, title=None):
    """The roofline of one device; None when there is nothing to place on it."""
    if not any(data.is_ok(r) for r in records) and not cov_points:
        return None
    fig, ax = plt.subplots(figsize=(12.5, 6.0))
    roofline = _Roofline(ax, device, records, cov_points)
    handles = roofline.draw()
    name = (device or {}).get("name") or (records[0].get("device_name") if records else "")
    dev_id = (device or {}).get("id") or (data.device_of(records[0]) if records else "?")
    note = ("" if roofline.bandwidth else " (no bandwidth figure: no memory roof)") if (
        roofline.roofs) else " (device peaks unknown: no roofs)"
    ax.set_title(title or f"Roofline: {name} ({dev_id}){note}", loc="left")
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
              title="%: the series' fastest point against the roof above it",
              title_fontsize=7.5)
    fig.tight_layout()
    roofline.label_bandwidth()
    return fig
