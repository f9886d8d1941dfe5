#!/usr/bin/env python3
"""yaml_ref.py CARD: the model card's YAML front matter as PyYAML's safe_load
reads it, as compact JSON with sorted keys (or "ERR <exception>"); the
reference tests/test_hf.c compares mf_hf_front_matter with."""
import sys, yaml, json, re
t=open(sys.argv[1],encoding='utf-8').read()
lines=t.splitlines(keepends=True)
if not lines or lines[0].rstrip('\r\n')!='---': print('{}'); sys.exit()
body=[]
for l in lines[1:]:
    if l.rstrip('\r\n')=='---': break
    body.append(l)
try:
    d=yaml.safe_load(''.join(body))
except Exception as e:
    print('ERR', type(e).__name__); sys.exit()
if d is None: d={}
def conv(x):
    if isinstance(x,dict): return {str(k):conv(v) for k,v in x.items()}
    if isinstance(x,list): return [conv(v) for v in x]
    if hasattr(x,'isoformat'): return x.isoformat()
    return x
print(json.dumps(conv(d),sort_keys=True,separators=(',',':'),ensure_ascii=False))
