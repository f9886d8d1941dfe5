/* test_tiktoken.c - the tiktoken BPE file reader and merge of
 * lib/ops/hfconv/tiktoken.c, and the refusals of the remote-code families'
 * vocabulary steps (Qwen v1's qwen.tiktoken, ChatGLM3's padded vocabulary):
 *  - ranks read as Python's _load_tiktoken_bpe reads them (blank lines,
 *    CRLF), the merge split as QwenModel.bpe gives it (hand-worked cases);
 *  - GPT-2's byte-level text and its inverse for all 256 bytes;
 *  - bad files refused naming the file, byte offset and line;
 *  - a Qwen vocabulary that is not QWenTokenizer's 151643 dense ranks and a
 *    ChatGLM3 config without room for its special tokens refused, nothing
 *    written. The converted families themselves: test_arch_file. */
#include "core/core.h"
#include "ops/hfconv/tiktoken.h"
#include "testmf.h"

#include <mfmt.h>

#include <sys/stat.h>
#include <unistd.h>

static char tmp[256];

static int read_text(const char *text, mf_tiktoken *t, mf_status *st)
{
    return mf_tiktoken_read("test.tiktoken", text, strlen(text), t, st);
}

static void ranks_and_split(void)
{
    /* "a" "b" "c" "d" as 0-3, then "ab" 4, "cd" 5, "abcd" 6, "bc" 7 */
    const char *text = "YQ== 0\nYg== 1\r\nYw== 2\n\nZA== 3\nYWI= 4\nY2Q= 5\nYWJjZA== 6\nYmM= 7\n";
    mf_tiktoken t;
    mf_status st = MF_STATUS_INIT;
    CHECK(read_text(text, &t, &st) == 0 && t.n == 8 && t.max_rank == 7);
    CHECK(mf_tiktoken_rank(&t, (const uint8_t *)"abcd", 4) == 6 && mf_tiktoken_rank(&t, (const uint8_t *)"ac", 2) < 0);
    size_t ends[4] = {0}; /* the parts' end offsets */
    /* abcd below rank 6: ab (4) first, then cd (5): two parts ab | cd */
    CHECK(mf_tiktoken_split(&t, (const uint8_t *)"abcd", 4, 6, ends) == 2 && ends[0] == 2 && ends[1] == 4);
    /* below rank 5: only ab merges: ab | c | d */
    CHECK(mf_tiktoken_split(&t, (const uint8_t *)"abcd", 4, 5, ends) == 3 && ends[0] == 2 && ends[1] == 3 &&
          ends[2] == 4);
    /* no limit: all the way to abcd */
    CHECK(mf_tiktoken_split(&t, (const uint8_t *)"abcd", 4, 1 << 30, ends) == 1 && ends[0] == 4);
    /* bca: bc (7) is the only pair: bc | a */
    CHECK(mf_tiktoken_split(&t, (const uint8_t *)"bca", 3, 100, ends) == 2 && ends[0] == 2 && ends[1] == 3);
    /* dab: no pair of it is a rank: three single bytes (ChatGLMModel.bpe leaves up to 7) */
    CHECK(mf_tiktoken_split(&t, (const uint8_t *)"dab", 3, 100, ends) == 2 && ends[0] == 1);
    CHECK(mf_tiktoken_split(&t, (const uint8_t *)"dba", 3, 100, ends) == 3 && ends[0] == 1 && ends[1] == 2);
    mf_tiktoken_free(&t);
    mf_status_clear(&st);
}

static void byte_level(void)
{
    uint8_t all[256], back[256];
    char text[512];
    for (int i = 0; i < 256; i++)
        all[i] = (uint8_t)i;
    size_t n = mf_byte_level_text(all, 256, text), nb = 0;
    /* 188 printable bytes stand for themselves (1 or 2 UTF-8 bytes), 68 others from U+0100 (2 each) */
    CHECK(n == 94 + 2 * 94 + 2 * 68);
    CHECK(mf_byte_level_bytes(text, n, back, &nb) == 0 && nb == 256 && !memcmp(all, back, 256));
    CHECK(!strncmp(text, "\xc4\x80", 2));                  /* byte 0 is U+0100 */
    CHECK(mf_byte_level_bytes(" ", 1, back, &nb) == -1);    /* a space is no byte's character */
    CHECK(mf_byte_level_bytes("\xc5\x84", 2, back, &nb) == -1); /* U+0144: past the 68 */
}

