# Tests of bench/report.py: the page is one self-contained HTML file that embeds every picture
# it wrote, lists devices, tables and commands, and renders in headless Chromium when present.
"""Run: MPLBACKEND=Agg python3 -m unittest discover -s tests/python (pytest collects it too)."""

import base64
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(HERE, "..", "..", "bench")
sys.path.insert(0, HERE)

import fixtures  # noqa: E402

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def run_report(*args):
    return subprocess.run([sys.executable, os.path.join(BENCH, "report.py"), *args],
                          capture_output=True, text=True, timeout=300)


class ReportPage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.folder = fixtures.write_results(os.path.join(cls.tmp.name, "results"))
        cls.page = os.path.join(cls.folder, "index.html")
        cls.done = run_report(cls.folder, "-o", cls.page)
        with open(cls.page, encoding="utf-8") as f:
            cls.html = f.read()
        plots = os.path.join(cls.folder, "plots")
        cls.pngs = sorted(os.path.join(plots, n) for n in os.listdir(plots))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_command_succeeds_and_says_what_it_wrote(self):
        self.assertEqual(self.done.returncode, 0, self.done.stderr)
        self.assertIn("index.html", self.done.stdout)
        self.assertIn("notes.json not used", self.done.stderr)

    def test_is_html_of_plausible_size(self):
        self.assertTrue(self.html.startswith("<!DOCTYPE html>"))
        self.assertTrue(self.html.rstrip().endswith("</html>"))
        self.assertGreater(len(self.html), 100_000)  # pictures are embedded
        self.assertLess(len(self.html), 20_000_000)

    def test_every_picture_is_written_and_embedded(self):
        names = {os.path.basename(p)[:-4] for p in self.pngs}
        self.assertEqual(names, {"ladder-cpu-f32", "ladder-cuda-f32", "ladder-tensor_cuda-bf16_f32",
                                 "shapes-cuda-f32", "roofline-cpu", "roofline-cuda_0",
                                 "stream-radar"})
        for path in self.pngs:
            with open(path, "rb") as f:
                payload = f.read()
            self.assertEqual(payload[:8], b"\x89PNG\r\n\x1a\n", path)
            self.assertIn(base64.b64encode(payload).decode("ascii"), self.html, path)
            self.assertIn(f'id="fig-{os.path.basename(path)[:-4]}"', self.html)
        self.assertEqual(self.html.count("<img "), len(self.pngs))

    def test_is_self_contained(self):
        sources = re.findall(r'src="([^"]*)"', self.html)
        self.assertTrue(sources)
        self.assertTrue(all(s.startswith("data:image/png;base64,") for s in sources))
        self.assertNotIn("<script", self.html)
        self.assertNotRegex(self.html, r'<link[^>]+href="https?:')

    def test_lists_devices_tables_and_commands(self):
        for text in ("NVIDIA H200", "AMD EPYC 9R14", "4,800.0",  # the device table
                     "cuda.pipelined", "× cuda.cublas", "0.95×", "NOT verified",  # bench tables
                     "failed: m·n &gt; 1024 threads",  # kafel's error, escaped
                     "kafel cov --device cuda:0",  # commands.txt
                     "--vs openblas --json ladder-cpu.json",  # a document's "command" field
                     "cpu.syrk", "p99_ms", "notes.json"):
            self.assertIn(text, self.html)

    def test_the_commands_of_a_file_stand_beside_its_section(self):
        section = self.html[self.html.index('id="cov-radar"'):]
        self.assertIn("--rate 20 --json results/radar.json", section[:3000])

    def test_missing_folder_is_an_error(self):
        done = run_report(os.path.join(self.tmp.name, "nowhere"))
        self.assertEqual(done.returncode, 2)
        self.assertIn("not a folder", done.stderr)

    def test_broken_and_empty_inputs_still_give_a_page(self):
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "broken.json"), "w", encoding="utf-8") as f:
                f.write('{"records": [')
            done = run_report(tmp)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertIn("broken.json", done.stderr)
            with open(os.path.join(tmp, "index.html"), encoding="utf-8") as f:
                page = f.read()
            self.assertIn("No <code>kafel bench --json</code> file", page)
            self.assertIn("broken.json", page)

    def test_malformed_records_are_dropped_with_a_note(self):
        with tempfile.TemporaryDirectory() as tmp:
            doc = fixtures.cpu_ladder()
            doc["records"].append({"kernel": "cpu.naive", "m": "big", "n": 1, "k": 1})
            doc["records"].append({"kernel": "cpu.packed", "m": 64, "n": 64, "k": 64,
                                   "gflops": None, "status": "ok"})
            fixtures.write_json(os.path.join(tmp, "ladder-cpu.json"), doc)
            fixtures.write_json(os.path.join(tmp, "radar.json"),
                                dict(fixtures.cov_stream(), channels=0))
            done = run_report(tmp)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertIn("1 record(s) without kernel, m, n, k", done.stderr)
            self.assertIn("radar.json not used", done.stderr)
            self.assertNotIn("warning", done.stderr)  # every picture was drawn
            self.assertTrue(os.path.isfile(os.path.join(tmp, "plots", "ladder-cpu-f32.png")))


def find_chromium():
    for name in CHROMIUM_NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


class BrowserRender(unittest.TestCase):
    def test_chromium_renders_the_pictures(self):
        browser = find_chromium()
        if not browser:
            self.skipTest("Chromium not found (apt-get install chromium to run this test): "
                          "the report page was not rendered in a browser")
        import matplotlib.image  # the screenshot is read back with matplotlib's PNG reader

        with tempfile.TemporaryDirectory() as tmp:
            folder = fixtures.write_results(os.path.join(tmp, "results"))
            done = run_report(folder, "--no-png")
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertFalse(os.path.exists(os.path.join(folder, "plots")))
            shot = os.path.join(tmp, "shot.png")
            done = subprocess.run(
                [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                 f"--user-data-dir={os.path.join(tmp, 'profile')}", "--window-size=1400,2400",
                 f"--screenshot={shot}", "file://" + os.path.join(folder, "index.html")],
                capture_output=True, text=True, timeout=180)
            self.assertEqual(done.returncode, 0, done.stderr[-2000:])
            self.assertTrue(os.path.isfile(shot), done.stderr[-2000:])
            pixels = matplotlib.image.imread(shot)[:, :, :3]
        # The first ladder's orange bars (#D55E00) only appear if the embedded PNG decoded.
        orange = ((abs(pixels[:, :, 0] - 0xD5 / 255) < 0.06) & (abs(pixels[:, :, 1] - 0x5E / 255)
                  < 0.06) & (abs(pixels[:, :, 2]) < 0.06)).sum()
        self.assertGreater(orange, 2000, "no picture visible in the rendered page")
        self.assertGreater((pixels.sum(axis=2) < 1.5).sum(), 20000, "the page looks blank")


if __name__ == "__main__":
    unittest.main()
