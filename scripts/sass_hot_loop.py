#!/usr/bin/env python3
"""Counts one kernel's SASS in a cubin: the whole function's instruction
mix, and the hot loop of a one-barrier-a-k-block GEMM (from the loop's
BAR.SYNC to its last HMMA), as benches/NOTES.md records them.

    scripts/sass_hot_loop.py CUBIN FUNCTION [--cuobjdump PATH]

FUNCTION is a substring of the mangled name. cuobjdump comes from
.tools/nvcc13 (PyPI's nvidia-cuda-cuobjdump) unless given."""
import argparse, collections, os, re, subprocess, sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
p = argparse.ArgumentParser()
p.add_argument("cubin")
p.add_argument("function")
p.add_argument("--cuobjdump", default=os.path.join(root, ".tools/nvcc13/nvidia/cu13/bin/cuobjdump"))
args = p.parse_args()

sass = subprocess.run([args.cuobjdump, "-sass", args.cubin], check=True, capture_output=True, text=True).stdout
res = subprocess.run([args.cuobjdump, "-res-usage", args.cubin], check=True, capture_output=True, text=True).stdout

# The function's body: from its "Function : NAME" header to the next.
body, inside = [], False
for line in sass.splitlines():
    if "Function :" in line:
        inside = args.function in line
        continue
    if inside:
        body.append(line)
if not body:
    sys.exit(f"no function matching {args.function!r} in {args.cubin}")
ins, addrs, texts = [], [], []
for line in body:
    m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", line)
    if m:
        addrs.append(int(m.group(1), 16))
        ins.append(m.group(3))
        texts.append(line)
ops = lambda seq: collections.Counter(i.split(".")[0] for i in seq)

usage = [l for l in res.splitlines() if args.function in l]
for i, l in enumerate(res.splitlines()):
    if args.function in l:
        print(res.splitlines()[i + 1].strip())
        break
whole = ops(ins)
print("whole function:", len(ins), "instructions;",
      ", ".join(f"{k} {whole[k]}" for k in ["HMMA", "LDSM", "LDGSTS", "LDGDEPBAR", "BAR", "VOTE", "STG", "STS", "STL", "LDL", "ISETP", "BRA"]))
if any(op.startswith("HGMMA") for op in ins):
    # A wgmma kernel: the loop around the last HGMMA, from its back edge's
    # target to the back edge (the first backward branch after it).
    last = max(i for i, op in enumerate(ins) if op.startswith("HGMMA"))
    for i in range(last, len(ins)):
        t = re.search(r"BRA\s+(?:!?U?P\w+,\s*)?0x([0-9a-f]+)", texts[i]) if ins[i] == "BRA" else None
        if t and int(t.group(1), 16) < addrs[i]:
            start = addrs.index(int(t.group(1), 16))
            loop = ops(ins[start:i + 1])
            print("hot loop (back edge's target to the back edge):", i + 1 - start, "instructions;",
                  ", ".join(f"{k} {v}" for k, v in loop.most_common()))
            break
    sys.exit(0)
# The hot loop: the last BAR.SYNC before the last HMMA, to that HMMA.
last_hmma = max(i for i, op in enumerate(ins) if op.startswith("HMMA"))
bar = max(i for i, op in enumerate(ins[:last_hmma]) if op.startswith("BAR.SYNC"))
loop = ops(ins[bar:last_hmma + 1])
print("hot loop (BAR.SYNC to last HMMA):", last_hmma + 1 - bar, "instructions;",
      ", ".join(f"{k} {v}" for k, v in loop.most_common()))
