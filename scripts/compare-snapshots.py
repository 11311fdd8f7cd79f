#!/usr/bin/env python3
"""Compares two scripts/snapshot-reports.sh folders metric by metric: prints, per report, the keys that changed by
more than --tolerance (relative) and the largest relative change. A development aid; nothing at run time uses it."""
import json, os, sys

def load(path):
    text = open(path).read()
    if text.startswith('exit'):
        return {'__error__': text.strip()}
    # snapshot-reports strips trailing commas line by line; restore them for the JSON parser
    lines = [l for l in text.splitlines()]
    fixed = []
    for i, l in enumerate(lines):
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ''
        if l.strip() and not l.strip().endswith(('{', '[')) and nxt and not nxt.startswith(('}', ']')):
            l += ','
        fixed.append(l)
    return json.loads('\n'.join(fixed))

def flat(d, prefix=''):
    out = {}
    for k, v in d.items():
        key = prefix + k
        if isinstance(v, dict):
            out.update(flat(v, key + '.'))
        else:
            out[key] = v
    return out

def main():
    a_dir, b_dir = sys.argv[1], sys.argv[2]
    tol = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
    for name in sorted(set(os.listdir(a_dir)) | set(os.listdir(b_dir))):
        pa, pb = os.path.join(a_dir, name), os.path.join(b_dir, name)
        if not (os.path.exists(pa) and os.path.exists(pb)):
            print(f'{name}: only in one snapshot'); continue
        a, b = flat(load(pa)), flat(load(pb))
        changes, worst = [], 0.0
        for k in sorted(set(a) | set(b)):
            va, vb = a.get(k), b.get(k)
            if isinstance(va, (int, float)) and isinstance(vb, (int, float)) and not isinstance(va, bool):
                rel = abs(va - vb) / max(abs(va), 1e-300) if va != vb else 0.0
                worst = max(worst, rel)
                if rel > tol:
                    changes.append(f'{k}: {va:.6g} -> {vb:.6g} ({rel:+.2e})' if va else f'{k}: {va} -> {vb}')
            elif va != vb:
                changes.append(f'{k}: {va} -> {vb}')
        if changes:
            print(f'{name}: max relative change {worst:.2e}')
            for c in changes:
                print('   ', c)
main()
