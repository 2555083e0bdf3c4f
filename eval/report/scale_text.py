"""The scale benchmark's figures as text, with the issue's targets checked."""

from __future__ import annotations


def _targets(r: dict) -> dict[str, bool | None]:
    """Each target of issue 6: met, missed, or None when its section was not run."""
    bench, peer, vec = r.get("bench"), r.get("peer"), r.get("vectors")
    out: dict[str, bool | None] = {
        "cold qa ask <= 0.3x import sentence_transformers":
            bench["cold_qa_ask_ratio_to_import_st"] <= 0.3 if bench else None,
        "warm answer() p50 <= 5 ms": bench["warm_answer_ms"]["p50"] <= 5 if bench else None,
        "queries >= 2x faster than LangChain (search p50, every corpus)":
            all(p["speedup_p50"]["search"] >= 2 for p in peer.values()) if peer else None,
        "builds no slower than LangChain (every corpus)":
            all(p["build_s"]["ours/langchain"] <= 1 for p in peer.values()) if peer else None,
    }
    big = [s for s in vec["sizes"] if s["vectors"] >= 1_000_000] if vec else []
    if big:
        row = big[0]
        chosen = row[row["dense_type_chosen"]]
        setting = chosen.get("default") or chosen.get("chosen")  # what the index is built with
        p95 = setting["p95_ms"] if setting else chosen["p95_ms"]
        recall = setting["recall@10"] if setting else 1.0
        out["1M vectors: p95 < 50 ms, recall@10 >= 0.95, < 24 GB"] = (
            p95 < 50 and recall >= 0.95 and chosen["rss_delta_mb"] < 24 * 1024)
    return out


def summary(r: dict) -> str:
    """Every figure of a scale.json, one line each."""
    lines = [f"machine: {r['machine']['cores']} cores, load average {r['machine']['loadavg'][0]:.1f}"]
    if b := r.get("bench"):
        lines += [
            f"warm answer() p50 / p95      {b['warm_answer_ms']['p50']:7.1f} / "
            f"{b['warm_answer_ms']['p95']:.1f} ms"
            f"  ({b['warm_answer_ratio_to_raw_embedding']['p50']:.2f}x one SentenceTransformer.encode, "
            f"{b['raw_query_embedding_ms']['p50']:.1f} ms)",
            f"  of which the ONNX query embedding p50 {b['query_embedding_ms']['p50']:.1f} ms; "
            f"everything else {b['warm_answer_minus_embedding_p50_ms']:.1f} ms",
            f"cold `qa ask`                {b['cold_qa_ask_s']['median']:7.2f} s  = "
            f"{b['cold_qa_ask_ratio_to_import_st']:.2f}x `import sentence_transformers` "
            f"({b['import_sentence_transformers_s']:.2f} s)",
        ]
    if a := r.get("build"):
        lines += [
            f"build {a['passages']} RTQA passages (+{a['sentences']} sentences): {a['build_s']} s = "
            f"{a['passages_per_s']} passages/s = {a['share_of_raw_passage_rate']:.2f}x the raw encode rate "
            f"({a['raw_encode_passages_per_s']} passages/s); model time is "
            f"{a['raw_model_seconds_share_of_build']:.0%} of the build",
        ]
    if v := r.get("vectors"):
        lines.append(f"indexes ({v['real']} real vectors; beyond: {v.get('synthetic', 'noisy copies')}):")
        for row in v["sizes"]:
            f, h = row["flat"], row.get("ivf") or row["hnsw"]
            c = h.get("default") or h["chosen"]
            knob = f"nprobe {c['nprobe']}/{h['nlist']}" if "nprobe" in c else f"efSearch {c['efSearch']}"
            lines.append(
                f"  {row['vectors']:>9,} flat: build {f['build_s']:6.1f} s, "
                f"+{f['rss_delta_mb']:7.0f} MB RSS, "
                f"{f['disk_mb']:7.0f} MB disk, query p50/p95 {f['p50_ms']:.2f}/{f['p95_ms']:.2f} ms")
            lines.append(
                f"  {'':>9} {h.get('type', 'hnsw')}: build {h['build_s']:6.1f} s, "
                f"+{h['rss_delta_mb']:7.0f} MB RSS, "
                f"{h['disk_mb']:7.0f} MB disk, {knob}: recall@10 {c['recall@10']:.3f}, "
                f"p50/p95 {c['p50_ms']:.2f}/{c['p95_ms']:.2f} ms  (build uses {row['dense_type_chosen']})")
    for name, p in (r.get("peer") or {}).items():
        q = p["query_ms"]
        lines.append(
            f"vs LangChain ({name}: {p['chunks']} chunks, {p['questions']} questions): build "
            f"{p['build_s']['ours']} s vs {p['build_s']['langchain']} s = "
            f"{p['build_s']['ours/langchain']:.2f}x; "
            f"search p50 {q['ours_search']['p50_ms']:.1f} vs {q['langchain_search']['p50_ms']:.1f} ms = "
            f"{p['speedup_p50']['search']:.1f}x faster; full answer() p50 "
            f"{q['ours_answer']['p50_ms']:.1f} ms "
            f"= {p['speedup_p50']['answer']:.1f}x")
    lines.append("targets:")
    for name, ok in _targets(r).items():
        lines.append(f"  [{'met' if ok else 'MISSED' if ok is False else 'not run'}] {name}")
    return "\n".join(lines)
