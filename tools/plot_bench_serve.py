"""Draws `skiff bench-serve --plot`: TTFT and TPOT (mean, median, p99) against
the number of concurrent clients, from the JSON list bench-serve writes.

    python tools/plot_bench_serve.py results.json plot.png
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(results_path, png):
    runs = sorted(json.load(open(results_path)), key=lambda r: r["max_concurrency"])
    x = [r["max_concurrency"] or r["completed"] for r in runs]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    for ax, key, title in zip(axes, ("ttft", "tpot"), ("time to first token", "time per output token")):
        for stat, style in (("mean_ms", "o-"), ("median_ms", "s--"), ("p99_ms", "^:")):
            ax.plot(x, [r[key][stat] for r in runs], style, label=stat.replace("_ms", ""))
        ax.set(title=title, xlabel="concurrent clients", ylabel="ms", xscale="log")
        ax.legend()
        ax.grid(alpha=0.3)
    axes[2].plot(x, [r["output_throughput"] for r in runs], "o-")
    axes[2].set(title="output throughput", xlabel="concurrent clients", ylabel="tok/s", xscale="log")
    axes[2].grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(png, dpi=120)


if __name__ == "__main__":
    main(*sys.argv[1:3])
