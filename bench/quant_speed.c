/* quant_speed.c - quantization throughput of lib/quant: MB of F32 input per
 * second for every quantizable type (or the types named on the command
 * line), with and without an importance matrix, the scalar kernels against
 * the vector ones (mf_quant_set_simd, same run), then 1 and 2 threads, and
 * memcpy of the same bytes.
 *
 * `make bench` builds it (bench/Makefile) and runs it with the defaults;
 *   build/bench/quant_speed [--mib N] [--imatrix | --no-imatrix] [TYPE...]
 * Each figure is the best of 3 runs; the scalar/vector columns divide by the
 * CPU time used (steadier on a busy machine), the thread columns by wall
 * time. The output is checked to be the same bytes for scalar, vector and
 * 2 threads. */
#include "quant/quant.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROW 4096 /* values per row: a typical hidden size */

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now(void) { return clock_s(CLOCK_MONOTONIC); }

/* Weights-like data: sums of uniforms (roughly normal), scale 0.02, with a
 * rare outlier, from a fixed seed. */
static void fill(float *x, size_t n)
{
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < n; i++) {
        float v = 0;
        for (int k = 0; k < 4; k++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            v += (float)(s >> 40) * 0x1p-24f - 0.5f;
        }
        x[i] = v * 0.035f * (i % 4099 == 7 ? 12.0f : 1.0f);
    }
}

static double best_of(int reps, double (*run)(void *), void *arg)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t = run(arg);
        if (t < best)
            best = t;
    }
    return best;
}

typedef struct job {
    mf_dtype dt;
    const float *x, *imatrix;
    void *dst;
    size_t nrows;
    int threads;
    int rc;
    double cpu; /* CPU seconds of the fastest run */
} job;

static double run_quant(void *arg)
{
    job *j = arg;
    double c = clock_s(CLOCK_PROCESS_CPUTIME_ID), t = now();
    j->rc |= mf_quantize_rows_mt(j->dt, j->x, j->dst, (int64_t)j->nrows, ROW, j->imatrix, j->threads);
    t = now() - t;
    c = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c;
    if (j->cpu == 0 || c < j->cpu)
        j->cpu = c;
    return t;
}

typedef struct copy_job {
    void *dst;
    const void *src;
    size_t n;
} copy_job;

static double run_memcpy(void *arg)
{
    copy_job *c = arg;
    double t = now();
    memcpy(c->dst, c->src, c->n);
    return now() - t;
}

/* CPU seconds of the fastest of 3 single-thread runs with the vector
 * kernels on or off (wall time on a shared machine is mostly other load). */
static double cpu_secs(job *j, bool simd)
{
    mf_quant_set_simd(simd ? MF_QUANT_ALL : 0);
    j->cpu = 0;
    best_of(3, run_quant, j);
    mf_quant_set_simd(MF_QUANT_ALL);
    return j->cpu;
}

/* The machine the figures come from: the CPU model and family (AMD's
 * Zen 4 is family 25, Zen 5 family 26; the kernels chosen below differ by
 * what the CPU offers, not by vendor). */
static void print_cpu(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512], model[256] = "unknown", family[32] = "?";
    while (f && fgets(line, sizeof(line), f)) {
        char *v = strchr(line, ':');
        if (!v)
            continue;
        v += v[1] == ' ' ? 2 : 1;
        v[strcspn(v, "\n")] = 0;
        if (!strncmp(line, "model name", 10) && !strcmp(model, "unknown"))
            snprintf(model, sizeof(model), "%s", v);
        else if (!strncmp(line, "cpu family", 10) && family[0] == '?')
            snprintf(family, sizeof(family), "%s", v);
    }
    if (f)
        fclose(f);
    printf("CPU: %s (family %s)\n", model, family);
}

