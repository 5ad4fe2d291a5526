# Reads kafel's JSON files (bench, devices, cov stream, cov bench, commands.txt) and derives what
# the pictures need: ladder order, labels, sizes, minimum bytes, intensity, baseline ratios.
"""The data model of the plots: plain dicts as kafel writes them, plus small helpers."""

import json
import math
import os
from collections import OrderedDict, defaultdict

# Bytes per element of every storage type kafel knows (include/kafel/types.hpp).
ELEMENT_BYTES = {
    "f32": 4, "f64": 8, "i32": 4, "f16": 2, "bf16": 2, "i8": 1, "e4m3": 1, "e5m2": 1,
    "cf32": 8, "cf64": 16, "ci8": 2, "ci16": 4,
}
COV_SAMPLE_BYTES = 4  # covariance samples are float32


class DataError(ValueError):
    """A file that cannot be read as kafel output; the message names the file and the reason."""


# ---- reading -------------------------------------------------------------------------------


def read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise DataError(f"{path}: cannot read ({e.strerror})") from e
    except json.JSONDecodeError as e:
        raise DataError(f"{path}: not JSON ({e.msg} at line {e.lineno})") from e


def kind_of(doc):
    """'bench', 'devices', 'cov_stream', 'cov_bench' or None for anything else."""
    if isinstance(doc, list):
        if doc and all(isinstance(d, dict) and "backend" in d and "id" in d for d in doc):
            return "devices"
        if doc and all(isinstance(d, dict) and "kernel" in d and "m" in d for d in doc):
            return "bench"  # a bare list of records
        return None
    if not isinstance(doc, dict):
        return None
    if isinstance(doc.get("records"), list):
        return "bench"
    if isinstance(doc.get("devices"), list):
        return "devices"
    if "channels" in doc and "samples" in doc:
        if isinstance(doc.get("kernels"), list):
            return "cov_bench"
        if "median_ms" in doc:
            return "cov_stream"
    return None


def is_record(r):
    return (isinstance(r, dict) and isinstance(r.get("kernel"), str)
            and all(isinstance(r.get(d), int) and r[d] >= 0 for d in "mnk"))


def clean_bench(doc):
    """The document with only well-formed records (kernel name, integer sizes), and how many
    were dropped; numbers that are null or missing read as 0 through is_ok."""
    records = bench_records(doc)
    kept = [r for r in records if is_record(r)]
    if isinstance(doc, dict):
        doc = dict(doc, records=kept)
    else:
        doc = kept
    return doc, len(records) - len(kept)


def valid_cov(doc):
    return all(isinstance(doc.get(key), int) and doc[key] > 0 for key in ("channels", "samples"))


def bench_records(doc):
    return doc["records"] if isinstance(doc, dict) else doc


def device_list(doc):
    return doc["devices"] if isinstance(doc, dict) else doc


class Results:
    """Everything found in a results folder, each document with the path it came from."""

    def __init__(self):
        self.bench = []  # (path, doc)
        self.cov_streams = []  # (path, doc)
        self.cov_benches = []  # (path, doc)
        self.devices = OrderedDict()  # id -> device object
        self.commands = []  # command lines, in the order they ran
        self.ignored = []  # (path, why)

    def add(self, path, doc):
        kind = kind_of(doc)
        if kind == "bench":
            doc, dropped = clean_bench(doc)
            if dropped:
                self.ignored.append((path, f"{dropped} record(s) without kernel, m, n, k"))
            self.bench.append((path, doc))
            device = doc.get("device") if isinstance(doc, dict) else None
            if isinstance(device, dict) and device.get("id"):
                self.devices.setdefault(device["id"], device)
        elif kind == "devices":
            for d in device_list(doc):
                self.devices[d["id"]] = d  # the device list is the fuller source: it wins
        elif kind in ("cov_stream", "cov_bench") and not valid_cov(doc):
            self.ignored.append((path, "channels and samples must be positive integers"))
            return
        elif kind == "cov_stream":
            self.cov_streams.append((path, doc))
        elif kind == "cov_bench":
            self.cov_benches.append((path, doc))
        else:
            self.ignored.append((path, "not a kafel bench/devices/cov document"))
            return
        if isinstance(doc, dict) and isinstance(doc.get("command"), str):
            if doc["command"] not in self.commands:
                self.commands.append(doc["command"])

    def sort_by_commands(self):
        """Documents in the order their commands ran (commands.txt), the others after them."""
        def rank(item):
            cmds = self.commands_for(item[0])
            return (self.commands.index(cmds[0]) if cmds else len(self.commands), item[0])
        for docs in (self.bench, self.cov_streams, self.cov_benches):
            docs.sort(key=rank)

    def all_records(self):
        return [r for _, doc in self.bench for r in bench_records(doc)]

    def commands_for(self, path):
        """The recorded command lines that name this file (how it was produced)."""
        name = os.path.basename(path)
        return [c for c in self.commands if name in c]


