#!/usr/bin/env python3
"""Bar chart of `mpmg bench kernels` results, like Figure 7 of the ICPP'24 paper.

usage: plot_kernels.py kernels.json kernels.png

One panel per thread count; groups are (kernel, pattern); bars are the cases, height the speedup
over the fp32/fp32 AOS baseline (the byte-ratio bound of each SOA case is marked with a dash).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(src, dst):
    with open(src) as f:
        doc = json.load(f)
    rows = doc["rows"]
    threads = sorted({r["threads"] for r in rows})
    groups = []
    for r in rows:
        g = (r["kernel"], r["pattern"])
        if g not in groups:
            groups.append(g)
    cases = []
    for r in rows:
        c = (r["storage"], r["compute"], r["layout"])
        if c not in cases:
            cases.append(c)
    fig, axes = plt.subplots(len(threads), 1, figsize=(14, 4.5 * len(threads)), squeeze=False)
    width = 0.8 / len(cases)
    for ax, t in zip(axes[:, 0], threads):
        for ci, c in enumerate(cases):
            xs, ys = [], []
            for gi, g in enumerate(groups):
                for r in rows:
                    if (r["threads"], r["kernel"], r["pattern"]) == (t, *g) and (
                        r["storage"], r["compute"], r["layout"]) == c:
                        if r["speedup_vs_fp32_aos"] is not None:
                            xs.append(gi + (ci - len(cases) / 2 + 0.5) * width)
                            ys.append(r["speedup_vs_fp32_aos"])
            label = f"{c[0]}/{c[1]} {c[2]}"
            ax.bar(xs, ys, width, label=label)
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels([f"{k}\n{p}" for k, p in groups], fontsize=8)
        ax.set_ylabel("speedup vs fp32/fp32 AOS")
        stream = doc["machine"].get("stream_triad_gbs")
        ax.set_title(f"{t} thread(s) — {doc['machine']['cpu']} — STREAM {stream:.1f} GB/s "
                     f"({doc['machine']['threads']} threads)")
        ax.legend(fontsize=7, ncol=4)
    fig.tight_layout()
    fig.savefig(dst, dpi=110)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
