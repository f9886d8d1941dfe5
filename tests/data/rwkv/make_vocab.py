#!/usr/bin/python3
"""Writes vocab.txt (lines as rwkv_vocab_v20230424.txt has them: "ID repr(token) LENGTH",
str tokens where they are valid UTF-8 as the RWKV world vocabulary writes them, bytes
otherwise) and expected.txt: per line the hex of repr(bytes)[2:-1], what llama.cpp's
Rwkv6Model.set_vocab writes as the GGUF token. CPython is the oracle:

    python3 make_vocab.py   (in this folder)
"""
tokens = ["a", " ", "'", '"', "'\"", "\\", "\n", "\t", "\r", "\x00", "\x7f", "é", "日本", "😀", "a'b", 'q"q',
          "\u2028", "\x1b[0m", "\u0085"]
raw = [b"\xff", b"\x80\x81", b"\xe6\x97", b"'\xff", b'"\xfe\'', b"\\\xc0"]
lines, expected = [], []
i = 1
for t in tokens + raw:
    lit = repr(t)
    b = t.encode("utf-8") if isinstance(t, str) else t
    lines.append("%d %s %d\n" % (i, lit, len(b)))
    expected.append(repr(b)[2:-1].encode("utf-8").hex() + "\n")
    i += 1
# a few spellings CPython's repr never writes but ast.literal_eval reads
extra = [("b'\\101\\x42C'", b"ABC"), ("'\\u00e9'", "é".encode()), ("'\\U0001F600'", "😀".encode()),
         ('"\\\'x"', b"'x"), ("b\"\\n\\a\\b\\f\\v\"", b"\n\a\b\f\v"), ("'\\0'", b"\x00"),
         # unknown escapes keep their backslash (bytes have no \u)
         ("'\\q'", b"\\q"), ("b'\\u00e9'", b"\\u00e9")]
for lit, b in extra:
    lines.append("%d %s %d\n" % (i, lit, len(b)))
    expected.append(repr(b)[2:-1].encode("utf-8").hex() + "\n")
    i += 1
open("vocab.txt", "w", encoding="utf-8").write("".join(lines))
open("expected.txt", "w").write("".join(expected))