def read_commands(path):
    """Non-empty lines of a commands.txt ('#' lines are comments)."""
    with open(path, encoding="utf-8") as f:
        lines = [line.strip() for line in f]
    return [line for line in lines if line and not line.startswith("#")]


def load_results(folder):
    """Every kafel JSON document in `folder` (not recursive) and its commands.txt."""
    if not os.path.isdir(folder):
        raise DataError(f"{folder}: not a folder")
    results = Results()
    commands = os.path.join(folder, "commands.txt")
    if os.path.isfile(commands):
        results.commands.extend(read_commands(commands))
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if not name.endswith(".json") or not os.path.isfile(path):
            continue
        try:
            results.add(path, read_json(path))
        except DataError as e:
            results.ignored.append((path, str(e)))
    results.sort_by_commands()
    return results


def load_files(paths):
    """Like load_results, for an explicit list of JSON files (errors are raised)."""
    results = Results()
    for path in paths:
        results.add(path, read_json(path))
    return results


# ---- records ---------------------------------------------------------------------------------


def is_ok(r):
    return r.get("status", "ok") == "ok" and (r.get("gflops") or 0) > 0


def is_verified(r):
    return is_ok(r) and bool(r.get("verified", False))


def problem_key(r):
    return (r.get("type"), r["m"], r["n"], r["k"], r.get("op", "NN"))


def size_key(r):
    return (r["m"], r["n"], r["k"])


def size_text(m, n, k):
    return f"{m}³" if m == n == k else f"{m}×{n}×{k}"


def is_cubic(r):
    return r["m"] == r["n"] == r["k"]


def device_of(r):
    return r.get("device") or r.get("device_name") or "?"


def varying_params(records):
    """{kernel: names of parameters taking several values among these records}."""
    seen = defaultdict(lambda: defaultdict(set))
    for r in records:
        for name, value in (r.get("params") or {}).items():
            seen[r["kernel"]][name].add(json.dumps(value, sort_keys=True))
    return {k: sorted(n for n, vals in names.items() if len(vals) > 1) for k, names in seen.items()}


def label_of(r, varying):
    """The kernel's name, plus the values of its parameters that were swept here."""
    params = r.get("params") or {}
    swept = " ".join(f"{n}={params[n]}" for n in varying.get(r["kernel"], []) if n in params)
    return f'{r["kernel"]} {swept}' if swept else r["kernel"]


def ladder_order(records, varying=None):
    """Labels in the order kafel wrote them (the registry's rung order): first appearance."""
    varying = varying_params(records) if varying is None else varying
    order = OrderedDict()
    for r in records:
        order.setdefault(label_of(r, varying), bool(r.get("baseline")))
    return order  # label -> is a baseline


def group_records(records, key):
    groups = OrderedDict()
    for r in records:
        groups.setdefault(key(r), []).append(r)
    return groups


def baseline_gflops(records):
    """{(problem key, baseline kernel): GFLOP/s} of every baseline result that ran."""
    out = OrderedDict()
    for r in records:
        if r.get("baseline") and is_ok(r):
            out[(problem_key(r), r["kernel"])] = r["gflops"]
    return out


