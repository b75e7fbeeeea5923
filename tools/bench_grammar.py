#!/usr/bin/env python3
"""Times the grammar engine's token masks on the real-world JSON Schema
corpus of tools/collect_schemas.py, for each vocabulary.

Runs `skiff grammar -m VOCAB --cases CORPUS --times` (one thread; pinned to
one CPU with --cpu) and prints, over all schemas and per category: the share
of schemas compiled and a histogram of the refusals, compile time p50/p90/max,
mask time per token mean/p50/p90/p99/max, the share of tokens jump-forward
would have appended, and the texts the engine rejected; then where the time
goes: per lexer situation (the schema feature of the key or value a token
starts in, or the one it starts before), masks of a schema's first text (its
lexer states visited for the first time) against its later texts, and the
slowest masks, schemas and compiles. With --warm every case's texts are fed
twice to the same compiled grammar and the second pass is reported apart
(every lexer state then seen before: what is left is the parser's share).

  $(scripts/setup-test-env.sh)/bin/python tools/collect_schemas.py
  python3 tools/bench_grammar.py [--cpu 1] [--json results.json]
"""
import argparse
import bisect
import collections
import json
import os
import re
import subprocess
import sys
from pathlib import Path

CACHE = Path(os.environ.get("SKIFF_SCHEMA_CORPUS", Path.home() / ".cache/skiff/schema-corpus"))
VOCABS = {
    "llama3": "ggml-vocab-llama-bpe.gguf",
    "qwen2.5": "ggml-vocab-qwen2.gguf",
}


def percentile(sorted_values, q):
    """skiff grammar's own: the nearest rank."""
    if not sorted_values:
        return 0.0
    i = int(q * (len(sorted_values) - 1) + 0.5)
    return sorted_values[min(i, len(sorted_values) - 1)]


def mask_stats(values):
    v = sorted(values)
    if not v:
        return {"count": 0}
    return {"count": len(v), "mean": sum(v) / len(v), "p50": percentile(v, 0.5), "p90": percentile(v, 0.9),
            "p99": percentile(v, 0.99), "max": v[-1], "total_ms": sum(v) / 1000}


def refusal_reason(error):
    """An error message with its paths and values left out."""
    m = re.match(r"JSON Schema: '([^']+)' (?:at \S+ )?(.*)", error)
    if m:
        key, rest = m.groups()
        if key == "$ref":
            rest = re.sub(r"^\S+ at \S+ ", "", rest)
            if "names no schema of this document" in error:
                return "$ref to another document"
            return f"$ref {rest[:60]}"
        if key == "pattern":
            return "pattern: " + re.sub(r"'.*", "", rest)[:60]
        if key in ("oneOf", "allOf"):
            return f"{key}: " + re.sub(r"\d+", "N", rest.split(":")[-1].strip())[:70]
        return f"{key}: " + re.sub(r"\d+", "N", rest)[:60]
    return re.sub(r"/\S*|\d+", "N", error)[:80]


def situation(spans, offset):
    """The lexer situation a mask at byte `offset` of the text is computed in:
    inside a key or value (its label), or before the next one."""
    i = bisect.bisect_right([s[0] for s in spans], offset) - 1  # the last span starting at or before offset
    if i >= 0 and spans[i][0] < offset < spans[i][1]:
        return spans[i][2]
    if i >= 0 and spans[i][0] == offset:
        return "before " + spans[i][2]
    return "before " + spans[i + 1][2] if i + 1 < len(spans) else "end"


