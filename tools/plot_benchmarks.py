"""Draws docs/benchmarks.md's figure: skiff against llama.cpp in tokens/s, prefill
(pp512) and decode (tg128) side by side, one row of panels per machine type, from
the committed table docs/benchmarks/figures.csv (one line per machine, model and
test; a new machine's lines add a row of panels).

    python tools/plot_benchmarks.py [docs/benchmarks/figures.csv [docs/benchmarks/skiff-vs-llama-cpp.png]]

Runs in the venv of scripts/setup-test-env.sh (matplotlib).
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TESTS = (("pp512", "prefill, pp512"), ("tg128", "decode, tg128"))


def main(csv_path="docs/benchmarks/figures.csv", png="docs/benchmarks/skiff-vs-llama-cpp.png"):
    rows = list(csv.DictReader(open(csv_path)))
    machines = list(dict.fromkeys(r["machine"] for r in rows))
    fig, axes = plt.subplots(len(machines), len(TESTS), figsize=(12, 3.8 * len(machines)), squeeze=False)
    for m, machine in enumerate(machines):
        of_machine = [r for r in rows if r["machine"] == machine]
        header = of_machine[0]
        models = list(dict.fromkeys(r["model"] for r in of_machine))
        for t, (test, title) in enumerate(TESTS):
            ax = axes[m][t]
            by_model = {r["model"]: r for r in of_machine if r["test"] == test}
            xs = range(len(models))
            skiff = [float(by_model[name]["skiff_tok_s"]) for name in models]
            llama = [float(by_model[name]["llama_cpp_tok_s"]) for name in models]
            width = 0.38
            ax.bar([x - width / 2 for x in xs], skiff, width, label=f"skiff {header['skiff_commit']}", color="#2b6cb0")
            ax.bar([x + width / 2 for x in xs], llama, width, label="llama.cpp", color="#a0aec0")
            for x, s, ll in zip(xs, skiff, llama):
                ax.annotate(f"{s / ll:.2f}x", (x - width / 2, s), ha="center", va="bottom", fontsize=9,
                            xytext=(0, 2), textcoords="offset points")
            ax.set_xticks(list(xs), [name.replace(" Q4_K_M", "") for name in models], fontsize=9)
            ax.set_ylabel("tokens/s")
            ax.set_ylim(0, max(skiff + llama) * 1.15)
            ax.set_title(f"{machine}, {header['date']}: {title}", fontsize=10)
            ax.grid(axis="y", alpha=0.3)
            ax.legend(fontsize=8, loc="upper left")
    fig.suptitle("skiff against llama.cpp, Q4_K_M files, 2 threads (bars: tokens/s; label: skiff / llama.cpp)",
                 fontsize=11)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main(*sys.argv[1:])
