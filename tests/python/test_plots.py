# Tests of bench/kafel_plots and bench/plot.py on fixtures written here: the derived numbers
# (ladder order, ratios, minimum bytes, intensity, shape classes) and that each picture renders.
"""Run: MPLBACKEND=Agg python3 -m unittest discover -s tests/python (pytest collects it too)."""

import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(HERE, "..", "..", "bench")
sys.path.insert(0, HERE)
sys.path.insert(0, BENCH)

import fixtures  # noqa: E402
from kafel_plots import data, ladder, roofline, shapes, stream, style  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def assert_png(test, payload, min_bytes=8000):
    test.assertEqual(payload[:8], PNG_MAGIC, "not a PNG")
    test.assertGreater(len(payload), min_bytes, "PNG implausibly small")


class DerivedNumbers(unittest.TestCase):
    def test_ladder_order_is_the_order_kafel_wrote_not_alphabetical(self):
        records = fixtures.cuda_ladder()["records"]
        order = list(data.ladder_order(records))
        self.assertEqual(order[:3], ["cuda.oneblock", "cuda.blocks", "cuda.gridstride"])
        self.assertEqual(order[-2:], ["cuda.pipelined", "cuda.cublas"])
        self.assertNotEqual(order, sorted(order))

    def test_swept_parameters_join_the_label(self):
        records = [fixtures.record(fixtures.EPYC, "cpu.packed", 64, 64, 64, 10.0, 100.0,
                                   params={"MC": mc, "NC": 256}) for mc in (64, 128)]
        self.assertEqual(list(data.ladder_order(records)),
                         ["cpu.packed MC=64", "cpu.packed MC=128"])

    def test_ratio_to_baseline_matches_the_same_problem(self):
        records = fixtures.cuda_ladder()["records"]
        baselines = data.baseline_gflops(records)
        pipelined = [r for r in records if r["kernel"] == "cuda.pipelined" and r["m"] == 4096][0]
        self.assertAlmostEqual(data.ratio_to_baseline(pipelined, baselines, "cuda.cublas"),
                               48849 / 51174)
        skipped = [r for r in records if r["kernel"] == "cuda.oneblock"][0]
        self.assertIsNone(data.ratio_to_baseline(skipped, baselines, "cuda.cublas"))

    def test_minimum_bytes_follow_the_element_roles(self):
        f32 = fixtures.record(fixtures.H200, "k", 100, 200, 300, 1.0, 1.0)
        self.assertEqual(data.gemm_min_bytes(f32), 4 * (100 * 300 + 300 * 200 + 100 * 200))
        mixed = dict(f32, type="bf16->f32", a_type="bf16", b_type="bf16", c_type="f32")
        self.assertEqual(data.gemm_min_bytes(mixed), 2 * 100 * 300 + 2 * 300 * 200 + 4 * 100 * 200)
        with_beta = dict(f32, beta=1.0)  # C is read too
        self.assertEqual(data.gemm_min_bytes(with_beta),
                         4 * (100 * 300 + 300 * 200 + 2 * 100 * 200))
        old = {k: v for k, v in f32.items() if k not in ("a_type", "b_type", "c_type")}
        old["type"] = "f64"  # records without role fields: the storage part of "type"
        self.assertEqual(data.gemm_min_bytes(old), 8 * (100 * 300 + 300 * 200 + 100 * 200))
        self.assertIsNone(data.gemm_min_bytes(dict(f32, a_type="f128")))

    def test_intensity_of_a_cube_is_n_over_6_in_f32(self):
        r = fixtures.record(fixtures.H200, "k", 1200, 1200, 1200, 5000.0, 1.0)
        self.assertAlmostEqual(data.gemm_intensity(r), 2 * 1200 ** 3 / (12 * 1200 ** 2))

    def test_covariance_flops_and_bytes(self):
        self.assertEqual(data.cov_flops(10, 1000), 10 * 11 / 2 * 2 * 1000)
        self.assertEqual(data.cov_min_bytes(10, 1000), 4 * 10 * 1000)
        results = data.Results()
        results.add("radar.json", fixtures.cov_stream())
        (device, label, intensity, gflops), = data.cov_points(results)
        self.assertEqual(device, "cuda:0")
        self.assertAlmostEqual(intensity, 11 / 4)

    def test_documents_are_told_apart(self):
        self.assertEqual(data.kind_of(fixtures.cuda_ladder()), "bench")
        self.assertEqual(data.kind_of([fixtures.EPYC]), "devices")
        self.assertEqual(data.kind_of(fixtures.cov_stream()), "cov_stream")
        self.assertEqual(data.kind_of(fixtures.cov_bench()), "cov_bench")
        self.assertIsNone(data.kind_of({"something": "else"}))
        self.assertIsNone(data.kind_of([]))

    def test_close_roofs_share_a_line(self):
        roofs = data.device_roofs(fixtures.H200)
        self.assertIn(("tf32 (matrix units)", 494_700.0), roofs)
        merged = roofline.merge_close_roofs(roofs)
        self.assertEqual(len(merged), len(roofs) - 1)  # f32 66,908 and f64 tensor 66,900
        self.assertTrue(any(name.startswith("f32, f64") for name, _ in merged))

    def test_shape_classes(self):
        self.assertEqual([shapes.size_class(v) for v in (1, 15, 16, 255, 256, 4095, 4096, 10**6)],
                         [0, 0, 1, 2, 3, 4, 5, 5])
        self.assertEqual(shapes.class_label(0), "<16")
        self.assertEqual(shapes.class_label(5), "≥4096")
        ratios = shapes.shape_ratios(fixtures.shape_sweep()["records"])
        self.assertEqual(len(ratios), 50)
        self.assertEqual(shapes.shape_ratios(fixtures.cuda_ladder()["records"]), [])  # cubes only