def run_vocab(args, name, vocab_path, corpus_rows):
    out_path = Path(args.out_dir) / f"raw-{name}{'-warm' if args.warm else ''}.jsonl"
    corpus = args.corpus
    if args.warm:
        corpus = str(Path(args.out_dir) / "corpus-twice.jsonl")
        with open(corpus, "w", encoding="utf-8") as f:
            for row in corpus_rows:
                f.write(json.dumps({"json_schema": row["json_schema"], "texts": row["texts"] * 2}) + "\n")
    cmd = [args.skiff, "grammar", "-m", str(vocab_path), "--cases", corpus, "--times"]
    if args.cpu is not None:
        cmd = ["taskset", "-c", str(args.cpu)] + cmd
    if not args.reuse or not out_path.exists():
        print(f"# {name}: {' '.join(cmd)}", file=sys.stderr)
        with open(out_path, "w") as f:
            subprocess.run(cmd, stdout=f, check=True)
    lines = [json.loads(l) for l in open(out_path) if l.strip()]
    summary = lines[-1]["summary"]
    cases = lines[:-1]
    assert len(cases) == len(corpus_rows), (len(cases), len(corpus_rows))
    warm = []
    for case, row in zip(cases, corpus_rows):
        if "results" in case:
            n = len(row["texts"])
            warm += [us for r in case["results"][n:] for us in r["mask_us"]]
            case["results"] = case["results"][:n]
    if args.warm:
        summary = {"note": "skiff's summary covers both passes", **summary}
    return cases, summary, warm


def analyse(cases, rows, skiff_summary, worst, warm):
    rep = {"skiff_summary": skiff_summary, "warm": mask_stats(warm)}
    refusals = collections.Counter()
    per_cat = collections.defaultdict(lambda: {"schemas": 0, "compiled": 0, "with_texts": 0, "compile_us": [],
                                               "mask_us": [], "tokens": 0, "forced": 0, "texts": 0,
                                               "texts_accepted": 0, "refusals": collections.Counter()})
    by_situation = collections.defaultdict(list)
    by_situation_first = collections.defaultdict(list)
    first_text, later_texts = [], []
    all_masks = []          # (us, case index, text index, token index)
    rejected = []
    per_schema = []
    compiles = []
    for ci, (case, row) in enumerate(zip(cases, rows)):
        for key in (row["category"], "all"):
            per_cat[key]["schemas"] += 1
        if "error" in case:
            reason = refusal_reason(case["error"])
            refusals[reason] += 1
            per_cat[row["category"]]["refusals"][reason] += 1
            continue
        compiles.append({"id": row["id"], "category": row["category"], "schema_bytes": row["schema_bytes"],
                         "compile_us": case["compile_us"], "texts": len(row["texts"])})
        for key in (row["category"], "all"):
            c = per_cat[key]
            c["compiled"] += 1
            c["compile_us"].append(case["compile_us"])
            c["with_texts"] += bool(row["texts"])
        schema_masks = []
        for ti, result in enumerate(case["results"]):
            text = row["texts"][ti].encode("utf-8")
            spans = row["spans"][ti]
            offset = 0
            for k, (us, nbytes) in enumerate(zip(result["mask_us"], result["token_bytes"])):
                by_situation[situation(spans, offset)].append(us)
                if ti == 0:
                    by_situation_first[situation(spans, offset)].append(us)
                (first_text if ti == 0 else later_texts).append(us)
                all_masks.append((us, ci, ti, k, offset, nbytes))
                schema_masks.append(us)
                offset += nbytes
            for key in (row["category"], "all"):
                c = per_cat[key]
                c["mask_us"].extend(result["mask_us"])
                c["tokens"] += len(result["mask_us"])
                c["forced"] += result.get("tokens_forced", 0)
                c["texts"] += 1
                c["texts_accepted"] += result["accepted"]
            if not result["accepted"]:
                at = result["rejected_at"]
                cut = sum(result["token_bytes"][:at]) if at is not None else len(text)
                piece = text[cut:cut + result["token_bytes"][at]] if at is not None else b""
                rejected.append({"id": row["id"], "text": ti, "rejected_at": at,
                                 "before": text[max(0, cut - 60):cut].decode("utf-8", "replace"),
                                 "token": piece.decode("utf-8", "replace"),
                                 "situation": situation(spans, cut) if at is not None else "incomplete"})
        if schema_masks:
            s = mask_stats(schema_masks)
            per_schema.append({"id": row["id"], "category": row["category"], "schema_bytes": row["schema_bytes"],
                               "compile_us": case["compile_us"], **s})
    rep["refusals"] = refusals.most_common()
    rep["categories"] = {}
    for key, c in sorted(per_cat.items(), key=lambda kv: (kv[0] != "all", kv[0])):
        rep["categories"][key] = {
            "schemas": c["schemas"], "compiled": c["compiled"], "with_texts": c["with_texts"],
            "compile_us": {"p50": percentile(sorted(c["compile_us"]), 0.5),
                           "p90": percentile(sorted(c["compile_us"]), 0.9),
                           "max": max(c["compile_us"], default=0)},
            "mask_us": mask_stats(c["mask_us"]),
            "jump_forward_share": c["forced"] / c["tokens"] if c["tokens"] else 0,
            "texts": c["texts"], "texts_accepted": c["texts_accepted"],
            "refusals": c["refusals"].most_common(),
        }
    rep["first_text"] = mask_stats(first_text)
    rep["later_texts"] = mask_stats(later_texts)
    total = sum(us for us, *_ in all_masks) or 1
    rep["situations"] = sorted(({"situation": k, **mask_stats(v), "time_share": sum(v) / total,
                                 "first_text": mask_stats(by_situation_first[k])}
                                for k, v in by_situation.items()), key=lambda d: -d["total_ms"])
    all_masks.sort(reverse=True)
    rep["slowest_masks"] = []
    for us, ci, ti, k, offset, nbytes in all_masks[:worst]:
        text = rows[ci]["texts"][ti].encode("utf-8")
        rep["slowest_masks"].append({
            "mask_us": us, "id": rows[ci]["id"], "category": rows[ci]["category"], "text": ti, "token": k,
            "situation": situation(rows[ci]["spans"][ti], offset),
            "before": text[max(0, offset - 50):offset].decode("utf-8", "replace"),
            "next_token": text[offset:offset + nbytes].decode("utf-8", "replace")})
    over = lambda limit: sum(1 for m in all_masks if m[0] > limit)
    rep["masks_over"] = {"1ms": over(1000), "10ms": over(10000), "count": len(all_masks)}
    rep["slowest_schemas_by_max"] = sorted(per_schema, key=lambda s: -s["max"])[:worst]
    rep["slowest_schemas_by_mean"] = sorted(per_schema, key=lambda s: -s["mean"])[:worst]
    rep["slowest_compiles"] = sorted(compiles, key=lambda s: -s["compile_us"])[:worst]
    rep["rejected_texts"] = rejected
    return rep


