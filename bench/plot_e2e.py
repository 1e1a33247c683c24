#!/usr/bin/env python3
"""Figures of `mpmg bench e2e`, like Figures 6 and 8/9 of the ICPP'24 paper.

usage: plot_e2e.py e2e.json e2e_residuals.png e2e_times.png

e2e_residuals.png: one panel per problem, relative residual ||r_k||/||b|| against the iteration
for every configuration (the ablation variants included; a rebuild of the runtime guard shows
as a kink where the curve continues in the wider precision).
e2e_times.png: per problem, bars of Full64, K64P32D32, K64P32D16 and auto, normalised to the
Full64 total and split into setup / preconditioner / other; iteration counts on top, the
preconditioner speedup over Full64 inside the preconditioner part.
"""
import json
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STYLE = {
    "Full64": dict(color="k", ls="-", marker="o"),
    "K64P32D32": dict(color="tab:blue", ls="--", marker="s"),
    "K64P32D16": dict(color="tab:red", ls="-", marker="^"),
    "K64P32D16-none": dict(color="gold", ls=":", marker="x"),
    "K64P32D16-scale-setup": dict(color="tab:green", ls="-.", marker="v"),
    "auto": dict(color="tab:purple", ls="--", marker="d"),
}
BARS = ["Full64", "K64P32D32", "K64P32D16", "auto"]


def problems_of(rows):
    out = []
    for r in rows:
        if r["problem"] not in out:
            out.append(r["problem"])
    return out


def residuals(doc, dst):
    rows = doc["rows"]
    probs = problems_of(rows)
    cols = min(4, len(probs))
    nrows = math.ceil(len(probs) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(4.2 * cols, 3.4 * nrows), squeeze=False)
    for ax in axes.flat[len(probs):]:
        ax.axis("off")
    for ax, p in zip(axes.flat, probs):
        n = None
        for r in rows:
            if r["problem"] != p:
                continue
            n = r["n"]
            h = [v if v is not None and v > 0 else float("nan") for v in r["residual_history"]]
            if not h:
                continue
            lab = r["label"]
            tag = "" if r["converged"] else " (not conv.)"
            if r.get("guard_events"):
                tag += f" ({len(r['guard_events'])} guard rebuild)"
            st = STYLE.get(lab, {})
            ax.semilogy(range(len(h)), h, label=lab + tag, markersize=3, lw=1.2,
                        markevery=max(1, len(h) // 12), **st)
        ax.axhline(1e-10, color="gray", lw=0.6, ls=":")
        ax.set_title(f"{p} (n={n})", fontsize=10)
        ax.set_xlabel("iteration", fontsize=8)
        ax.set_ylabel("||r||/||b||", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=6)
    m = doc["machine"]
    fig.suptitle(f"Relative residual per iteration — {m['cpu']}, {m['threads']} thread(s)",
                 fontsize=11)
    fig.tight_layout()
    fig.savefig(dst, dpi=100)


def times(doc, dst):
    rows = doc["rows"]
    probs = problems_of(rows)
    fig, ax = plt.subplots(figsize=(max(8, 2.0 * len(probs)), 5))
    width = 0.8 / len(BARS)
    labelled = False
    ticks, ticklabels, top = [], [], 1.0
    for pi, p in enumerate(probs):
        by = {r["label"]: r for r in rows if r["problem"] == p}
        base = by.get("Full64")
        if not base or base["total_s"] is None:
            continue
        norm = base["total_s"]
        for bi, lab in enumerate(BARS):
            r = by.get(lab)
            if not r or r["total_s"] is None:
                continue
            x = pi + (bi - len(BARS) / 2 + 0.5) * width
            s, q, o = (r["setup_s"] / norm, r["preconditioner_s"] / norm, r["other_s"] / norm)
            ax.bar(x, s, width, color="tab:blue", edgecolor="k", lw=0.4,
                   label=None if labelled else "setup")
            ax.bar(x, q, width, bottom=s, color="tab:orange", edgecolor="k", lw=0.4,
                   label=None if labelled else "MG preconditioner")
            ax.bar(x, o, width, bottom=s + q, color="tab:gray", edgecolor="k", lw=0.4,
                   label=None if labelled else "other")
            labelled = True
            top = max(top, s + q + o)
            its = r["iterations"]
            ax.text(x, s + q + o + 0.01, f"{its}" + ("" if r["converged"] else "!"),
                    ha="center", va="bottom", fontsize=7)
            ticks.append(x)
            ticklabels.append(lab.replace("K64", "").replace("Full64", "F64"))
            sp = r.get("preconditioner_speedup")
            if lab != "Full64" and sp is not None and q > 0.06:
                ax.text(x, s + q / 2, f"{sp:.1f}x", rotation=90, ha="center", va="center",
                        fontsize=7)
    ax.set_xticks(ticks)
    ax.set_xticklabels(ticklabels, rotation=90, fontsize=7)
    for pi, p in enumerate(probs):
        ax.text(pi, -0.16, p, transform=ax.get_xaxis_transform(), ha="center", va="top",
                fontsize=9)
    ax.set_ylabel("time / Full64 total")
    m = doc["machine"]
    ax.set_title("End-to-end time normalised to Full64 (bars F64, P32D32, P32D16, auto)\n"
                 "on top: iterations ('!' not converged); inside: preconditioner speedup\n"
                 f"{m['cpu']}, {m['threads']} thread(s), STREAM {m['stream_triad_gbs']:.1f} GB/s",
                 fontsize=9)
    ax.legend(fontsize=8, loc="upper left", ncol=3)
    ax.set_ylim(0, top * 1.18)
    fig.tight_layout()
    fig.savefig(dst, dpi=100)


def main(src, dst_res, dst_times):
    with open(src) as f:
        doc = json.load(f)
    residuals(doc, dst_res)
    times(doc, dst_times)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
