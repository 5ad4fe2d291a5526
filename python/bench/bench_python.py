#!/usr/bin/env python3
# Benchmarks of the Python binding's own cost: per-call overhead of kafel.gemm / GemmPlan on a
# 64x64 problem against numpy's @ (and torch.matmul on a GPU), and a radar block through
# kafel.cov against the time the C++ covariance() call measured for itself.
"""Usage: python3 python/bench/bench_python.py [--device cpu] [--samples 4194304] [--json F]"""

import argparse
import json
import statistics
import sys
import time

import numpy as np

import kafel


def per_call_us(fn, calls, repeats=7, sync=None):
    """Median over `repeats` of the mean time of one call in a loop of `calls`, microseconds."""
    fn()
    if sync:
        sync()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        if sync:
            sync()
        times.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(times)


def cpu_overhead(n, calls):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((n, n)).astype("f4")
    b = rng.standard_normal((n, n)).astype("f4")
    out = np.empty((n, n), "f4")
    plan = kafel.GemmPlan(a, b, device="cpu")
    rows = {
        "numpy a @ b": per_call_us(lambda: a @ b, calls),
        "numpy matmul(out=)": per_call_us(lambda: np.matmul(a, b, out=out), calls),
        "kafel.gemm(a, b)": per_call_us(lambda: kafel.gemm(a, b, device="cpu"), calls),
        "kafel.GemmPlan(a, b, out=)": per_call_us(lambda: plan(a, b, out=out), calls),
    }
    return {"problem": f"{n}x{n}x{n} f32 host", "kernel": plan.kernel, "us_per_call": rows}


def gpu_overhead(n, calls):
    import torch

    a = torch.randn(n, n, device="cuda")
    b = torch.randn(n, n, device="cuda")
    out = torch.empty(n, n, device="cuda")
    plan = kafel.GemmPlan(a, b)
    sync = torch.cuda.synchronize
    rows = {
        "torch.matmul (async, one sync per loop)": per_call_us(
            lambda: torch.matmul(a, b, out=out), calls, sync=sync),
        "torch.matmul + synchronize each call": per_call_us(
            lambda: (torch.matmul(a, b, out=out), sync()), calls),
        "kafel.gemm(a, b)": per_call_us(lambda: kafel.gemm(a, b), calls, sync=sync),
        "kafel.GemmPlan(a, b, out=)": per_call_us(lambda: plan(a, b, out=out), calls, sync=sync),
    }
    return {"problem": f"{n}x{n}x{n} f32 torch CUDA", "kernel": plan.kernel,
            "us_per_call": rows}


def radar_block(device, channels, samples, blocks):
    x = kafel.signal("seed", channels, samples)
    stream = kafel.CovStream(channels, samples, device=device, rate=20)
    for _ in range(blocks):
        stream.push(x)
    s = stream.stats
    python_ms = statistics.median(s.latency_ms[1:] or s.latency_ms)
    cpp_ms = statistics.median(s.cpp_ms[1:] or s.cpp_ms)
    # The same blocks through the C++ stream (run_cov_stream, as `kafel cov --blocks` runs).
    streamed = kafel.CovStream(channels, samples, device=device, rate=0).run("seed", blocks)
    return {"problem": f"{channels} x {samples} float32, {device}", "kernel": s.kernel,
            "python_ms": python_ms, "cpp_ms": cpp_ms, "ratio": python_ms / cpp_ms,
            "stream_median_ms": streamed.median_ms, "stream_blocks_per_s": streamed.blocks_per_s}


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cpu", help="device for the radar block (default cpu)")
    p.add_argument("--size", type=int, default=64, help="GEMM size for the overhead (64)")
    p.add_argument("--calls", type=int, default=2000, help="calls per timing loop")
    p.add_argument("--channels", type=int, default=10)
    p.add_argument("--samples", type=int, default=4_194_304)
    p.add_argument("--blocks", type=int, default=6)
    p.add_argument("--json", help="also write the results here")
    args = p.parse_args()

    results = {"kafel": kafel.__version__, "cpu": cpu_overhead(args.size, args.calls)}
    if any(d.backend == "cuda" for d in kafel.devices()):
        try:
            results["gpu"] = gpu_overhead(args.size, args.calls)
        except ImportError:
            print("gpu: torch is not installed, skipped", file=sys.stderr)
    results["radar"] = radar_block(args.device, args.channels, args.samples, args.blocks)

    for key in ("cpu", "gpu"):
        if key in results:
            r = results[key]
            print(f"per-call time, {r['problem']} (kernel {r['kernel']}):")
            for name, us in r["us_per_call"].items():
                print(f"  {name:42s} {us:9.1f} us")
    r = results["radar"]
    print(f"radar block {r['problem']} (kernel {r['kernel']}): kafel push {r['python_ms']:.2f} ms,"
          f" C++ covariance() {r['cpp_ms']:.2f} ms, ratio {r['ratio']:.3f}; C++ stream "
          f"{r['stream_median_ms']:.2f} ms median, {r['stream_blocks_per_s']:.1f} blocks/s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
