/* size.c - sizes given by people: "5GB" (HF max_shard_size, 10^9),
 * "10GiB" / bare "10G" (binary, as llama-gguf-split and Accelerate take
 * them), "8Gb" (bits). */
#include "core/core.h"

#include <math.h>
#include <stdlib.h>
#include <strings.h>

int mf_parse_size(const char *s, uint64_t *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < 0 || !isfinite(v))
        return -1;
    static const struct { const char *u; double m; } units[] = {
        {"", 1}, {"B", 1}, {"KIB", 1024.0}, {"MIB", 1048576.0}, {"GIB", 1073741824.0},
        {"TIB", 1099511627776.0}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
        {"K", 1024.0}, {"M", 1048576.0}, {"G", 1073741824.0}, {"T", 1099511627776.0},
    };
    size_t ul = strlen(end);
    bool bits = ul > 1 && end[ul - 1] == 'b'; /* "GB" bytes, "Gb" bits */
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (!strcasecmp(end, units[i].u)) {
            double b = v * units[i].m / (bits ? 8 : 1);
            if (b >= 1.8e19)
                return -1;
            *out = (uint64_t)b;
            return 0;
        }
    return -1;
}
