/* prequant_bench.c - dequantizing a pre-quantized checkpoint through the
 * logical view (mf_open with MF_OPEN_LOGICAL, every tensor streamed as its
 * floats to a sink that only counts): seconds and MiB/s of stored bytes.
 * usage: prequant_bench DIR [f32|f16] */
#include <mfmt.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

static int count(void *ctx, const void *buf, size_t n, mf_status *st)
{
    (void)buf;
    (void)st;
    *(uint64_t *)ctx += n;
    return 0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    mf_open_opts o;
    mf_open_opts_init(&o);
    o.flags = MF_OPEN_LOGICAL | MF_OPEN_NO_SCAN;
    mf_status st;
    mf_status_init(&st);
    double t0 = now();
    mf_model *m;
    if (mf_open(argv[1], &o, &m, &st)) {
        fprintf(stderr, "%s\n", st.msg);
        return 1;
    }
    uint64_t out = 0;
    for (size_t i = 0; i < mf_model_tensor_count(m); i++)
        if (mf_tensor_stream(m, mf_model_tensor_at(m, i), count, &out, &st)) {
            fprintf(stderr, "%s\n", st.msg);
            return 1;
        }
    double secs = now() - t0;
    uint64_t in = mf_model_file_bytes(m);
    printf("%.3f %llu %llu\n", secs, (unsigned long long)in, (unsigned long long)out);
    mf_close(m);
    return 0;
}
