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

// Variants of GPT-2's tokenizer.json that exercise what the vocab GGUFs do
// not: added-token options, Split behaviors, Punctuation, Digits, the
// Prepend/Replace normalizers, Metaspace, byte_fallback, unk/fuse_unk,
// ignore_merges, post-processors. A patch: "top" replaces top-level keys, "model" model
// keys, "append_added" extends added_tokens, "byte_tokens" adds <0x00>..
// <0xFF> and <unk> to the vocabulary after its last id (test_bpe_encode.c
// applies the same patches).
const added = (content, o) => Object.assign({ id: 0, content, single_word: false, lstrip: false, rstrip: false,
  normalized: true, special: false }, o);
const VARIANTS = {
  punct_digits_added: {
    top: {
      pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'Punctuation', behavior: 'Contiguous' },
        { type: 'Digits', individual_digits: true },
        { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true }] },
      post_processor: { type: 'TemplateProcessing',
        single: [{ SpecialToken: { id: '<|endoftext|>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
                 { SpecialToken: { id: '<|endoftext|>', type_id: 0 } }],
        pair: [{ Sequence: { id: 'A', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }],
        special_tokens: { '<|endoftext|>': { id: '<|endoftext|>', ids: [50256], tokens: ['<|endoftext|>'] } } },
    },
    append_added: [added('hello', { id: 50257, lstrip: true, rstrip: true }),
      added('<|x|>', { id: 50258, normalized: false, special: true }), added('wor', { id: 50259, single_word: true, normalized: false }),
      added(' the', { id: 50260 }), added('a', { id: 50261, single_word: true })],
  },
  behaviors_normalizers: {
    top: {
      normalizer: { type: 'Sequence', normalizers: [{ type: 'Replace', pattern: { String: '  ' }, content: ' ' },
        { type: 'Prepend', prepend: '@' }] },
      pre_tokenizer: { type: 'Sequence', pretokenizers: [
        { type: 'Split', pattern: { String: '-' }, behavior: 'MergedWithPrevious', invert: false },
        { type: 'Split', pattern: { Regex: '\\d+' }, behavior: 'MergedWithNext', invert: false },
        { type: 'Split', pattern: { Regex: '[aeiou]' }, behavior: 'Contiguous', invert: true },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false }] },
      post_processor: { type: 'RobertaProcessing', sep: ['<|endoftext|>', 50256], cls: ['<|endoftext|>', 50256],
        trim_offsets: true, add_prefix_space: false },
    },
    append_added: [added('@x', { id: 50257 }), added('lo', { id: 50258, normalized: false })],
  },
  removed_regex_replace: {
    top: {
      normalizer: { type: 'Replace', pattern: { Regex: '[0-9]' }, content: '#' },
      pre_tokenizer: { type: 'Sequence', pretokenizers: [
        { type: 'Split', pattern: { Regex: '\\s+' }, behavior: 'Removed', invert: false },
        { type: 'Split', pattern: { Regex: '(?i:ab|cd)|^x|y$' }, behavior: 'Isolated', invert: false },
        { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: false }] },
    },
  },
  byte_fallback: { byte_tokens: true, model: { byte_fallback: true },
    top: { pre_tokenizer: { type: 'Split', pattern: { Regex: ' ' }, behavior: 'MergedWithNext', invert: false } } },
  unk_fused: { byte_tokens: true, model: { unk_token: '<unk>', fuse_unk: true },
    top: { pre_tokenizer: { type: 'Split', pattern: { Regex: ' ' }, behavior: 'MergedWithNext', invert: false } } },
  unk_ignore_merges: { byte_tokens: true, model: { unk_token: '<unk>', ignore_merges: true },
    top: { pre_tokenizer: { type: 'Split', pattern: { Regex: ' ' }, behavior: 'MergedWithNext', invert: false } } },
  metaspace_first: { byte_tokens: true, model: { byte_fallback: true },
    top: { pre_tokenizer: { type: 'Sequence', pretokenizers: [
      { type: 'Split', pattern: { Regex: '\\d+' }, behavior: 'Isolated', invert: false },
      { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'first', split: true }] } },
    append_added: [added('<|x|>', { id: 50257, normalized: false, special: true }),
      added('hello', { id: 50258, lstrip: true })] },
  metaspace_never_whole: { byte_tokens: true, model: { byte_fallback: true },
    top: { pre_tokenizer: { type: 'Metaspace', replacement: '_', prepend_scheme: 'never', split: false } } },
  metaspace_legacy: { byte_tokens: true, model: { byte_fallback: true },
    top: { pre_tokenizer: { type: 'Metaspace', replacement: '\u2581', add_prefix_space: true } } },
};
const variantTexts = texts.concat(['hello world', ' hello  world ', 'worx wor wor. a ab a', '<|x|>hello<|x|>',
  '1-2-3 x-y--z', '  the the  the', 'xyx\nxy\nab AB aB', '\u6f22\u5b57 caf\u00e9 \ud83d\ude00 a  b',
  '<|x|>hello world', 'hello<|x|> a b', ' lead space', '_under_score_', '12 ab34 cd', '<|x|> x']);

function patched(tj, p) {
  const t = JSON.parse(JSON.stringify(tj));
  Object.assign(t, p.top || {});
  Object.assign(t.model, p.model || {});
  if (p.append_added) t.added_tokens = t.added_tokens.concat(p.append_added);
  if (p.byte_tokens) {
    let n = Math.max(...Object.values(t.model.vocab)) + 1;
    for (let b = 0; b < 256; b++) t.model.vocab['<0x' + b.toString(16).toUpperCase().padStart(2, '0') + '>'] = n++;
    t.model.vocab['<unk>'] = n;
  }
  return t;
}

async function encodeAll(file, list, special) {
  const t = Tokenizer.fromFile(file);
  const out = [];
  for (const s of list) out.push((await t.encode(s, null, { addSpecialTokens: special })).getIds());
  return out;
}

(async () => {
  const real = process.argv[2];
  const ids = {}, variants = {};
  for (const name of VOCABS) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mfmt-stress-'));
    execFileSync('build/mfmt', ['convert', path.join(real, `ggml-vocab-${name}.gguf`), dir + '/']);
    const file = path.join(dir, 'tokenizer.json');
    ids[name] = await encodeAll(file, texts, false);
    if (name === 'gpt-2') {
      const base = JSON.parse(fs.readFileSync(file, 'utf8'));
      for (const [v, p] of Object.entries(VARIANTS)) {
        const vf = path.join(dir, v + '.json');
        fs.writeFileSync(vf, JSON.stringify(patched(base, p)));
        variants[v] = { patch: p, ids: await encodeAll(vf, variantTexts, false),
                        ids_special: await encodeAll(vf, variantTexts, true) };
      }
    }
    fs.rmSync(dir, { recursive: true });
  }
  const out = {
    source: 'Hugging Face tokenizers 0.22.2 (npm @anush008/tokenizers 0.6.0) on the tokenizer.json mfmt writes ' +
            'for ../shared/real-gguf/ggml-vocab-NAME.gguf, and on patched copies of gpt-2\'s (tests/data/bpe/make_stress.js)',
    texts, ids, variant_texts: variantTexts, variants,
  };
  fs.writeFileSync(path.join(__dirname, 'stress.json'), JSON.stringify(out, null, 0) + '\n');
})();
