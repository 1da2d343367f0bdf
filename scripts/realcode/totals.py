#!/usr/bin/env python3
"""Totals over the held-out sets of one sweep (scripts/realcode/sweep.sh):
findings judged TRUE and FALSE (labels, or the set's triage where it has no
labels), unlabeled findings, and recall over the HAZARD labels, in the unit
and over all labels (cross-file included), one line per set and a sum.

    python3 scripts/realcode/totals.py PREFIX     # reads /tmp/PREFIX-<set>.json
"""

import glob
import io
import json
import os
import re
import subprocess
import sys
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run  # noqa: E402


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: totals.py PREFIX")
    prefix = sys.argv[1]
    sets = sorted((os.path.basename(p)[:-4] for p in glob.glob(os.path.join(HERE, "holdout*.txt"))
                   if not p.endswith(("-labels.txt", "-triage.txt"))),
                  key=lambda n: int(re.sub(r"\D", "", n) or 1))
    sums = [0] * 7
    for name in sets:
        results = f"/tmp/{prefix}-{name}.json"
        if not os.path.exists(results):
            print(f"{name:10} no results ({results})")
            continue
        labels = os.path.join(HERE, f"{name}-labels.txt")
        triage = os.path.join(HERE, f"{name}-triage.txt")
        row = [0] * 7
        if os.path.exists(labels):
            cmd = [sys.executable, os.path.join(HERE, "score_labels.py"), "--results", results,
                   "--labels", labels]
            if os.path.exists(triage):
                cmd += ["--adjudicated", triage]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
            m = re.search(r"findings: (\d+) \(TRUE (\d+), FALSE (\d+), unlabeled (\d+)\)", out)
            row[0:4] = [int(g) for g in m.groups()]
            m = re.search(r"in-TU HAZARD labels: (\d+)/(\d+)", out)
            if m:
                row[4], row[5] = int(m.group(1)), int(m.group(2))
            m = re.search(r"all HAZARD labels \(cross-file included\): (\d+)/(\d+)", out)
            if m:
                row[6] = int(m.group(1))
                row.append(int(m.group(2)))
        elif os.path.exists(triage):
            with open(results) as f:
                with redirect_stdout(io.StringIO()):
                    r = run.score(json.load(f), triage)
            row[0:4] = [r["findings"], r["true"], r["false"], r["unlabeled"]]
        if len(row) == 7:
            row.append(0)
        print(f"{name:10} findings {row[0]:3}  TRUE {row[1]:3}  FALSE {row[2]:2}  unlabeled {row[3]:2}"
              f"  in-unit recall {row[4]:3}/{row[5]:3}  all labels {row[6]:3}/{row[7]:3}")
        sums = [a + b for a, b in zip(sums + [0] * (len(row) - len(sums)), row)]
    t, f = sums[1], sums[2]
    print(f"{'all':10} findings {sums[0]:3}  TRUE {t:3}  FALSE {f:2}  unlabeled {sums[3]:2}"
          f"  in-unit recall {sums[4]:3}/{sums[5]:3}  all labels {sums[6]:3}/{sums[7]:3}"
          + (f"  precision {t / (t + f):.3f}" if t + f else ""))


if __name__ == "__main__":
    main()