class Pictures(unittest.TestCase):
    def test_ladder_chart(self):
        fig = ladder.ladder_figure(fixtures.cuda_ladder()["records"])
        ax = fig.axes[0]
        self.assertEqual(ax.get_yscale(), "log")
        texts = [t.get_text() for t in ax.texts]
        self.assertIn(style.fmt_ratio(48849 / 51174), texts)  # the ratio printed on the bar
        self.assertIn("skip", texts)  # cuda.oneblock cannot run 1024 threads per block
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        self.assertEqual(labels[:2], ["cuda.oneblock", "cuda.blocks"])
        self.assertIn("cuda.cublas (baseline)", labels)
        legend_box = ax.get_legend().get_window_extent(fig.canvas.get_renderer())
        axes_box = ax.get_window_extent(fig.canvas.get_renderer())
        self.assertGreaterEqual(legend_box.x0, axes_box.x1)  # the legend sits outside the data
        assert_png(self, style.png_bytes(fig))

    def test_ladder_marks_unverified_and_failed(self):
        fig = ladder.ladder_figure(fixtures.cpu_ladder()["records"])
        ax = fig.axes[0]
        texts = [t.get_text() for t in ax.texts]
        self.assertTrue(any(t.endswith("?") for t in texts), texts)
        self.assertIn("FAIL", texts)
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        self.assertTrue(any("NOT verified" in label for label in labels))
        assert_png(self, style.png_bytes(fig))

    def test_ladder_of_a_shape_sweep_keeps_cubes_only(self):
        sweep = fixtures.shape_sweep()["records"]
        self.assertEqual(ladder.ladder_records(sweep), [])
        cube = fixtures.record(fixtures.H200, "cuda.pipelined", 512, 512, 512, 9000.0, 1.0)
        self.assertEqual(ladder.ladder_records(sweep + [cube]), [cube])

    def test_roofline(self):
        doc = fixtures.cuda_ladder()
        results = data.Results()
        results.add("radar.json", fixtures.cov_stream())
        fig = roofline.roofline_figure(fixtures.H200, doc["records"] + fixtures.tensor_ladder()[
            "records"], data.cov_points(results))
        ax = fig.axes[0]
        self.assertEqual((ax.get_xscale(), ax.get_yscale()), ("log", "log"))
        texts = " ".join(t.get_text() for t in ax.texts)
        self.assertIn("memory 4,800 GB/s", texts)
        self.assertIn("bf16 (matrix units)", texts)
        labels = " ".join(t.get_text() for t in ax.get_legend().get_texts())
        self.assertIn("cov stream", labels)
        self.assertIn("cuda.pipelined f32: best 73% of roof", labels)  # 48,849 / 66,908
        assert_png(self, style.png_bytes(fig))

    def test_roofline_without_device_figures(self):
        fig = roofline.roofline_figure(None, fixtures.cpu_ladder()["records"], [])
        self.assertIn("no roofs", fig.axes[0].get_title(loc="left"))
        assert_png(self, style.png_bytes(fig))
        self.assertIsNone(roofline.roofline_figure(None, [], []))

    def test_stream_timeline_marks_missed_blocks(self):
        fig = stream.stream_figure(fixtures.cov_stream())
        timeline, histogram = fig.axes[:2]
        labels = [t.get_text() for t in timeline.get_legend().get_texts()]
        self.assertIn("missed: 1 block", labels)
        self.assertIn("deadline 50 ms", labels)
        marks = [t.get_text() for t in histogram.get_legend().get_texts()]
        self.assertEqual([m.split()[0] for m in marks], ["median", "p99", "worst"])
        self.assertIn("worst 61 ms", marks)
        assert_png(self, style.png_bytes(fig))

    def test_stream_far_below_its_deadline_writes_the_margin(self):
        doc = fixtures.cov_stream()
        doc["latency_ms"] = [3.0 + 0.01 * (i % 7) for i in range(200)]
        doc.update(median_ms=3.03, p99_ms=3.06, max_ms=3.06, missed=0)
        fig = stream.stream_figure(doc)
        labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
        self.assertTrue(any("off the scale" in label for label in labels), labels)
        self.assertLess(fig.axes[0].get_ylim()[1], 10)  # the jitter stays visible
        assert_png(self, style.png_bytes(fig))

    def test_stream_without_latencies_falls_back_to_the_summary(self):
        doc = fixtures.cov_stream(with_latencies=False)
        self.assertIsNone(stream.latencies(doc))
        self.assertIsNone(stream.latencies(dict(doc, latency_ms=[1.0, "x"])))
        fig = stream.stream_figure(doc)
        self.assertIn("latency_ms", " ".join(t.get_text() for t in fig.axes[0].texts))
        assert_png(self, style.png_bytes(fig), min_bytes=4000)

    def test_shape_map(self):
        fig = shapes.shape_figure(fixtures.shape_sweep()["records"])
        panels = [ax for ax in fig.axes if ax.get_title()]
        self.assertEqual([ax.get_title() for ax in panels], ["k 64–255", "k ≥4096"])
        self.assertTrue(any(t.get_text().endswith("(1)") for t in panels[0].texts))
        assert_png(self, style.png_bytes(fig))
        self.assertIsNone(shapes.shape_figure(fixtures.cuda_ladder()["records"]))


