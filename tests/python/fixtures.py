# Small, realistic kafel JSON documents written by the tests themselves (no network, no GPU):
# a devices list, CPU / CUDA ladders with baselines, a shape sweep, covariance stream and bench.
"""write_results(folder) fills a results folder the way scripts/main.sh would."""

import json
import math
import os
import random

H200 = {
    "id": "cuda:0", "backend": "cuda", "name": "NVIDIA H200", "vendor": "NVIDIA",
    "driver": "580.159.04", "is_gpu": True, "compute_units": 132, "clock_mhz": 1980,
    "global_memory": 150_000_000_000, "local_memory": 232_448, "cache_bytes": 62_914_560,
    "peak_gflops_f32": 66_908.0, "peak_gflops_f64": 33_454.0,
    "tensor_peaks": {"tf32": 494_700.0, "bf16": 989_400.0, "f64": 66_900.0},
    "bandwidth_gbs": 4_800.0, "capabilities": ["fp64", "fp16", "mma_sm80", "wgmma_sm90a"],
    "sm_version": 90, "details": {"pci": "0000:19:00.0"},
}
EPYC = {
    "id": "cpu", "backend": "cpu", "name": "AMD EPYC 9R14 (2 threads)", "vendor": "AMD",
    "driver": "", "is_gpu": False, "compute_units": 2, "clock_mhz": 3700,
    "global_memory": 8_000_000_000, "local_memory": 0, "cache_bytes": 33_554_432,
    "peak_gflops_f32": 236.8, "peak_gflops_f64": 118.4, "tensor_peaks": {},
    "bandwidth_gbs": 38.0, "capabilities": ["avx2", "avx512"], "sm_version": 0, "details": {},
}

CUDA_LADDER = [  # (kernel, GFLOP/s at 1024³, 2048³, 4096³): run 8 of docs/BENCHMARKS.md
    ("cuda.oneblock", None, None, None),
    ("cuda.blocks", 6221, 6355, 6433),
    ("cuda.gridstride", 4368, 5075, 3402),
    ("cuda.smem", 7795, 8357, 7998),
    ("cuda.reg1d", 14075, 15067, 14319),
    ("cuda.reg2d", 7613, 15923, 15775),
    ("cuda.vec", 8910, 19068, 18929),
    ("cuda.warptile", 9537, 32865, 32477),
    ("cuda.pipelined", 28606, 47984, 48849),
]
CUBLAS = (33404, 50243, 51174)
CPU_LADDER = [("cpu.naive", 0.9, 0.7), ("cpu.cached_column", 3.4, 3.1), ("cpu.packed", 71.0, 88.0)]
OPENBLAS = (80.0, 86.0)


def record(device, kernel, m, n, k, gflops, peak, baseline=False, type_="f32", status="ok",
           verified=True, **extra):
    ms = 2.0 * m * n * k / (gflops * 1e6) if gflops else 0.0
    r = {
        "kernel": kernel, "config": "(defaults)", "params": {}, "params_source": "defaults",
        "baseline": baseline, "device": device["id"], "device_name": device["name"],
        "type": type_, "a_type": type_, "b_type": type_, "c_type": type_, "compute": type_,
        "m": m, "n": n, "k": k, "op": "NN", "median_ms": ms, "best_ms": ms * 0.97,
        "spread": 0.02, "gflops": gflops or 0.0, "best_gflops": (gflops or 0.0) * 1.03,
        "peak_pct": 100.0 * (gflops or 0.0) / peak, "total_ms": ms * 3, "slots": 1, "warmup": 2,
        "reps": 10, "verified": verified and status == "ok",
        "verify_method": "reference" if m <= 1024 else "freivalds", "max_abs_err": 3e-5,
        "rel_err": 1e-7, "timer": "events", "status": status, "error": "",
    }
    if status != "ok":
        r.update(gflops=0.0, best_gflops=0.0, median_ms=0.0, peak_pct=0.0,
                 error=f"{status}: m·n > 1024 threads")
    r.update(extra)
    return r


def cuda_ladder():
    records = []
    sizes = (1024, 2048, 4096)
    for kernel, *values in CUDA_LADDER:
        for s, g in zip(sizes, values):
            status = "ok" if g else "skipped"
            records.append(record(H200, kernel, s, s, s, g, H200["peak_gflops_f32"],
                                  status=status))
    for s, g in zip(sizes, CUBLAS):
        records.append(record(H200, "cuda.cublas", s, s, s, g, H200["peak_gflops_f32"],
                              baseline=True))
    return {"kafel_version": "0.1.0", "device": H200, "records": records}


