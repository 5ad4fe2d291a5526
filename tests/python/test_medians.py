# Tests of bench/medians.py: ratios are the baseline's time over the kernel's within one run, the
# median is over runs, unverified records and shapes without a baseline count nowhere.
"""Run: python3 -m unittest discover -s tests/python (pytest collects it too)."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "bench", "medians.py")


def rec(kernel, ms, m=4096, type_="bf16", baseline=False, verified=True, status="ok", batch=1):
    gflops = 2.0 * batch * m ** 3 / (ms * 1e6) if status == "ok" else 0.0
    return {"kernel": kernel, "config": "(defaults)" if baseline else "BM=128 BN=256",
            "baseline": baseline, "type": type_, "m": m, "n": m, "k": m, "batch": batch,
            "op": "NN", "median_ms": ms, "gflops": gflops, "verified": verified,
            "status": status}


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True,
                          timeout=60)


class Medians(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, records):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"kafel_version": "0.1.0", "device": None, "records": records}, f)
        return path

    def three_runs(self):
        # kafel's time against cuBLAS's: ratios 1.10, 0.90, 0.95 at 4096, all 1.25 at 8192.
        runs = []
        for i, (mine, base) in enumerate([(1.0, 1.1), (1.0, 0.9), (2.0, 1.9)]):
            runs.append(self.write(f"run{i}.json", [
                rec("cuda.wgmma_ws", mine), rec("cuda.cublas", base, baseline=True),
                rec("cuda.wgmma_ws", 0.8, m=8192), rec("cuda.cublas", 1.0, m=8192, baseline=True),
            ]))
        return runs

    def test_per_run_ratios_and_their_median(self):
        done = run(*self.three_runs())
        self.assertEqual(done.returncode, 0, done.stderr)
        line = next(l for l in done.stdout.splitlines() if "4096x4096x4096" in l)
        self.assertIn("1.10 0.90 0.95", line)
        self.assertIn("0.950", line)  # the median, not the mean (0.983)
        self.assertIn("3/3", line)
        line = next(l for l in done.stdout.splitlines() if "8192x8192x8192" in l)
        self.assertIn("1.250", line)

    def test_target_marks_rows_below_it_and_sets_the_exit_code(self):
        done = run(*self.three_runs(), "--target", "1.0")
        self.assertEqual(done.returncode, 3, done.stdout)
        self.assertIn("0.950 *", done.stdout)
        self.assertIn("1 of 2 rows below 1x", done.stdout)
        self.assertEqual(run(*self.three_runs(), "--target", "0.9").returncode, 0)

    def test_markdown_table(self):
        done = run(*self.three_runs(), "--markdown")
        lines = done.stdout.splitlines()
        self.assertTrue(lines[0].startswith("| kernel | roles |"))
        self.assertEqual(lines[1], "|---|---|---|---|---|---|")
        self.assertEqual(len(lines), 4)

    def test_unverified_records_and_missing_baselines_count_nowhere(self):
        a = self.write("a.json", [
            rec("cuda.wgmma_ws", 1.0), rec("cuda.cublas", 1.2, baseline=True),
            rec("cuda.wgmma_ws", 1.0, type_="i8"),  # no i8 baseline in this run
        ])
        b = self.write("b.json", [
            rec("cuda.wgmma_ws", 0.5, verified=False), rec("cuda.cublas", 1.0, baseline=True),
            rec("cuda.wgmma_ws", 1.0, type_="i8"), rec("cuda.cublas", 2.0, type_="i8",
                                                       baseline=True, status="skipped"),
        ])
        c = self.write("c.json", [rec("cuda.wgmma_ws", 1.0), rec("cuda.cublas", 0.8, baseline=True)])
        done = run(a, c)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertNotIn("i8", done.stdout)
        self.assertIn("1.20 0.80", done.stdout)
        self.assertIn("2/2", done.stdout)
        # b has no verified pair at all: refused with the reason, not counted as a run.
        done = run(a, b)
        self.assertEqual(done.returncode, 1)
        self.assertIn("b.json: no verified kernel record", done.stderr)

    def test_batches_are_their_own_rows(self):
        a = self.write("a.json", [
            rec("cuda.pipelined", 1.0, m=256, type_="f32", batch=1024),
            rec("cuda.cublas", 0.9, m=256, type_="f32", batch=1024, baseline=True),
        ])
        done = run(a)
        self.assertIn("1024x256x256x256", done.stdout)
        self.assertIn("0.900", done.stdout)

    def test_not_a_bench_file_is_refused(self):
        path = self.write("x.json", [])
        with open(path, "w", encoding="utf-8") as f:
            f.write("{\"channels\": 3")
        done = run(path)
        self.assertEqual(done.returncode, 1)
        self.assertIn("not JSON", done.stderr)
        # Valid JSON of another kind (a covariance result): refused by name, not read as empty.
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"channels": 3, "samples": 10, "median_ms": 1.0}, f)
        done = run(path)
        self.assertEqual(done.returncode, 1)
        self.assertIn("x.json: not a kafel bench JSON file", done.stderr)


if __name__ == "__main__":
    unittest.main()