static void refused(const char *label, const char *text, const char *want)
{
    mf_tiktoken t;
    mf_status st = MF_STATUS_INIT;
    int rc = read_text(text, &t, &st);
    const char *msg = mf_status_message(&st, 0);
    CHECKF(rc != 0 && strstr(msg, "test.tiktoken") && strstr(msg, want), "%s: %s", label, msg);
    mf_status_clear(&st);
}

/* A line of `n` bytes of base64 ("AAAA..." n/4*3 zero bytes, varied by
 * the line's number so the tokens differ) and its rank. */
static size_t put_line(char *p, size_t n, unsigned line)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    memset(p, 'A', n);
    p[0] = b64[line % 64], p[1] = b64[line / 64 % 64], p[2] = b64[line / 4096 % 64];
    return n + (size_t)sprintf(p + n, " %u\n", line);
}

/* Deriving a token's merges costs about its length squared (the split
 * loop): a token past 1024 bytes is refused, and so is a file whose tokens'
 * squared lengths pass 2^30 (before: a 1 MB token took hours). Also a
 * lone rank near 2^30: its duplicates are found by sorting, not in a
 * table of 2^30 bytes. */
static void long_tokens(void)
{
    char *text = malloc(2u << 20);
    size_t n = put_line(text, 1368, 0); /* 1026 bytes */
    text[n] = 0;
    refused("a 1026-byte token", text, "line 1: a token longer than 1024 bytes");
    n = 0;
    for (unsigned i = 0; i < 1100; i++) /* 1100 tokens of 1020 bytes: 1.14 x 10^9 */
        n += put_line(text + n, 1360, i);
    text[n] = 0;
    refused("long tokens in sum", text, "line 1033: the tokens are too long in sum");
    free(text);
    mf_tiktoken t;
    mf_status st = MF_STATUS_INIT;
    CHECKF(read_text("YQ== 1073741823\n", &t, &st) == 0 && t.max_rank == 1073741823, "%s",
           mf_status_message(&st, 0));
    mf_tiktoken_free(&t);
    mf_status_clear(&st);
}