def baseline_names(records):
    return list(OrderedDict.fromkeys(r["kernel"] for r in records if r.get("baseline")))


def ratio_to_baseline(r, baselines, name):
    base = baselines.get((problem_key(r), name))
    return r["gflops"] / base if base and is_ok(r) else None


def peak_of(records):
    """The device peak these records were measured against (from peak_pct), or None."""
    peaks = sorted(r["gflops"] * 100.0 / r["peak_pct"] for r in records
                   if is_ok(r) and (r.get("peak_pct") or 0) > 0)
    return peaks[len(peaks) // 2] if peaks else None


# ---- roofline quantities --------------------------------------------------------------------


def roles_of(r):
    """(a, b, c) storage types: the record's role fields, else the storage part of "type"
    ("bf16->f32" and "f32/tf32" name storage first) for all three."""
    natural = str(r.get("type", "")).split("->")[0].split("/")[0]
    a = r.get("a_type") or natural
    return a, r.get("b_type") or a, r.get("c_type") or a


def gemm_flops(r):
    """Floating-point operations of the record: what kafel divided by the time if it can be
    recovered (it knows complex counts), else 2·m·n·k."""
    if is_ok(r) and (r.get("median_ms") or 0) > 0:
        return r["gflops"] * r["median_ms"] * 1e6
    return 2.0 * r["m"] * r["n"] * r["k"]


def gemm_min_bytes(r):
    """A, B read once, C written once (and read when beta != 0); None for unknown types."""
    sizes = [ELEMENT_BYTES.get(t) for t in roles_of(r)]
    if None in sizes:
        return None
    a, b, c = sizes
    c_passes = 2 if (r.get("beta") or 0) != 0 else 1
    m, n, k = r["m"], r["n"], r["k"]
    return float(a * m * k + b * k * n + c * c_passes * m * n)


def gemm_intensity(r):
    nbytes = gemm_min_bytes(r)
    return gemm_flops(r) / nbytes if nbytes else None


def cov_flops(channels, samples):
    """Upper triangle with diagonal, one multiply-add each per sample: C(C+1)/2 · 2 · N."""
    return channels * (channels + 1) / 2.0 * 2.0 * samples


def cov_min_bytes(channels, samples):
    return float(COV_SAMPLE_BYTES * channels * samples)


def cov_points(results):
    """[(device id, label, intensity, GFLOP/s)] of every covariance measurement."""
    points = []
    for path, doc in results.cov_streams:
        c, n, ms = doc["channels"], doc["samples"], doc.get("median_ms") or 0
        if ms > 0:
            kernel = f' {doc["kernel"]}' if doc.get("kernel") else ""
            label = f"cov stream{kernel} (end to end, median latency)"
            points.append((doc.get("device", "?"), label, cov_flops(c, n) / cov_min_bytes(c, n),
                           cov_flops(c, n) / (ms * 1e6)))
    for path, doc in results.cov_benches:
        c, n = doc["channels"], doc["samples"]
        for k in doc["kernels"]:
            ms = k.get("median_ms") or 0
            if k.get("status", "ok") == "ok" and ms > 0:
                points.append((doc.get("device", "?"), f'cov {k["kernel"]}',
                               cov_flops(c, n) / cov_min_bytes(c, n), cov_flops(c, n) / (ms * 1e6)))
    return points


def device_roofs(device):
    """[(name, GFLOP/s)] compute roofs of a device object, positive ones only, f32 first."""
    roofs = []
    for name, key in (("f32", "peak_gflops_f32"), ("f64", "peak_gflops_f64")):
        value = device.get(key) or 0
        if value > 0:
            roofs.append((name, float(value)))
    for name, value in (device.get("tensor_peaks") or {}).items():
        if value and value > 0:
            roofs.append((f"{name} (matrix units)", float(value)))
    return roofs


def geometric_mean(values):
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None
