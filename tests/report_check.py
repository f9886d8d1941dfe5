"""Checks a page `mfmt report` wrote (tests/check_cli.sh): well-formed (it
parses as XML), self-contained (no script, no link, no src/href/url() to
anything, no @import), the sections a reader looks for, one SVG bar per
layer and type, and the facts against other commands' outputs given as
arguments: parameters, the verdict, the sha256 of the file.

    python3 tests/report_check.py PAGE PARAMS VERDICT [SHA256]"""
import re
import sys
import xml.etree.ElementTree as ET

page, params, verdict = sys.argv[1], sys.argv[2], sys.argv[3]
sha = sys.argv[4] if len(sys.argv) > 4 else None
text = open(page, encoding="utf-8").read()
root = ET.fromstring(text)  # raises on a page that is not well-formed
SVG = "{http://www.w3.org/2000/svg}"
problems = []
for bad in (r"<script", r"<link", r"\bsrc=", r"\bhref=", r"url\(", r"@import", r"<iframe", r"<img"):
    if re.search(bad, text, re.I):
        problems.append(f"loads something from elsewhere: {bad}")
ids = {s.get("id") for s in root.iter("section")}
for want in ("summary", "types", "layers", "scan"):
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
for p in problems:
    print("FAIL", p)
sys.exit(1 if problems else 0)
