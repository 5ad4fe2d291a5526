#!/usr/bin/env python3
# Benchmarks of the Python binding's own cost: per-call overhead of kafel.gemm / GemmPlan on a
# 64x64 problem against numpy's @ (and torch.matmul on a GPU), and a radar block through
# kafel.cov against the time the C++ covariance() call measured for itself.
"""Usage: python3 python/bench/bench_python.py [--only cpu|gpu|radar] [--device cpu]
[--samples 4194304] [--json F]"""

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
    return {"problem": f"{n}x{n}x{n} f32 host", "kernel": plan.kernel, "us_per_call": rows,
            "baseline": "numpy matmul(out=)"}


def gpu_overhead(n, calls):
    """Per-call time on the GPU of kafel.gemm and a reused kafel.GemmPlan against torch.matmul
    (and cupy.matmul when cupy is there), each kafel result first checked against torch."""
    import torch

    a = torch.randn(n, n, device="cuda")
    b = torch.randn(n, n, device="cuda")
    out = torch.empty(n, n, device="cuda")
    plan = kafel.GemmPlan(a, b)
    want = torch.matmul(a.double(), b.double())
    tol = 1e-4 * n * want.abs().max().item()

    def checked(name, fn):
        got = fn()
        err = (got.double() - want).abs().max().item()
        if not err <= tol:
            raise SystemExit(f"bench_python: {name} is wrong on the GPU (max error {err:.3g})")
        return fn

    sync = torch.cuda.synchronize
    gemm = checked("kafel.gemm", lambda: kafel.gemm(a, b))
    gemm_out = checked("kafel.gemm(out=)", lambda: kafel.gemm(a, b, out=out))
    run = checked("GemmPlan", lambda: plan(a, b))
    run_out = checked("GemmPlan(out=)", lambda: plan(a, b, out=out))
    rows = {
        "torch.matmul(a, b)": per_call_us(lambda: torch.matmul(a, b), calls, sync=sync),
        "torch.matmul(a, b, out=)": per_call_us(lambda: torch.matmul(a, b, out=out), calls,
                                                sync=sync),
        "kafel.gemm(a, b)": per_call_us(gemm, calls, sync=sync),
        "kafel.gemm(a, b, out=)": per_call_us(gemm_out, calls, sync=sync),
        "GemmPlan plan(a, b)": per_call_us(run, calls, sync=sync),
        "GemmPlan plan(a, b, out=)": per_call_us(run_out, calls, sync=sync),
        "torch.matmul(out=) + synchronize": per_call_us(
            lambda: (torch.matmul(a, b, out=out), sync()), calls),
        "GemmPlan plan(out=) + synchronize": per_call_us(lambda: (run_out(), sync()), calls),
    }
    rows.update(cupy_overhead(a, b, want, tol, calls))
    return {"problem": f"{n}x{n}x{n} f32 torch CUDA", "kernel": plan.kernel,
            "us_per_call": rows, "baseline": "torch.matmul(a, b, out=)"}


def cupy_overhead(a, b, want, tol, calls):
    """The same for cupy arrays (zero-copy views of the torch operands), when cupy is there."""
    try:
        import cupy
    except ImportError:
        return {}
    ca, cb = cupy.from_dlpack(a), cupy.from_dlpack(b)
    cout = cupy.empty(ca.shape, dtype=ca.dtype)
    plan = kafel.GemmPlan(ca, cb)
    plan(ca, cb, out=cout)
    err = float(abs(cupy.asnumpy(cout).astype("f8") - want.cpu().numpy()).max())
    if not err <= tol:
        raise SystemExit(f"bench_python: GemmPlan on cupy is wrong (max error {err:.3g})")
    sync = cupy.cuda.get_current_stream().synchronize
    return {
        "cupy.matmul(a, b, out=)": per_call_us(lambda: cupy.matmul(ca, cb, out=cout), calls,
                                               sync=sync),
        "GemmPlan on cupy plan(a, b, out=)": per_call_us(lambda: plan(ca, cb, out=cout), calls,
                                                         sync=sync),
    }


def print_table(r):
    """One short table: microseconds per call, and the ratio to the baseline row if any."""
    rows = r["us_per_call"]
    base = rows.get(r.get("baseline", ""))
    print(f"per-call time, {r['problem']} (kernel {r['kernel']}):")
    for name, us in rows.items():
        ratio = f"  {us / base:5.2f}x" if base else ""
        print(f"  {name:36s} {us:9.1f} us{ratio}")


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
    p.add_argument("--only", choices=("cpu", "gpu", "radar"), action="append",
                   help="run only this part (repeatable; default: all three)")
    args = p.parse_args()
    parts = set(args.only or ("cpu", "gpu", "radar"))

    results = {"kafel": kafel.__version__}
    if "cpu" in parts:
        results["cpu"] = cpu_overhead(args.size, args.calls)
    if "gpu" in parts and any(d.backend == "cuda" for d in kafel.devices()):
        try:
            results["gpu"] = gpu_overhead(args.size, args.calls)
        except ImportError:
            print("gpu: torch is not installed, skipped", file=sys.stderr)
    if "radar" in parts:
        results["radar"] = radar_block(args.device, args.channels, args.samples, args.blocks)

    for key in ("cpu", "gpu"):
        if key in results:
            print_table(results[key])
    if "radar" in results:
        r = results["radar"]
        print(f"radar block {r['problem']} (kernel {r['kernel']}): kafel push "
              f"{r['python_ms']:.2f} ms, C++ covariance() {r['cpp_ms']:.2f} ms, ratio "
              f"{r['ratio']:.3f}; C++ stream {r['stream_median_ms']:.2f} ms median, "
              f"{r['stream_blocks_per_s']:.1f} blocks/s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
