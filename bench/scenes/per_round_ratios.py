#!/usr/bin/env python3
"""Per-round ratios of a shared/peers/nvcloth/compare.sh run.

compare.sh alternates the implementations round by round and pools every sample of a cell into one
median. On a shared VM whose speed changes between phases, the pooled medians mostly say which phase
each implementation ran in; the ratio of the two medians *within* each round does not. This prints,
per scene and pass, the median (and range) over rounds of NvCloth's per-round median divided by
ours, for our default SIMD target and the two held targets.

usage: per_round_ratios.py WORK/results/timings.jsonl [reference impl, default nvcloth-clang]
"""
import collections
import json
import statistics
import sys


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    reference = sys.argv[2] if len(sys.argv) == 3 else "nvcloth-clang"
    # Lines are in run order: the n-th record of an (impl, scene, case) is from round n.
    seen = collections.Counter()
    medians = collections.defaultdict(dict)
    with open(sys.argv[1]) as f:
        for line in f:
            r = json.loads(line)
            if "ms" not in r:  # `vkcollide step` medians: no samples
                continue
            key = (r["impl"], r["scene"], r["case"])
            medians[key][seen[key]] = statistics.median(r["ms"])
            seen[key] += 1
    for scene in ("drape64", "drape255"):
        for case in ("shapes-discrete", "shapes-scene", "self"):
            base = medians.get((reference, scene, case))
            if not base:
                continue
            for impl in ("vkcollide-cpu", "vkcollide-cpu:AVX2", "vkcollide-cpu:SSE4"):
                ours = medians.get((impl, scene, case))
                if not ours:
                    continue
                ratios = [base[i] / ours[i] for i in base if i in ours]
                print(f"{scene} {case:16s} {impl:20s} per-round ratio median {statistics.median(ratios):.2f} "
                      f"min {min(ratios):.2f} max {max(ratios):.2f} (n={len(ratios)})")


if __name__ == "__main__":
    main()
