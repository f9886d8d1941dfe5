#!/usr/bin/python3
"""Prints the chkhsh -> name rows of a convert_hf_to_gguf.py's get_vocab_base_pre
as C initializers (lib/ops/hfconv/bpe_chkhsh.c), in the script's order, with the
repository in its "# ref:" comment, and the sha256 of its chktxt. Reads the
file as text (the converter is not run):

    chkhsh_rows.py PATH/convert_hf_to_gguf.py

Used for the ecbcb7ea (2026-02-27) rows, known_2026[] (the file of
../shared/tools/convref-new/assemble.md)."""
import ast, hashlib, re, sys

src = open(sys.argv[1], encoding="utf-8").read()
body = src[src.index("def get_vocab_base_pre"):]
body = body[:body.index("if res is None:")]
txt = re.search(r"chktxt = ('.*')\n", body).group(1)
print("/* chktxt sha256 %s */" % hashlib.sha256(ast.literal_eval(txt).encode()).hexdigest())
for m in re.finditer(r'if chkhsh == "([0-9a-f]{64})":\n(?:\s*#.*\n)*?\s*# ref: (\S+)\n\s*res = "([^"]+)"', body):
    h, ref, name = m.groups()
    print('    {"%s", "%s"}, /* %s */' % (h, name, ref.replace("https://huggingface.co/", "")))
