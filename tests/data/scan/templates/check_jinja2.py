#!/usr/bin/python3
"""check_jinja2.py - the real Jinja2 on the chat-template fixtures.

Every attack/*.jinja must really reach Python's internals in jinja2's plain
(non-sandboxed) Environment: each prints PAYLOAD[...] around a harmless
payload (os.getpid(), or the repr of the os module for the str.format
field), rendered with a fresh Environment in a subprocess (one for all
the fixtures), and the output must hold that process's pid (or
"<module 'os'"). Every benign/*.jinja must render in the
same Environment (with the loopcontrols extension and the globals
transformers gives a chat template: raise_exception, strftime_now).

Usage: check_jinja2.py DIR    (DIR holds attack/ and benign/)
Prints one line per template and "N passed, M failed"; exit 1 on failure.
Made for tests/test_scan_template.c, which runs it when python3 and
jinja2 are there; also run by hand after adding fixtures.
"""
import json
import os
import subprocess
import sys

RENDER = r'''
import datetime, json, os, sys
import jinja2
srcs = json.load(sys.stdin)
loader = jinja2.DictLoader({
    "payload.jinja": "{{ lipsum.__globals__.os.getpid() }}",
    "payload_macro.jinja": "{% macro run() %}{{ lipsum.__globals__.os.getpid() }}{% endmacro %}",
    "payload_base.jinja": "PAYLOAD[{{ lipsum.__globals__.os.getpid() }}]",
})
def raise_exception(msg):
    raise jinja2.exceptions.TemplateError(msg)
ctx = dict(
    messages=[{"role": "system", "content": "be brief", "_id": "s1"},
              {"role": "user", "content": "hello", "turn": 1},
              {"role": "assistant", "content": "<think>x</think>hi", "turn": 2},
              {"role": "user", "content": "bye", "turn": 3}],
    tools=[{"type": "function", "function": {"name": "get_weather", "description": "weather",
            "parameters": {"type": "object", "properties": {
                "city": {"type": "string"}, "days": {"type": "array", "items": {"type": "integer"}}}}}}],
    add_generation_prompt=True, bos_token="<s>", eos_token="</s>",
)
results = []
for src in srcs:
    env = jinja2.Environment(loader=loader, extensions=["jinja2.ext.loopcontrols"])
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda f: datetime.datetime.now().strftime(f)
    try:
        results.append({"out": env.from_string(src).render(**ctx)})
    except Exception as e:
        results.append({"err": "%s: %s" % (type(e).__name__, e)})
print(json.dumps({"pid": os.getpid(), "results": results}))
'''


def render_all(paths):
    srcs = [open(p, encoding="utf-8").read() for p in paths]
    p = subprocess.run([sys.executable, "-c", RENDER], input=json.dumps(srcs),
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        sys.exit("the renderer failed: " + p.stderr)
    res = json.loads(p.stdout)
    return res["pid"], res["results"]


def main():
    root = sys.argv[1]
    passed = failed = 0
    todo = [(kind, name) for kind in ("attack", "benign")
            for name in sorted(os.listdir(os.path.join(root, kind))) if name.endswith(".jinja")]
    pid, results = render_all([os.path.join(root, k, n) for k, n in todo])
    for (kind, name), res in zip(todo, results):
        out, err = res.get("out"), res.get("err")
        if kind == "benign":
            ok = out is not None
            why = "renders" if ok else "does not render: " + err
        else:
            ok = out is not None and ("PAYLOAD[%d]" % pid in out or "PAYLOAD[<module 'os'" in out)
            why = "reaches os (payload ran)" if ok else "payload did not run: " + (err or out[:200])
        print("%s %s/%s: %s" % ("ok  " if ok else "FAIL", kind, name, why))
        passed += ok
        failed += not ok
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
