#!/usr/bin/env python3
"""yaml_ref.py CARD: the model card's YAML front matter as PyYAML's safe_load
reads it, as compact JSON with sorted keys (or "ERR <exception>"); the
reference tests/test_hf.c compares mf_hf_front_matter with."""
import sys, yaml, json, re
# Bytes first: a card without front matter is {} whatever the rest holds
# (a README may carry bytes that are not UTF-8 after its text); only the
# front matter itself must decode.
raw=open(sys.argv[1],'rb').read()
lines=raw.splitlines(keepends=True)
if not lines or lines[0].rstrip(b'\r\n')!=b'---': print('{}'); sys.exit()
body=[]
for l in lines[1:]:
    if l.rstrip(b'\r\n')==b'---': break
    body.append(l)
try:
    d=yaml.safe_load(b''.join(body).decode('utf-8'))
except Exception as e:
    print('ERR', type(e).__name__); sys.exit()
if d is None: d={}
def conv(x):
    if isinstance(x,dict): return {str(k):conv(v) for k,v in x.items()}
    if isinstance(x,list): return [conv(v) for v in x]
    if hasattr(x,'isoformat'): return x.isoformat()
    return x
print(json.dumps(conv(d),sort_keys=True,separators=(',',':'),ensure_ascii=False))