class PlotCommand(unittest.TestCase):
    def run_plot(self, *args):
        return subprocess.run([sys.executable, os.path.join(BENCH, "plot.py"), *args],
                              capture_output=True, text=True, timeout=120)

    def test_writes_a_png(self):
        with tempfile.TemporaryDirectory() as tmp:
            fixtures.write_results(tmp)
            out = os.path.join(tmp, "ladder.png")
            done = self.run_plot(os.path.join(tmp, "ladder-cuda.json"),
                                 os.path.join(tmp, "ladder-cpu.json"), "-o", out)
            self.assertEqual(done.returncode, 0, done.stderr)
            with open(out, "rb") as f:
                assert_png(self, f.read())

    def test_refuses_what_it_cannot_plot(self):
        with tempfile.TemporaryDirectory() as tmp:
            fixtures.write_results(tmp)
            done = self.run_plot(os.path.join(tmp, "devices.json"), "-o",
                                 os.path.join(tmp, "x.png"))
            self.assertEqual(done.returncode, 1)
            self.assertIn("no benchmark result that ran", done.stderr)
            broken = os.path.join(tmp, "broken.json")
            with open(broken, "w", encoding="utf-8") as f:
                f.write("{ not json")
            done = self.run_plot(broken, "-o", os.path.join(tmp, "x.png"))
            self.assertEqual(done.returncode, 2)
            self.assertIn("broken.json: not JSON", done.stderr)
            self.assertFalse(os.path.exists(os.path.join(tmp, "x.png")))


if __name__ == "__main__":
    unittest.main()
