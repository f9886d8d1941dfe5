/* hf_remote.c - the code a Hugging Face directory asks transformers to
 * run: "auto_map" in config.json (and tokenizer, processor and feature
 * extractor configs) maps an Auto class to "module.Class", which
 * from_pretrained(..., trust_remote_code=True) imports from module.py in
 * the directory, or "repo--module.Class" from another repository
 * (transformers' dynamic_module_utils.get_class_from_dynamic_module).
 * Tokenizer entries may be a [slow, fast] list with nulls. */
#include "formats/hf/hf.h"

#include <string.h>

static const char *const CONFIGS[] = {"config.json", "tokenizer_config.json",
                                      "processor_config.json", "preprocessor_config.json",
                                      "feature_extractor_config.json", "image_processor_config.json"};

static void one_ref(const char *dir, const char *json_name, const char *cls, const char *ref,
                    mf_hf_code_fn fn, void *ctx, int *count)
{
    mf_hf_code c = {.json_file = json_name, .auto_class = cls, .ref = ref};
    const char *sep = strstr(ref, "--");
    const char *mod = sep ? sep + 2 : ref;
    c.other_repo = sep != NULL;
    const char *dot = strrchr(mod, '.');
    size_t ml = dot ? (size_t)(dot - mod) : strlen(mod);
    char rel[512];
    if (ml >= sizeof(rel) - 4)
        ml = sizeof(rel) - 4;
    memcpy(rel, mod, ml);
    rel[ml] = 0;
    for (char *p = rel; *p; p++)
        if (*p == '.')
            *p = '/';
    strcat(rel, ".py");
    snprintf(c.py_file, sizeof(c.py_file), "%s", rel);
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    c.present = !c.other_repo && mf_path_exists(path);
    (*count)++;
    if (fn)
        fn(ctx, &c);
}

int mf_hf_remote_code(const char *dir, const char *only, mf_hf_code_fn fn, void *ctx)
{
    int count = 0;
    for (size_t i = 0; i < sizeof(CONFIGS) / sizeof(CONFIGS[0]); i++) {
        if (only && strcmp(only, CONFIGS[i]) != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, CONFIGS[i]);
        if (!mf_path_exists(path))
            continue;
        mf_status st;
        mf_status_init(&st);
        json_t *j = mf_hf_load_json(path, &st);
        mf_status_clear(&st);
        json_t *am = j ? json_object_get(j, "auto_map") : NULL;
        const char *cls;
        json_t *v;
        if (json_is_object(am)) {
            json_object_foreach(am, cls, v) {
                if (json_is_string(v)) {
                    one_ref(dir, CONFIGS[i], cls, json_string_value(v), fn, ctx, &count);
                } else if (json_is_array(v)) {
                    size_t k;
                    json_t *x;
                    json_array_foreach(v, k, x)
                        if (json_is_string(x))
                            one_ref(dir, CONFIGS[i], cls, json_string_value(x), fn, ctx, &count);
                }
            }
        }
        json_decref(j);
    }
    return count;
}