static void bad_files(void)
{
    refused("bad base64", "YQ== 0\nY!== 1\n", "line 2: the token is not base64");
    refused("base64 without padding", "YQ 0\n", "line 1: the token is not base64");
    refused("three fields", "YQ== 0 1\n", "line 1: not \"BASE64TOKEN RANK\"");
    refused("no rank", "YQ==\n", "line 1: not \"BASE64TOKEN RANK\"");
    refused("negative rank", "YQ== -1\n", "line 1: the rank is not");
    refused("same token twice", "YQ== 0\nYg== 1\nYQ== 2\n", "line 3: the token of line-rank 0 again");
    refused("same rank twice", "YQ== 0\nYg== 0\n", "rank 0 is given to two tokens (lines 1 and 2)");
    refused("empty", "\n\n", "no ranks");
    long_tokens();
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* A safetensors file holding only Qwen's embeddings, [2, 2] float16 zeros. */
static void write_safetensors_embd(const char *path)
{
    static const char hdr[] = "{\"transformer.wte.weight\":{\"dtype\":\"F16\",\"shape\":[2,2],\"data_offsets\":[0,8]}}";
    uint8_t len[8] = {0};
    size_t n = sizeof(hdr) - 1;
    for (int i = 0; i < 8; i++)
        len[i] = (uint8_t)(n >> (8 * i));
    FILE *f = fopen(path, "wb");
    if (!f)
        return;
    fwrite(len, 1, 8, f);
    fwrite(hdr, 1, n, f);
    fwrite("\0\0\0\0\0\0\0\0", 1, 8, f);
    fclose(f);
}

/* converting dir with the arch file fails with a message holding want, nothing written */
static void convert_refused(const char *label, const char *dir, const char *file, bool vocab_only, const char *want)
{
    char out[400];
    snprintf(out, sizeof(out), "%s/out.gguf", tmp);
    mf_convert_gguf_opts o;
    mf_convert_gguf_opts_init(&o);
    o.arch_file = file;
    o.vocab_only = vocab_only;
    mf_status st = MF_STATUS_INIT;
    int rc = mf_convert_to_gguf(dir, out, &o, &st);
    const char *msg = mf_status_message(&st, 0);
    CHECKF(rc != 0 && strstr(msg, want), "%s: %s", label, msg);
    CHECKF(access(out, F_OK) != 0, "%s: an output was left behind", label);
    mf_status_clear(&st);
}

static void families_refused(void)
{
    char dir[400], path[500], cmd[1200];
    /* Qwen v1 with 256 ranks: QWenTokenizer's own check fails */
    snprintf(dir, sizeof(dir), "%s/qwen", tmp);
    mkdir(dir, 0755);
    snprintf(path, sizeof(path), "%s/model.safetensors", dir);
    write_safetensors_embd(path);
    snprintf(path, sizeof(path), "%s/config.json", dir);
    write_text(path, "{\"architectures\": [\"QWenLMHeadModel\"], \"hidden_size\": 32, \"num_attention_heads\": 4, "
                     "\"num_hidden_layers\": 2, \"intermediate_size\": 96, \"max_position_embeddings\": 64, "
                     "\"rotary_emb_base\": 10000, \"layer_norm_epsilon\": 1e-6, \"vocab_size\": 336}");
    snprintf(path, sizeof(path), "%s/qwen.tiktoken", dir);
    char *ranks = malloc(256 * 16), *p = ranks;
    for (int b = 0; ranks && b < 256; b++) {
        static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        p += sprintf(p, "%c%c== %d\n", b64[b >> 2], b64[(b & 3) << 4], b);
    }
    write_text(path, ranks ? ranks : "");
    free(ranks);
    convert_refused("qwen: 256 ranks", dir, "tests/data/arch/qwen.json", true, "QWenTokenizer needs the ranks 0..151642");
    /* ChatGLM3 whose padded vocabulary has no room for SPTokenizer's 9 specials */
    snprintf(dir, sizeof(dir), "%s/glm", tmp);
    mkdir(dir, 0755);
    snprintf(cmd, sizeof(cmd), "cp tests/data/arch_remote/dirs/chatglm3-tiny/* '%s'/ && sed -i "
             "'s/\"padded_vocab_size\": 336/\"padded_vocab_size\": 325/' '%s'/config.json", dir, dir);
    CHECK(system(cmd) == 0);
    convert_refused("chatglm3: 325 ids", dir, "tests/data/arch/chatglm.json", false,
                    "the tokenizer has ids up to 328 but config.json padded_vocab_size is 325");
    snprintf(cmd, sizeof(cmd), "sed -i '/padded_vocab_size/d' '%s'/config.json", dir);
    CHECK(system(cmd) == 0);
    convert_refused("chatglm3: no padded_vocab_size", dir, "tests/data/arch/chatglm.json", false,
                    "config.json has no usable padded_vocab_size");
}

/* GLM-4 with the remote ChatGLM4Tokenizer: a copy of glm4-tiktoken-tiny
 * with one edit (a python3 expression over c, the config, and t, the
 * tokenizer_config, or a shell command) is refused with want */
static void glm4_variant(const char *label, const char *edit, const char *shell, const char *want)
{
    char dir[400], cmd[2400];
    snprintf(dir, sizeof(dir), "%s/glm4tt", tmp);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cp -r tests/data/arch_remote/dirs/glm4-tiktoken-tiny '%s'", dir, dir);
    CHECK(system(cmd) == 0);
    if (edit) {
        snprintf(cmd, sizeof(cmd), "cd '%s' && /usr/bin/python3 -c 'import json; c = json.load(open(\"config.json\")); "
                 "t = json.load(open(\"tokenizer_config.json\")); %s; json.dump(c, open(\"config.json\", \"w\")); "
                 "json.dump(t, open(\"tokenizer_config.json\", \"w\"))'", dir, edit);
        if (system(cmd) != 0) {
            TL_SKIP("glm4 %s: python3 could not edit the copy", label);
            return;
        }
    }
    if (shell) {
        snprintf(cmd, sizeof(cmd), "cd '%s' && %s", dir, shell);
        CHECK(system(cmd) == 0);
    }
    convert_refused(label, dir, "tests/data/arch/chatglm.json", false, want);
}

static void glm4_refused(void)
{
    glm4_variant("another class", "t[\"tokenizer_class\"] = \"ChatGLMTokenizer\"", NULL,
                 "tokenizer_class \"ChatGLMTokenizer\": mfmt reads GLM-4's ChatGLM4Tokenizer");
    glm4_variant("no padded_vocab_size", "del c[\"padded_vocab_size\"]", NULL, "no usable padded_vocab_size");
    glm4_variant("ranks past padded", "c[\"padded_vocab_size\"] = 299", NULL,
                 "rank 299 is past config.json padded_vocab_size 299");
    glm4_variant("no added tokens", "del t[\"added_tokens_decoder\"]", NULL, "no added_tokens_decoder");
    glm4_variant("added token past padded", "t[\"added_tokens_decoder\"][\"400\"] = {\"content\": \"<x>\"}", NULL,
                 "added token 400 is past config.json padded_vocab_size 336");
    glm4_variant("added token on a rank", "t[\"added_tokens_decoder\"][\"5\"] = {\"content\": \"<x>\"}", NULL,
                 "added token 5 (<x>) has the id of a rank");
    glm4_variant("added content twice", "t[\"added_tokens_decoder\"][\"320\"] = {\"content\": \"[MASK]\"}", NULL,
                 "added token 320 ([MASK]): its content is token 301's too");
    glm4_variant("added content a rank's", "t[\"added_tokens_decoder\"][\"320\"] = {\"content\": \"a\"}", NULL,
                 "added token 320 (a): its content is token 97's too");
    glm4_variant("special not added", "t[\"additional_special_tokens\"].append(\"<|nope|>\")", NULL,
                 "special token <|nope|> is not in added_tokens_decoder");
    glm4_variant("no eot", "t[\"added_tokens_decoder\"][\"307\"][\"content\"] = \"<|usr|>\"; "
                 "t[\"additional_special_tokens\"].remove(\"<|user|>\")", NULL,
                 "GLM-4's added token <|user|> is missing");
    /* eight single bytes no pair of which is a rank: ChatGLMModel.bpe leaves 8 parts, its assert allows 7 */
    glm4_variant("8-part token", NULL, "printf 'AAgQGCAoMDg= 299\\n' >> tokenizer.model && "
                 "sed -i '$!{/AAECAw== 299/d}' tokenizer.model",
                 "not the merge of 2 to 7 tokens of lower rank (8 parts)");
    glm4_variant("blank line", NULL, "sed -i '5s/.*/ /' tokenizer.model", "a blank line: ChatGLM4Tokenizer");
    glm4_variant("lfs pointer", NULL, "printf 'version https://git-lfs.github.com/spec/v1\\noid sha256:%064d\\nsize 99\\n' 0 "
                 "> tokenizer.model", "a Git LFS pointer");
}

int main(void)
{
    if (!tl_make_tmpdir(tmp, sizeof(tmp), "tiktoken"))
        return 1;
    ranks_and_split();
    byte_level();
    bad_files();
    families_refused();
    glm4_refused();
    tl_remove_tmpdir(tmp);
    return tl_report("tiktoken");
}
