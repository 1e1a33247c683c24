#!/usr/bin/env python3
"""Bar chart of `mpmg bench vs-hypre`.

usage: plot_vs_hypre.py vs-hypre.json vs-hypre.png

One panel per problem at its largest size: total time of every hypre solver and every mpmg
configuration (1 thread, as hypre; and with T threads, hatched), split into setup and solve,
with the iterations on top ('!' not converged, 'skipped' when not run) and the speedup over the
fastest hypre solver inside the bar.
"""
import json
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def largest_rows(rows):
    out = {}
    for r in rows:
        p = r["problem"]
        if p not in out or r["n"] > out[p][0]:
            out[p] = (r["n"], [])
    for r in rows:
        if r["n"] == out[r["problem"]][0]:
            out[r["problem"]][1].append(r)
    return out


def label(r):
    s = r["solver"].replace("hypre ", "").replace("mpmg ", "mpmg\n")
    if r["package"] == "mpmg":
        s += f"\n{r['threads']} thr"
    return s


def main(src, dst):
    with open(src) as f:
        doc = json.load(f)
    groups = largest_rows(doc["rows"])
    probs = list(groups)
    cols = min(2, len(probs))
    nrows = math.ceil(len(probs) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(8.5 * cols, 4.6 * nrows), squeeze=False)
    for ax in axes.flat[len(probs):]:
        ax.axis("off")
    for ax, p in zip(axes.flat, probs):
        n, rows = groups[p]
        top, labelled = 0.0, set()
        for i, r in enumerate(rows):
            hyp = r["package"] == "hypre"
            hatch = "//" if (not hyp and r["threads"] > 1) else None
            if r["total_s"] is None:
                ax.text(i, 0, "skipped" if r["status"] == "skipped" else "error", rotation=90,
                        ha="center", va="bottom", fontsize=7)
                continue
            s, v = r["setup_s"], r["solve_s"]
            pkg = r["package"]
            first = pkg not in labelled and hatch is None
            ax.bar(i, s, 0.7, color="tab:gray" if hyp else "tab:blue", edgecolor="k", lw=0.4,
                   hatch=hatch, label=f"{pkg} setup" if first else None)
            ax.bar(i, v, 0.7, bottom=s, color="silver" if hyp else "tab:orange", edgecolor="k",
                   lw=0.4, hatch=hatch, label=f"{pkg} solve" if first else None)
            if first:
                labelled.add(pkg)
            top = max(top, s + v)
            its = f"{r['iterations']}" + ("" if r["converged"] else "!")
            ax.text(i, s + v, its, ha="center", va="bottom", fontsize=7)
            sp = r.get("speedup_vs_fastest_hypre")
            if sp is not None:
                ax.text(i, (s + v) / 2, f"{sp:.2f}x", rotation=90, ha="center", va="center",
                        fontsize=7)
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels([label(r) for r in rows], rotation=90, fontsize=7)
        ax.set_ylabel("seconds")
        ax.set_ylim(0, top * 1.15 if top > 0 else 1)
        ax.set_title(f"{p}, n={n} ({n}^3 cells)", fontsize=10)
        ax.legend(fontsize=7, loc="upper right")
    m = doc["machine"]
    fig.suptitle(
        f"mpmg vs hypre {m['hypre_version']} (hypre serial; mpmg 1 thread, hatched: "
        f"{m['threads']} threads), rtol {doc['rtol']:g}; inside: speedup over the fastest hypre "
        f"solver; on top: iterations\n{m['cpu']}, STREAM {m['stream_triad_gbs_1thread']:.1f} "
        f"GB/s (1 thread)", fontsize=10)
    fig.tight_layout()
    fig.savefig(dst, dpi=100)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])
