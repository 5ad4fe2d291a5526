#!/usr/bin/env python3
# The CPU covariance baseline of issue 12: numpy.cov (float64 / complex128 arithmetic) against
# `kafel cov --bench --device cpu` on the same shapes, alternated in one run on a shared machine.
"""Usage: python3 bench/cov_numpy.py [--kafel build/tools/kafel/kafel] [--shapes 64x1048576]
                                   [--types f32,cf32] [--kernels cpu.fast,cpu.herk] [--rounds 3]

Each round times numpy.cov (median of --reps calls on random data of the shape, real float32 or
complex64 as kafel's samples; numpy.cov converts them to float64 / complex128) and then each
kafel kernel (`kafel cov --bench --kernel K --signal random`: verified against float64 first,
median of --reps timed runs). Rounds alternate the two so that load from other processes hits
both; the table reports the median over rounds of each and the ratio of the medians, plus the
spread (max/min over rounds) as the noise figure."""

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

import numpy as np


def numpy_ms(channels, samples, complex_samples, reps):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((channels, samples), dtype=np.float32)
    if complex_samples:
        x = (x + 1j * rng.standard_normal((channels, samples), dtype=np.float32)).astype(np.complex64)
    np.cov(x)  # warm-up: page faults of the float64 copies
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        np.cov(x)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def kafel_ms(kafel, kernel, channels, samples, dtype, reps):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bench.json")
        subprocess.run([kafel, "cov", "--bench", "--device", "cpu", "--kernel", kernel,
                        "--channels", str(channels), "--samples", str(samples), "--type", dtype,
                        "--signal", "random", "--reps", str(reps), "--warmup", "1",
                        "--json", out], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        with open(out) as f:
            row = json.load(f)["kernels"][0]
    if not row["verified"]:
        raise SystemExit(f"{kernel} {dtype} {channels}x{samples}: not verified ({row['status']})")
    return row["median_ms"], row["floor_ms"], row["rel_err"]


def spread(values):
    return max(values) / min(values) if min(values) > 0 else float("nan")


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--kafel", default="build/tools/kafel/kafel")
    p.add_argument("--shapes", default="64x1048576", help="channels x samples list")
    p.add_argument("--types", default="f32,cf32")
    p.add_argument("--kernels", default="cpu.fast,cpu.herk")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--json", help="write the rows here")
    a = p.parse_args()
    rows = []
    for shape in a.shapes.split(","):
        channels, samples = (int(v) for v in shape.split("x"))
        for dtype in a.types.split(","):
            kernels = a.kernels.split(",")
            np_t, k_t = [], {k: [] for k in kernels}
            floor, err = {}, {}
            for _ in range(a.rounds):
                np_t.append(numpy_ms(channels, samples, dtype != "f32", a.reps))
                for k in kernels:
                    ms, floor[k], err[k] = kafel_ms(a.kafel, k, channels, samples, dtype, a.reps)
                    k_t[k].append(ms)
            for k in kernels:
                row = {"shape": shape, "type": dtype, "kernel": k,
                       "numpy_ms": statistics.median(np_t), "numpy_spread": spread(np_t),
                       "kafel_ms": statistics.median(k_t[k]), "kafel_spread": spread(k_t[k]),
                       "floor_ms": floor[k], "rel_err": err[k]}
                row["speedup"] = row["numpy_ms"] / row["kafel_ms"]
                rows.append(row)
                print(f"{shape:>12} {dtype:>5} {k:>9}: numpy.cov {row['numpy_ms']:9.1f} ms "
                      f"(spread {row['numpy_spread']:.2f})  kafel {row['kafel_ms']:8.1f} ms "
                      f"(spread {row['kafel_spread']:.2f}, read floor {floor[k]:.1f} ms)  "
                      f"x{row['speedup']:.1f}  rel_err {err[k]:.1e}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
