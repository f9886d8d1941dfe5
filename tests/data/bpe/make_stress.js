// Writes tests/data/bpe/stress.json: texts chosen to probe the corners of
// mfmt's BPE encoder (Unicode spaces U+0085/U+180E/U+3000, digits of other
// scripts, apostrophes, CR/LF runs, emoji sequences, control bytes, random
// mixes) and the ids the real Hugging Face `tokenizers` library (Rust,
// 0.22.2 through npm's @anush008/tokenizers) gives them with the
// tokenizer.json `mfmt convert ggml-vocab-NAME.gguf DIR/` writes. Run by
// hand (never in CI), from the repository's top, after `make`:
//
//   npm install --prefix /tmp/tok @anush008/tokenizers @anush008/tokenizers-linux-x64-gnu
//   NODE_PATH=/tmp/tok/node_modules node tests/data/bpe/make_stress.js ../shared/real-gguf
//
// Texts in NFC only: mfmt takes NFC as the identity (doc/hf.md).
const { Tokenizer } = require('@anush008/tokenizers');
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const VOCABS = ['gpt-2', 'falcon']; // the gpt2-model GGUFs mfmt writes as HF directories
const hand = [
  'a\u0085b  c', 'x\u00a0y\u2003z', 'a\u180eb', 'x \u180e y', 'a \u180eb', '1 \u180e2', 'x  \u180e\u180ey', '!\u180e!?', 'x \u180e.', '\n\n\u180e', 'x\n\n\u180e ', '..\u0085..', '\u180e\u180e  ', 'a\u0085\u0085 b',
  'q\u200bq', '\u2028\u2029 x', '\u1680a', '\u3000\u3000\u5168\u89d2', '\r\n\r\n  \r\n', 'a\u000bb\u000cc',
  '3\u0663\u0664\u0665 \u00b2\u00b3 \u2167\u2168', "It's 'S 'LL 'd we'VE", '\u200d\u200b\u2060',
  '\t\t  x  \t', 'foo_bar-baz.qux', '\u00e9\u00e8 \u00c7a va? \u00bfQu\u00e9?', '\u0414\u041e\u0411\u0420\u042b\u0419 \u0434\u0435\u043d\u044c',
  '\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8\u3001\u53e5\u8aad\u70b9\u3002', '\ud83d\ude00\ud83d\ude00 \ud83d\udc68\u200d\ud83d\udc69\u200d\ud83d\udc67',
  '    def f(x):\n        return x**2\n', '<|endoftext|> hi <|endoftext|>', '$100,000.00 +-*/ ~~~',
  '\ufb01 \ufb02 \u1e9e', '1234567890123', '   ', '\n', '\u0120 \u010a', '\u0000\u0001\u001f',
];
// a fixed linear congruential generator: the same mixes every run
let seed = 12345;
const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
const alphabet = Array.from("ab Z09 \n\t'\u2019-_.,!?\u0085\u00a0\u2028\u180e\u00e9\u00df\u6f22\u5b57\ud83d\ude00\u0663");
const texts = hand.slice();
for (let i = 0; i < 60; i++) {
  let s = '';
  for (let k = 1 + rnd(40); k > 0; k--) s += alphabet[rnd(alphabet.length)];
  texts.push(s);
}

(async () => {
  const real = process.argv[2];
  const ids = {};
  for (const name of VOCABS) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mfmt-stress-'));
    execFileSync('build/mfmt', ['convert', path.join(real, `ggml-vocab-${name}.gguf`), dir + '/']);
    const t = Tokenizer.fromFile(path.join(dir, 'tokenizer.json'));
    ids[name] = [];
    for (const s of texts) ids[name].push((await t.encode(s, null, { addSpecialTokens: false })).getIds());
    fs.rmSync(dir, { recursive: true });
  }
  const out = {
    source: 'Hugging Face tokenizers 0.22.2 (npm @anush008/tokenizers 0.6.0) on the tokenizer.json mfmt writes ' +
            'for ../shared/real-gguf/ggml-vocab-NAME.gguf (tests/data/bpe/make_stress.js)',
    texts, ids,
  };
  fs.writeFileSync(path.join(__dirname, 'stress.json'), JSON.stringify(out, null, 0) + '\n');
})();
