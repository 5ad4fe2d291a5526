# kafel's pictures and report page: ladder charts, roofline, stream timeline, shape map, and the
# one self-contained HTML page that gathers them (bench/plot.py and bench/report.py call this).
"""Plots of kafel's JSON output (kafel bench / devices / cov --json), matplotlib with Agg.

Modules: data (reading and classifying the JSON files, derived quantities), style (palette,
hatches, PNG output), ladder, roofline, stream, shapes (one picture kind each), page (HTML).
"""
