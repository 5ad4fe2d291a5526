# The report page: one self-contained HTML file (pictures embedded as base64 PNG, no script,
# no external file) with the commands, devices, every table and every picture of a results folder.
"""build_report(results, folder) -> (html text, [Picture])."""

import base64
import datetime
import html
import os
import re
from collections import OrderedDict

from . import data, ladder, roofline, shapes, stream, style

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.5em auto;
       max-width: 1400px; padding: 0 1em; color: #1a1a1a; line-height: 1.4; }
h1 { margin-bottom: 0.2em; } h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
h3 { margin-top: 1.6em; }
nav ul { columns: 2; }
pre { background: #f4f4f4; padding: 0.6em; overflow-x: auto; font-size: 0.85em; }
table { border-collapse: collapse; font-size: 0.82em; margin: 0.6em 0 1.2em; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: right; white-space: nowrap; }
th { background: #eee; position: sticky; top: 0; }
td.text, th.text { text-align: left; }
td.wrap { white-space: normal; min-width: 14em; text-align: left; }
summary { cursor: pointer; color: #0050a0; margin: 0.5em 0; }
tr.fail td { background: #fde2e2; } tr.skip td { color: #777; }
tr.baseline td { font-style: italic; }
figure { margin: 1em 0; } figure img { max-width: 100%; height: auto; border: 1px solid #ddd; }
figcaption { font-size: 0.85em; color: #444; }
.note { color: #555; font-size: 0.9em; }
.scroll { overflow-x: auto; }
"""


COLLAPSE_ROWS = 40  # longer tables start folded (<details>), so pictures stay near each other


class Picture:
    """One embedded image: a file name under plots/, its PNG bytes and a caption."""

    def __init__(self, name, png, caption):
        self.name = name
        self.png = png
        self.caption = caption

    def html(self):
        b64 = base64.b64encode(self.png).decode("ascii")
        return (f'<figure id="fig-{esc(self.name)}"><img alt="{esc(self.caption)}" '
                f'src="data:image/png;base64,{b64}" data-file="plots/{esc(self.name)}.png">'
                f"<figcaption>{esc(self.caption)}</figcaption></figure>")


def esc(text):
    return html.escape(str(text), quote=True)


def slug(*parts):
    return "-".join(re.sub(r"[^A-Za-z0-9.]+", "_", str(p)).strip("_") for p in parts if p)


def picture_name(kind, stem, *parts):
    """ "ladder-cpu-f32" from ("ladder", "ladder-cpu", "f32"): the kind is not repeated."""
    if stem == kind or stem.startswith(kind + "-") or stem.startswith(kind + "_"):
        stem = stem[len(kind) + 1:]
    return slug(kind, stem, *parts)


def num(value, fmt="{:,.3g}"):
    if value is None or value == "":
        return "–"
    if isinstance(value, (int, float)):
        return fmt.format(value)
    return esc(value)


def table(header, rows, text_cols=(), row_classes=None, wrap_cols=()):
    """An HTML table; cells are already-escaped strings."""
    head = "".join(f'<th class="{"text" if i in text_cols else ""}">{esc(h)}</th>'
                   for i, h in enumerate(header))
    body = []
    for n, row in enumerate(rows):
        cls = f' class="{row_classes[n]}"' if row_classes and row_classes[n] else ""
        cells = "".join(f'<td class="{cell_class(i, text_cols, wrap_cols)}">{c}</td>'
                        for i, c in enumerate(row))
        body.append(f"<tr{cls}>{cells}</tr>")
    return (f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>')


def cell_class(i, text_cols, wrap_cols):
    return "wrap" if i in wrap_cols else "text" if i in text_cols else ""


# ---- sections --------------------------------------------------------------------------------


def commands_html(commands):
    if not commands:
        return '<p class="note">No commands recorded (no commands.txt, no "command" field).</p>'
    return "<pre>" + esc("\n".join(commands)) + "</pre>"


def devices_html(devices):
    if not devices:
        return '<p class="note">No device information (run <code>kafel devices --json</code>).</p>'
    header = ["id", "name", "backend", "compute units", "clock MHz", "memory", "peak f32 GFLOP/s",
              "peak f64 GFLOP/s", "matrix units GFLOP/s", "bandwidth GB/s", "capabilities",
              "GEMM kernels"]
    rows = []
    for d in devices.values():
        tensor = ", ".join(f"{k} {style.fmt_gflops(v)}" for k, v in
                           (d.get("tensor_peaks") or {}).items()) or "–"
        rows.append([esc(d.get("id")), esc(d.get("name")), esc(d.get("backend")),
                     num(d.get("compute_units"), "{:,}"), num(d.get("clock_mhz"), "{:,.0f}"),
                     esc(human_bytes(d.get("global_memory"))),
                     positive(d.get("peak_gflops_f32")), positive(d.get("peak_gflops_f64")),
                     esc(tensor), positive(d.get("bandwidth_gbs")),
                     esc(", ".join(d.get("capabilities") or []) or "–"),
                     esc(", ".join(d.get("kernels") or []) or "–")])
    return table(header, rows, text_cols=(0, 1, 2, 8), wrap_cols=(10, 11))


def positive(value):
    """A device figure; 0 means kafel does not know it."""
    return num(value, "{:,.1f}") if isinstance(value, (int, float)) and value > 0 else "unknown"


def human_bytes(n):
    if not n:
        return "–"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024.0
    return str(n)


def status_text(r):
    """PASS <method>, NOT verified, or kafel's error (which already starts with "skipped: ")."""
    if data.is_verified(r):
        return f'PASS {r.get("verify_method", "")}'.strip()
    if data.is_ok(r):
        return "NOT verified"
    status, error = r.get("status", "?"), r.get("error", "")
    return error if error.startswith(status) else f"{status}: {error}".rstrip(": ")


def pct_text(value):
    return f"{value:.1f}" if value >= 1 else f"{value:.2g}"


def ratio_text(r, baselines, name):
    ratio = data.ratio_to_baseline(r, baselines, name) if r["kernel"] != name else None
    return style.fmt_ratio(ratio) if ratio else "–"


def bench_table(records):
    varying = data.varying_params(records)
    bases = data.baseline_names(records)
    baselines = data.baseline_gflops(records)
    header = (["kernel", "type", "m×n×k", "op", "config", "median ms", "GFLOP/s", "best GFLOP/s",
               "% peak", "spread"] + [f"× {b}" for b in bases] + ["verified / status"])
    rows, classes = [], []
    for r in records:
        ok = data.is_ok(r)
        status = status_text(r)
        ratios = [ratio_text(r, baselines, b) for b in bases]
        rows.append([esc(data.label_of(r, varying)), esc(r.get("type")),
                     esc(f'{r["m"]}×{r["n"]}×{r["k"]}'), esc(r.get("op", "")),
                     esc(r.get("config", "")),
                     num(r.get("median_ms"), "{:,.3f}") if ok else "–",
                     num(r.get("gflops"), "{:,.1f}") if ok else "–",
                     num(r.get("best_gflops"), "{:,.1f}") if ok else "–",
                     pct_text(r["peak_pct"]) if ok and r.get("peak_pct") else "–",
                     num(r.get("spread"), "{:.1%}") if ok and "spread" in r else "–",
                     *map(esc, ratios), esc(status)])
        classes.append("fail" if r.get("status") == "failed" or (ok and not data.is_verified(r))
                       else "skip" if not ok else "baseline" if r.get("baseline") else "")
    text = table(header, rows, text_cols=(0, 1, 2, 3, 4, len(header) - 1), row_classes=classes)
    if len(rows) <= COLLAPSE_ROWS:
        return text
    return f"<details><summary>Table: {len(rows)} results (click to open)</summary>{text}</details>"


def stream_table(doc):
    keys = ["device", "device_name", "kernel", "channels", "samples", "layout", "source",
            "blocks", "rate", "deadline_ms", "median_ms", "p99_ms", "max_ms", "blocks_per_s",
            "missed", "rel_err", "verified_blocks", "nan_entries", "passed"]
    rows = [[esc(k), num(doc[k]) if isinstance(doc[k], float) else esc(doc[k])]
            for k in keys if k in doc]
    lat = stream.latencies(doc)
    rows.append([esc("latency_ms"), esc(f"{len(lat)} per-block values" if lat else "absent")])
    return table(["field", "value"], rows, text_cols=(0, 1))


def cov_bench_table(doc):
    header = ["kernel", "status", "median ms", "best ms", "floor ms", "× floor", "e2e ms",
              "rel_err", "e2e rel_err"]
    rows = []
    for k in doc["kernels"]:
        floor = k.get("floor_ms") or 0
        rows.append([esc(k.get("kernel")), esc(k.get("status")), num(k.get("median_ms"), "{:.3f}"),
                     num(k.get("best_ms"), "{:.3f}"), num(floor, "{:.3f}"),
                     num(k["median_ms"] / floor, "{:.2f}") if floor and k.get("median_ms")
                     else "–",
                     num(k.get("e2e_ms"), "{:.3f}") if k.get("e2e_ms") else "–",
                     num(k.get("rel_err"), "{:.2e}"), num(k.get("e2e_rel_err"), "{:.2e}")])
    return table(header, rows, text_cols=(0, 1))


# ---- the page ------------------------------------------------------------------------------


class _Page:
    def __init__(self, results, folder):
        self.results = results
        self.folder = folder
        self.pictures = []
        self.failures = []  # pictures that could not be drawn, for the command's stderr
        self.sections = OrderedDict()

    def picture(self, name, make_figure, caption):
        """The picture's HTML; a picture that cannot be drawn becomes a note, not a lost page."""
        try:
            fig = make_figure()
            if fig is None:
                return ""
            png = style.png_bytes(fig)
        except (ValueError, KeyError, TypeError, ZeroDivisionError) as e:
            self.failures.append(f"{name}: {type(e).__name__}: {e}")
            return f'<p class="note">Picture {esc(name)} could not be drawn: {esc(e)}</p>'
        pic = Picture(name, png, caption)
        self.pictures.append(pic)
        return pic.html()

    def source_html(self, path):
        name = os.path.basename(path)
        cmds = self.results.commands_for(path)
        out = f'<p class="note">From <a href="{esc(name)}"><code>{esc(name)}</code></a>'
        out += (":</p>" + "<pre>" + esc("\n".join(cmds)) + "</pre>") if cmds else ".</p>"
        return out

    def gemm_section(self):
        parts = []
        for path, doc in self.results.bench:
            records = data.bench_records(doc)
            stem = os.path.splitext(os.path.basename(path))[0]
            parts.append(f"<h3 id=\"{esc(slug('gemm', stem))}\">{esc(os.path.basename(path))}</h3>")
            parts.append(self.source_html(path))
            several = len({data.device_of(r) for r in records if data.is_ok(r)}) > 1
            for (device, dtype), group in ladder.ladder_groups(records).items():
                shown = ladder.ladder_records(group)
                if not shown:
                    continue
                parts.append(self.picture(
                    picture_name("ladder", stem, dtype, device if several else ""),
                    lambda: ladder.ladder_figure(shown),
                    f"GEMM ladder, {dtype} on {device} ({os.path.basename(path)}): GFLOP/s per "
                    f"rung and size, baselines as lines, ratio to the baseline on each bar"
                    + ("; cubic sizes only (the shape map shows the others)"
                       if len(shown) < len(group) else "")))
            for (device, dtype), group in shapes.shape_groups(records).items():
                parts.append(self.picture(
                    picture_name("shapes", stem, dtype, device if several else ""),
                    lambda: shapes.shape_figure(group),
                    f"Shape map, {dtype} on {device} ({os.path.basename(path)}): fastest kafel "
                    f"kernel over the baseline per m, n, k class"))
            parts.append(bench_table(records))
        return "".join(parts) or '<p class="note">No <code>kafel bench --json</code> file.</p>'

    def roofline_section(self):
        # The file with the most kernels (the "--kernels all" ladder) sets the series order.
        docs = sorted(self.results.bench, key=lambda pd: -len(
            {r["kernel"] for r in data.bench_records(pd[1])}))
        records = [r for _, doc in docs for r in data.bench_records(doc)]
        cov = data.cov_points(self.results)
        ids = list(OrderedDict.fromkeys([data.device_of(r) for r in records] + [c[0] for c in cov]))
        parts = []
        for dev in ids:
            rs = [r for r in records if data.device_of(r) == dev]
            pts = [c for c in cov if c[0] == dev]
            device = self.results.devices.get(dev)
            parts.append(self.picture(
                picture_name("roofline", "", dev),
                lambda: roofline.roofline_figure(device, rs, pts),
                f"Roofline of {dev}: compute peaks and memory bandwidth as roofs, every GEMM "
                f"kernel × size and covariance measurement at its arithmetic intensity"))
        return "".join(parts) or '<p class="note">Nothing measured.</p>'

    def covariance_section(self):
        parts = []
        for path, doc in self.results.cov_streams:
            stem = os.path.splitext(os.path.basename(path))[0]
            parts.append(f"<h3 id=\"{esc(slug('cov', stem))}\">{esc(os.path.basename(path))}</h3>")
            parts.append(self.source_html(path))
            kind = "timeline" if stream.latencies(doc) else "summary (no per-block latencies)"
            parts.append(self.picture(picture_name("stream", stem),
                                      lambda: stream.stream_figure(doc),
                                      f"Stream {kind}: {stream.stream_title(doc)}"))
            parts.append(stream_table(doc))
        for path, doc in self.results.cov_benches:
            stem = os.path.splitext(os.path.basename(path))[0]
            parts.append(f"<h3 id=\"{esc(slug('cov', stem))}\">{esc(os.path.basename(path))}</h3>")
            parts.append(self.source_html(path))
            parts.append(f'<p>{esc(doc.get("channels"))} channels × {doc.get("samples", 0):,} '
                         f'samples on {esc(doc.get("device"))} ({esc(doc.get("device_name", ""))})'
                         "</p>")
            parts.append(cov_bench_table(doc))
        return "".join(parts) or '<p class="note">No <code>kafel cov --json</code> file.</p>'

    def files_section(self):
        names = sorted(os.listdir(self.folder)) if os.path.isdir(self.folder) else []
        items = [f'<li><a href="{esc(n)}">{esc(n)}</a></li>' for n in names
                 if os.path.isfile(os.path.join(self.folder, n)) and n != "index.html"]
        ignored = [f"<li><code>{esc(os.path.basename(p))}</code>: {esc(why)}</li>"
                   for p, why in self.results.ignored]
        out = "<ul>" + "".join(items) + "</ul>"
        if ignored:
            out += "<p>Not used for this page:</p><ul>" + "".join(ignored) + "</ul>"
        return out

    def build(self):
        r = self.results
        self.sections["Commands"] = commands_html(r.commands)
        self.sections["Devices"] = devices_html(r.devices)
        self.sections["GEMM ladders and tables"] = self.gemm_section()
        self.sections["Roofline"] = self.roofline_section()
        self.sections["Covariance"] = self.covariance_section()
        self.sections["Files"] = self.files_section()
        return self.render()

    def render(self):
        when = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
        nav = "".join(f'<li><a href="#{slug(t)}">{esc(t)}</a></li>' for t in self.sections)
        body = "".join(f'<section id="{slug(t)}"><h2>{esc(t)}</h2>{content}</section>'
                       for t, content in self.sections.items())
        summary = (f"{len(self.results.bench)} GEMM file(s), {len(self.results.cov_streams)} "
                   f"stream file(s), {len(self.results.cov_benches)} covariance bench file(s), "
                   f"{len(self.results.devices)} device(s), {len(self.pictures)} picture(s)")
        return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
                f'<meta name="viewport" content="width=device-width, initial-scale=1">'
                f"<title>kafel results: {esc(os.path.abspath(self.folder))}</title>"
                f"<style>{CSS}</style></head><body>"
                f"<h1>kafel results</h1><p class=\"note\">{esc(os.path.abspath(self.folder))}, "
                f"page written {esc(when)}: {esc(summary)}.</p>"
                f"<nav><ul>{nav}</ul></nav>{body}</body></html>\n")


def build_report(results, folder):
    """The page's HTML text, the pictures it embeds, and the pictures that failed."""
    page = _Page(results, folder)
    text = page.build()
    return text, page.pictures, page.failures