def cpu_ladder():
    records = []
    for kernel, *values in CPU_LADDER:
        for s, g in zip((256, 512), values):
            records.append(record(EPYC, kernel, s, s, s, g, EPYC["peak_gflops_f32"]))
    records[1]["verified"] = False  # one unverified result: it must be drawn as such
    records.append(record(EPYC, "cpu.serial", 512, 512, 512, 0, 1, status="failed"))
    for s, g in zip((256, 512), OPENBLAS):
        records.append(record(EPYC, "cpu.openblas", s, s, s, g, EPYC["peak_gflops_f32"],
                              baseline=True))
    return {"kafel_version": "0.1.0", "device": EPYC, "records": records,
            "command": "kafel bench --device cpu --kernels all --sizes 256,512 --vs openblas "
                       "--json ladder-cpu.json"}


def shape_sweep():
    """Non-cubic shapes, ours against cuBLAS: ratios fall for skinny and small shapes."""
    rng = random.Random(7)
    records = []
    dims = (16, 96, 512, 3000, 8192)
    for m in dims:
        for n in dims:
            for k in (64, 4096):
                if m == n == k:
                    continue
                base = 50_000 * min(1.0, m * n * k / 2e10) + 50
                ours = base * (0.55 + 0.5 * math.tanh(min(m, n) / 800.0)) * rng.uniform(0.9, 1.1)
                records.append(record(H200, "cuda.pipelined", m, n, k, ours,
                                      H200["peak_gflops_f32"]))
                records.append(record(H200, "cuda.cublas", m, n, k, base,
                                      H200["peak_gflops_f32"], baseline=True))
    return {"kafel_version": "0.1.0", "device": H200, "records": records}


def tensor_ladder():
    """A bf16 -> f32 record set (roles differ from the type name) for the roofline."""
    records = []
    for s, g in ((2048, 310_000.0), (4096, 520_000.0)):
        records.append(record(H200, "cuda.wgmma", s, s, s, g, H200["tensor_peaks"]["bf16"],
                              type_="bf16->f32", a_type="bf16", b_type="bf16", c_type="f32",
                              compute="f32"))
    return {"kafel_version": "0.1.0", "device": H200, "records": records}


def cov_stream(with_latencies=True, blocks=40, rate=20.0, deadline=50.0):
    rng = random.Random(3)
    lat = [3.0 + rng.random() * 0.6 for _ in range(blocks)]
    lat[17] = 61.0  # one late block: the picture must mark it
    lat[18] = 24.0
    ordered = sorted(lat)
    doc = {
        "device": "cuda:0", "device_name": "NVIDIA H200", "kernel": "cuda.onepass",
        "channels": 10, "samples": 4_194_304, "layout": "planar", "source": "generated seed signal",
        "blocks": blocks, "rate": rate, "deadline_ms": deadline,
        "median_ms": ordered[blocks // 2], "p99_ms": ordered[-1], "max_ms": max(lat),
        "blocks_per_s": 20.0, "missed": sum(v > deadline for v in lat), "rel_err": 2.3e-9,
        "verified_blocks": 1, "nan_entries": 0, "passed": True,
    }
    if with_latencies:
        doc["latency_ms"] = lat
    return doc


def cov_bench():
    kernels = [("cpu.serial", 95.0), ("cpu.onepass", 14.2), ("cpu.syrk", 12.9)]
    return {
        "device": "cpu", "device_name": EPYC["name"], "channels": 10, "samples": 4_194_304,
        "layout": "planar", "signal": "seed", "copy_floor_ms": 0,
        "kernels": [{"kernel": k, "status": "ok", "median_ms": ms, "best_ms": ms * 0.98,
                     "floor_ms": 11.0, "e2e_ms": 0, "rel_err": 2.6e-9, "e2e_rel_err": 0}
                    for k, ms in kernels],
    }


COMMANDS = [
    "./build/tools/kafel/kafel devices --json results/devices.json",
    "./build/tools/kafel/kafel bench --device cuda:0 --kernels all --sizes 1024,2048,4096 "
    "--types f32 --vs cublas --json results/ladder-cuda.json --csv results/ladder-cuda.csv",
    "./build/tools/kafel/kafel cov --device cuda:0 --channels 10 --samples 4194304 --blocks 40 "
    "--rate 20 --json results/radar.json",
]


def write_json(path, doc):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2)


def write_results(folder, radar_latencies=True):
    """A results folder with every kind of document; returns the folder."""
    os.makedirs(folder, exist_ok=True)
    write_json(os.path.join(folder, "devices.json"), [EPYC, H200])
    write_json(os.path.join(folder, "ladder-cpu.json"), cpu_ladder())
    write_json(os.path.join(folder, "ladder-cuda.json"), cuda_ladder())
    write_json(os.path.join(folder, "tensor-cuda.json"), tensor_ladder())
    write_json(os.path.join(folder, "shapes-cuda.json"), shape_sweep())
    write_json(os.path.join(folder, "radar.json"), cov_stream(radar_latencies))
    write_json(os.path.join(folder, "cov-bench-cpu.json"), cov_bench())
    with open(os.path.join(folder, "commands.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(COMMANDS) + "\n")
    with open(os.path.join(folder, "notes.json"), "w", encoding="utf-8") as f:
        f.write('{"something": "else"}\n')  # not kafel's: listed as ignored, no crash
    return folder