def fmt_stats(s):
    if not s.get("count"):
        return "no masks"
    return (f"mean {s['mean']:.1f}  p50 {s['p50']:.1f}  p90 {s['p90']:.1f}  p99 {s['p99']:.1f}  "
            f"max {s['max']:.0f}  (n={s['count']})")


def print_report(name, rep, worst):
    print(f"\n=== {name} ===")
    print(f"skiff's own summary: {json.dumps(rep['skiff_summary'])}")
    print("\ncategory           schemas compiled  texts ok     compile p50/p90/max ms   mask us: mean  p50  p90   p99     max   jump-fwd")
    for key, c in rep["categories"].items():
        m = c["mask_us"]
        ms = (f"{m['mean']:7.1f} {m['p50']:5.1f} {m['p90']:5.1f} {m['p99']:6.0f} {m['max']:8.0f}"
              if m.get("count") else "      -")
        cu = c["compile_us"]
        print(f"{key:18s} {c['schemas']:6d} {c['compiled']:4d} {100 * c['compiled'] / c['schemas']:4.0f}%  "
              f"{c['texts_accepted']:4d}/{c['texts']:<4d}  {cu['p50'] / 1000:6.2f} {cu['p90'] / 1000:6.2f} "
              f"{cu['max'] / 1000:8.1f}   {ms}   {c['jump_forward_share']:.3f}")
    print("\nrefusals:")
    for reason, n in rep["refusals"]:
        print(f"  {n:4d}  {reason}")
    print(f"\nfirst text of each schema: {fmt_stats(rep['first_text'])}")
    print(f"later texts:               {fmt_stats(rep['later_texts'])}")
    if rep["warm"].get("count"):
        print(f"warm (second pass):        {fmt_stats(rep['warm'])}")
    mo = rep["masks_over"]
    print(f"masks over 1 ms: {mo['1ms']} of {mo['count']}, over 10 ms: {mo['10ms']}")
    print("\nby lexer situation (share of all mask time; p99 in schemas' first texts):")
    for s in rep["situations"][:25]:
        first = s["first_text"]
        print(f"  {s['situation']:30s} {100 * s['time_share']:5.1f}%  {fmt_stats(s)}"
              + (f"  first-text p99 {first['p99']:.0f}" if first.get("count") else ""))
    print(f"\n{worst} slowest masks:")
    for m in rep["slowest_masks"]:
        print(f"  {m['mask_us'] / 1000:8.2f} ms  {m['id'][:60]:60s} text {m['text']} tok {m['token']:3d}  "
              f"{m['situation']}: ...{m['before'][-40:]!r} | {m['next_token']!r}")
    print(f"\n{worst} schemas with the slowest mask:")
    for s in rep["slowest_schemas_by_max"]:
        print(f"  max {s['max'] / 1000:8.2f} ms  mean {s['mean']:8.1f} us  compile {s['compile_us'] / 1000:7.2f} ms  "
              f"{s['schema_bytes']:7d} B  {s['category']:16s} {s['id']}")
    print(f"\n{worst} schemas with the slowest mean mask:")
    for s in rep["slowest_schemas_by_mean"]:
        print(f"  mean {s['mean']:8.1f} us  p99 {s['p99']:8.1f} us  {s['schema_bytes']:7d} B  {s['category']:16s} {s['id']}")
    print(f"\n{worst} slowest compiles:")
    for s in rep["slowest_compiles"]:
        print(f"  {s['compile_us'] / 1000:8.2f} ms  {s['schema_bytes']:7d} B  {s['category']:16s} {s['id']}"
              + ("" if s["texts"] else "  (no instances)"))
    if rep["rejected_texts"]:
        print(f"\ntexts rejected ({len(rep['rejected_texts'])}):")
        for r in rep["rejected_texts"][:40]:
            print(f"  {r['id'][:60]} text {r['text']} at token {r['rejected_at']} ({r['situation']}): "
                  f"...{r['before'][-50:]!r} | {r['token']!r}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    root = Path(__file__).resolve().parent.parent
    ap.add_argument("--corpus", default=str(CACHE / "corpus.jsonl"))
    ap.add_argument("--skiff", default=str(root / "build/skiff"))
    ap.add_argument("--vocab-dir", default=str(root.parent / "shared/models/vocab"))
    ap.add_argument("--vocabs", default=",".join(VOCABS), help="comma-separated: " + ", ".join(VOCABS))
    ap.add_argument("--cpu", type=int, help="pin skiff to this CPU (taskset)")
    ap.add_argument("--out-dir", default=str(CACHE / "results"))
    ap.add_argument("--reuse", action="store_true", help="analyse the raw outputs of the last run again")
    ap.add_argument("--warm", action="store_true", help="feed every case's texts twice; report the second pass apart")
    ap.add_argument("--worst", type=int, default=15)
    ap.add_argument("--json", help="write the figures here as JSON")
    args = ap.parse_args()
    Path(args.out_dir).mkdir(parents=True, exist_ok=True)
    rows = [json.loads(l) for l in open(args.corpus, encoding="utf-8") if l.strip()]
    cats = collections.Counter(r["category"] for r in rows)
    print(f"corpus: {len(rows)} schemas, {sum(bool(r['texts']) for r in rows)} with instances, "
          f"{sum(len(r['texts']) for r in rows)} texts; " + ", ".join(f"{k} {v}" for k, v in sorted(cats.items())))
    reports = {}
    for name in args.vocabs.split(","):
        cases, summary, warm = run_vocab(args, name, Path(args.vocab_dir) / VOCABS[name], rows)
        reports[name] = analyse(cases, rows, summary, args.worst, warm)
        print_report(name, reports[name], args.worst)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(reports, f, indent=1)


if __name__ == "__main__":
    main()
