#!/usr/bin/env python3
"""Figures of `mpmg bench amg` (FGCS'23 Figures 12-14).

usage: plot_amg.py amg.json OUTDIR

OUTDIR/amg.png: per smoother, the speedup in total solve time over (DP) of the best
half-precision configuration (highest geometric-mean speedup) for every matrix, with the
paper's markers: x NaN, v not converged, o more iterations than (DP).
OUTDIR/amg_heatmap.png: iterations and total time relative to (DP) as a function of the first
level whose working precision is SP (rows) and the first level whose matrix is HP (columns).
"""
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def bars(doc, dst):
    rows = doc["rows"]
    smoothers = list(doc["best_hp"].keys())
    fig, axes = plt.subplots(len(smoothers), 1, figsize=(max(8, 0.35 * len(rows) / 8 + 6),
                                                          4.2 * len(smoothers)), squeeze=False)
    for ax, sm in zip(axes[:, 0], smoothers):
        cfg = doc["best_hp"][sm]
        sel = [r for r in rows if r["smoother"] == sm and r["config"] == cfg]
        sel.sort(key=lambda r: r["nnz"] or 0)
        xs = range(len(sel))
        ys = [r["speedup"] if r["speedup"] is not None else 0.0 for r in sel]
        colors = ["tab:blue" if r["converged"] and not r["nan"] else "tab:gray" for r in sel]
        ax.bar(xs, ys, color=colors)
        for x, r, y in zip(xs, sel, ys):
            m = r["markers"]
            sym = "x" if "NaN" in m else "v" if "not converged" in m else (
                "o" if "more iterations than (DP)" in m else None)
            if sym:
                ax.plot(x, y + 0.03, sym, color="k", ms=5, mfc="none")
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_xticks(list(xs))
        ax.set_xticklabels([r["matrix"] + ("*" if r["matrix_note"] else "") for r in sel],
                           rotation=70, ha="right", fontsize=7)
        ax.set_ylabel("speedup over (DP), total time")
        mc = doc["machine"]
        ax.set_title(f"{sm}: best HP configuration {cfg} — {mc['cpu']}, {mc['threads']} threads "
                     f"(x NaN, v not converged, o more iterations; * semidefinite)",
                     fontsize=9)
    fig.tight_layout()
    fig.savefig(dst, dpi=110)


def heatmap(doc, dst):
    h = doc["heatmap"]
    if "cells" not in h:
        return
    L = h["levels"]
    labels = [str(i) for i in range(L)] + ["no"]
    it = [[math.nan] * (L + 1) for _ in range(L + 1)]
    tm = [[math.nan] * (L + 1) for _ in range(L + 1)]
    for c in h["cells"]:
        s, p = c["sp_level"], c["hp_level"]
        it[s][p] = c["iterations"] if c["converged"] else math.nan
        tm[s][p] = c["time_rel"] if c["time_rel"] is not None and c["converged"] else math.nan
    fig, axes = plt.subplots(1, 2, figsize=(6 + 1.1 * L, 0.5 * L + 3.5))
    for ax, data, title, fmt in ((axes[0], it, "iterations", "{:.0f}"),
                                 (axes[1], tm, "total time / (DP)", "{:.2f}")):
        im = ax.imshow(data, cmap="YlGnBu", origin="upper")
        for i in range(L + 1):
            for j in range(L + 1):
                v = data[i][j]
                ax.text(j, i, "✗" if math.isnan(v) else fmt.format(v), ha="center",
                        va="center", fontsize=7, color="k" if not math.isnan(v) else "r")
        ax.set_xticks(range(L + 1))
        ax.set_xticklabels(labels)
        ax.set_yticks(range(L + 1))
        ax.set_yticklabels(labels)
        ax.set_xlabel("first level with HP matrix")
        ax.set_ylabel("first level with SP work")
        ax.set_title(title)
        fig.colorbar(im, ax=ax, shrink=0.8)
    fig.suptitle(f"{h['matrix']}, {h['smoother']}: (no, no) = (DP) = {h['dp_iterations']} "
                 f"iterations, {h['dp_total_s']:.3f} s", fontsize=10)
    fig.tight_layout()
    fig.savefig(dst, dpi=110)


def main(src, outdir):
    with open(src) as f:
        doc = json.load(f)
    bars(doc, os.path.join(outdir, "amg.png"))
    heatmap(doc, os.path.join(outdir, "amg_heatmap.png"))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
