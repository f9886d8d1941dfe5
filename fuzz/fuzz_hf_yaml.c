/* fuzz_hf_yaml.c - libFuzzer harness: arbitrary bytes as a model card
 * (README.md) whose YAML front matter is read (lib/formats/hf/hf_yaml.c). */
#include "formats/hf/hf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    json_t *j = mf_hf_front_matter((const char *)data, size, err, sizeof(err));
    json_decref(j);
    return 0;
}
