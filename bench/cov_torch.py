#!/usr/bin/env python3
# The covariance baselines of issue 12 on a GPU: torch.cov (real float32 and complex64) on the
# array shapes, and for batches a loop of torch.cov against one batched x @ x^H.
"""Usage: python3 bench/cov_torch.py [--shapes 64x1048576,...] [--batch 1024x64x4096] [--json F]

Data resident on the GPU, CUDA-event times, median of --reps after --warmup. torch.cov computes
the full C x C matrix (mean removal and the division included); x @ x^H is the bare product
without centring, the lower bound of what a batched covariance can cost through torch."""

import argparse
import json
import statistics

import torch


def median_ms(fn, warmup, reps):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def sizes(text):
    """Parses "64x1048576,16x4194304" into [(64, 1048576), (16, 4194304)]."""
    return [tuple(int(v) for v in item.split("x")) for item in text.split(",") if item]


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--shapes", default="10x4194304,16x4194304,64x1048576,256x262144,1024x65536",
                   help="channels x samples list")
    p.add_argument("--batch", default="1024x64x4096", help="batch x channels x samples ('' none)")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--json", help="also write the results here")
    args = p.parse_args()
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(1)
    rows = []
    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    for c, n in sizes(args.shapes):
        for dtype in (torch.float32, torch.complex64):
            x = torch.randn(c, n, device=dev, dtype=dtype, generator=gen)
            ms = median_ms(lambda: torch.cov(x), args.warmup, args.reps)
            rows.append({"op": "torch.cov", "dtype": str(dtype).split(".")[1], "channels": c,
                         "samples": n, "batch": 1, "median_ms": ms})
            print(f"torch.cov {rows[-1]['dtype']:9s} {c:5d} x {n:8d}: {ms:9.3f} ms")
            del x
    for b, c, n in sizes(args.batch):
        x = torch.randn(b, c, n, device=dev, dtype=torch.complex64, generator=gen)
        loop = median_ms(lambda: [torch.cov(x[i]) for i in range(b)], 1, max(2, args.reps // 3))
        mm = median_ms(lambda: torch.matmul(x, x.conj().transpose(-1, -2)), args.warmup,
                       args.reps)
        for op, ms in (("loop of torch.cov", loop), ("batched x @ x^H", mm)):
            rows.append({"op": op, "dtype": "complex64", "channels": c, "samples": n,
                         "batch": b, "median_ms": ms})
            print(f"{op:18s} complex64 {b} x {c} x {n}: {ms:9.3f} ms")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
