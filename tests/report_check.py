"""Checks a page `mfmt report` wrote (tests/check_cli.sh): well-formed (it
parses as XML), self-contained (no script, no link, no src/href/url() to
anything, no @import), the sections a reader looks for, one SVG bar per
layer and type, and the facts against other commands' outputs given as
arguments: parameters, the verdict, the sha256 of the file. With
--estimate MFMT MODEL, each cell of the memory table (bytes of the KV cache
and of the total, per context length and KV type) must equal what
`mfmt estimate --json --ctx N --kv-type T MODEL` says, and the table must
hold 4096, 32768, 131072 and the model's context length.

    python3 tests/report_check.py PAGE PARAMS VERDICT [SHA256] [--estimate MFMT MODEL]"""
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

args = sys.argv[1:]
estimate = None
if "--estimate" in args:
    i = args.index("--estimate")
    estimate, args = args[i + 1:i + 3], args[:i] + args[i + 3:]
page, params, verdict = args[0], args[1], args[2]
sha = args[3] if len(args) > 3 else None
text = open(page, encoding="utf-8").read()
root = ET.fromstring(text)  # raises on a page that is not well-formed
SVG = "{http://www.w3.org/2000/svg}"
problems = []
for bad in (r"<script", r"<link", r"\bsrc=", r"\bhref=", r"url\(", r"@import", r"<iframe", r"<img"):
    if re.search(bad, text, re.I):
        problems.append(f"loads something from elsewhere: {bad}")
ids = {s.get("id") for s in root.iter("section")}
for want in ("summary", "types", "layers", "memory", "scan"):
    if want not in ids:
        problems.append(f"no section {want}")
cells = {tr.find("th").text: tr.find("td").text for tr in root.iter("tr") if tr.find("th") is not None
         and tr.find("td") is not None}
if cells.get("parameters") != params:
    problems.append(f"parameters {cells.get('parameters')} != {params}")
if cells.get("scan verdict") != verdict:
    problems.append(f"verdict {cells.get('scan verdict')} != {verdict}")
if sha and cells.get("sha256 (file)") != sha:
    problems.append(f"sha256 {cells.get('sha256 (file)')} != {sha}")
layers = [s for s in root.iter("section") if s.get("id") == "layers"]
if layers and int(params) > 0:
    bars = [r for r in layers[0].iter(SVG + "rect") if r.find(SVG + "title") is not None]
    labels = [t.text for t in layers[0].iter(SVG + "text") if t.get("text-anchor") == "end"]
    if not bars or not labels:
        problems.append("no per-layer bars")
if estimate:
    mfmt, model = estimate
    mem = [s for s in root.iter("section") if s.get("id") == "memory"]
    rows = [tr for tr in mem[0].iter("tr") if tr.get("data-ctx")] if mem else []
    ctxs = [int(tr.get("data-ctx")) for tr in rows]
    ctx_train = None
    for ctx, tr in zip(ctxs, rows):
        cells = [int(td.get("data-bytes")) for td in tr.findall("td") if td.get("data-bytes")]
        for k, kv in enumerate(("f16", "q8_0")):
            e = json.loads(subprocess.run([mfmt, "estimate", "--json", "--ctx", str(ctx), "--kv-type", kv, model],
                                          capture_output=True, text=True, check=True).stdout)
            ctx_train = e["ctx_train"]
            if cells[2 * k:2 * k + 2] != [e["kv_bytes"], e["total_bytes"]]:
                problems.append(f"memory at ctx {ctx}, KV {kv}: page {cells[2 * k:2 * k + 2]}, "
                                f"estimate {[e['kv_bytes'], e['total_bytes']]}")
    if sorted(set([4096, 32768, 131072, ctx_train])) != ctxs:
        problems.append(f"memory table contexts {ctxs} (model's context {ctx_train})")
    bars = [r for r in mem[0].iter(SVG + "rect") if r.find(SVG + "title") is not None] if mem else []
    if len(bars) != 2 * 2 * len(rows):
        problems.append(f"memory bars: {len(bars)} for {len(rows)} contexts x 2 KV types")
for p in problems:
    print("FAIL", p)
sys.exit(1 if problems else 0)