int main(int argc, char **argv)
{
    size_t mib = 16;
    int paths = 3; /* 1: without imatrix, 2: with, 3: both */
    const char *types[64];
    int ntypes = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--mib") && i + 1 < argc)
            mib = (size_t)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--imatrix"))
            paths = 2;
        else if (!strcmp(argv[i], "--no-imatrix"))
            paths = 1;
        else if (!strcmp(argv[i], "--kernels")) { /* the machine and the kernels chosen, then exit */
            unsigned lvl = mf_quant_simd_level();
            print_cpu();
            printf("kernels chosen: %s%s%s%s (MFMT_SIMD=%s)\n", lvl & MF_QUANT_AVX2 ? "AVX2 " : "",
                   lvl & MF_QUANT_AVX512 ? "AVX-512 " : "", lvl & MF_QUANT_F16C ? "F16C" : "", lvl ? "" : "scalar",
                   getenv("MFMT_SIMD") ? getenv("MFMT_SIMD") : "unset: the CPU's best");
            return 0;
        }
        else if (ntypes < 64)
            types[ntypes++] = argv[i];
    }
    if (!ntypes) {
        static const char *const def[] = {"Q4_0",   "Q4_1",    "Q5_0",  "Q5_1",   "Q8_0",    "Q2_K",   "Q3_K",
                                          "Q4_K",   "Q5_K",    "Q6_K",  "IQ4_NL", "IQ4_XS",  "TQ1_0",  "TQ2_0",
                                          "IQ1_S",  "IQ1_M",   "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S"};
        for (size_t i = 0; i < sizeof(def) / sizeof(def[0]); i++)
            types[ntypes++] = def[i];
    }
    size_t nrows = (mib << 20) / (ROW * sizeof(float));
    if (nrows < 1)
        nrows = 1;
    size_t nbytes = nrows * ROW * sizeof(float);
    float *x = malloc(nbytes), *w = malloc(ROW * sizeof(float));
    uint8_t *a = malloc(nbytes), *b = malloc(nbytes); /* a quantized row is never larger than F32 */
    if (!x || !w || !a || !b) {
        fprintf(stderr, "quant_speed: out of memory\n");
        return 1;
    }
    fill(x, nrows * ROW);
    for (int i = 0; i < ROW; i++)
        w[i] = 0.5f + (float)((i * 7919) % 97) / 16.0f;
    memset(a, 0, nbytes);
    memset(b, 0, nbytes);

    copy_job c = {b, x, nbytes};
    double t_copy = best_of(3, run_memcpy, &c);
    unsigned lvl = mf_quant_simd_level();
    print_cpu();
    printf("quantize throughput, %.0f MiB of F32 (%zu rows of %d), MB of F32 input per second; vector kernels: %s%s%s%s\n",
           nbytes / 1048576.0, nrows, ROW, lvl & MF_QUANT_AVX2 ? "AVX2 " : "", lvl & MF_QUANT_AVX512 ? "AVX-512 " : "",
           lvl & MF_QUANT_F16C ? "F16C" : "", lvl ? "" : "none (MFMT_NO_SIMD or no AVX2)");
    printf("%-8s %-4s %11s %11s %8s %11s %11s %6s\n", "type", "imat", "scalar CPU", "vector CPU", "x scalar",
           "1 thread", "2 threads", "same");
    printf("%-13s %9.0f MB/s\n", "memcpy", nbytes / 1e6 / t_copy);
    int status = 0;
    for (int i = 0; i < ntypes; i++) {
        mf_dtype dt = mf_dtype_from_name(types[i]);
        if (!mf_can_quantize(dt)) {
            printf("%-8s cannot quantize\n", types[i]);
            continue;
        }
        for (int im = 0; im < 2; im++) {
            if (!(paths & (1 << im)) || (!im && mf_quant_requires_imatrix(dt)))
                continue;
            const float *imx = im ? w : NULL;
            const mf_dtype_info *info = mf_dtype_info_of(dt);
            size_t qbytes = nrows * (ROW / info->block_elems) * info->block_bytes;
            job js = {dt, x, imx, a, nrows, 1, 0, 0}, jv = {dt, x, imx, b, nrows, 1, 0, 0};
            double scalar = cpu_secs(&js, false);
            memset(b, 0, qbytes);
            double vec = cpu_secs(&jv, true);
            bool same = !js.rc && !jv.rc && !memcmp(a, b, qbytes);
            double t1 = best_of(3, run_quant, &jv);
            job j2 = {dt, x, imx, b, nrows, 2, 0, 0};
            memset(b, 0, qbytes);
            double t2 = best_of(3, run_quant, &j2);
            same = same && !j2.rc && !memcmp(a, b, qbytes);
            status |= !same;
            printf("%-8s %-4s %6.0f MB/s %6.0f MB/s %7.2fx %6.0f MB/s %6.0f MB/s %6s\n", types[i], im ? "yes" : "no",
                   nbytes / 1e6 / scalar, nbytes / 1e6 / vec, scalar / vec, nbytes / 1e6 / t1, nbytes / 1e6 / t2,
                   same ? "yes" : "NO");
            fflush(stdout);
        }
    }
    printf("scalar/vector CPU: one thread, CPU time (steadier than wall time on a shared machine); "
           "1/2 threads: wall time; same: scalar, vector and 2-thread bytes equal\n");
    free(x), free(w), free(a), free(b);
    return status;
}
