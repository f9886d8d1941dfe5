/* cmd_plan.c - mfmt plan PATH --device NAME:SIZE ... [--dtype T] [--json]:
 * where the modules would go, as Accelerate's automatic device map. */
#include "cli.h"

#include <stdlib.h>

enum { MAX_DEVICES = 64 };

/* NAME:SIZE, split at the last ':' ("cuda:0:24GiB"); "disk" needs no size. */
static int parse_device(const char *arg, mf_plan_device *d)
{
    memset(d, 0, sizeof(*d));
    const char *colon = strrchr(arg, ':');
    if (!colon) {
        if (strcmp(arg, "disk"))
            return cli_usage_error("plan", "--device %s: give NAME:SIZE (cuda:0:24GiB, cpu:64GB)", arg);
        snprintf(d->name, sizeof(d->name), "disk");
        d->capacity = MF_PLAN_UNLIMITED;
        return 0;
    }
    size_t nl = (size_t)(colon - arg);
    if (!nl || nl >= sizeof(d->name))
        return cli_usage_error("plan", "--device %s: bad device name", arg);
    memcpy(d->name, arg, nl);
    if (mf_parse_size(colon + 1, &d->capacity))
        return cli_usage_error("plan", "--device %s: bad size \"%s\" (24GiB, 80GB, 512MiB, bytes)", arg,
                               colon + 1);
    return 0;
}

static void print_text(const mf_plan *p)
{
    char a[32], b[32];
    for (size_t i = 0; i < p->n_map; i++)
        printf("  %-48s %s\n", p->map[i].module[0] ? p->map[i].module : "(whole model)",
               p->devices[p->map[i].device].name);
    if (cli_quiet)
        return;
    printf("devices:\n");
    for (size_t d = 0; d < p->n_devices; d++) {
        cli_fmt_bytes(a, sizeof(a), p->used[d]);
        if (p->devices[d].capacity == MF_PLAN_UNLIMITED)
            snprintf(b, sizeof(b), "unlimited");
        else
            cli_fmt_bytes(b, sizeof(b), p->devices[d].capacity);
        printf("  %-12s %12s used of %12s (%llu bytes)\n", p->devices[d].name, a, b,
               (unsigned long long)p->used[d]);
    }
    cli_fmt_bytes(a, sizeof(a), p->total);
    cli_fmt_bytes(b, sizeof(b), p->reserved);
    printf("total:       %s; %s kept free on the main devices for the largest layer\n", a, b);
}

static void print_json(const char *path, const mf_plan *p)
{
    json_t *o = json_object(), *map = json_object(), *devs = json_array();
    json_object_set_new(o, "path", json_string(path));
    for (size_t i = 0; i < p->n_map; i++)
        json_object_set_new(map, p->map[i].module, json_string(p->devices[p->map[i].device].name));
    json_object_set_new(o, "device_map", map);
    for (size_t d = 0; d < p->n_devices; d++) {
        json_t *x = json_object();
        json_object_set_new(x, "name", json_string(p->devices[d].name));
        json_object_set_new(x, "capacity", p->devices[d].capacity == MF_PLAN_UNLIMITED
                                               ? json_null() : json_integer((json_int_t)p->devices[d].capacity));
        json_object_set_new(x, "used", json_integer((json_int_t)p->used[d]));
        json_array_append_new(devs, x);
    }
    json_object_set_new(o, "devices", devs);
    json_object_set_new(o, "total_bytes", json_integer((json_int_t)p->total));
    json_object_set_new(o, "reserved_bytes", json_integer((json_int_t)p->reserved));
    cli_print_json(o);
}

static int run_plan(const cli_args *a)
{
    mf_plan_device devs[MAX_DEVICES];
    size_t n = 0;
    const char *path = NULL, *dtype = NULL;
    bool json = false;
    for (int i = 0; i < a->n_opts; i++) {
        const char *v = a->opt[i].val;
        if (cli_is(a, i, "--json"))
            json = true;
        else if (cli_is(a, i, "--device")) {
            if (n == MAX_DEVICES)
                return cli_usage_error("plan", "at most %d devices", MAX_DEVICES);
            if (parse_device(v, &devs[n++]))
                return EXIT_USAGE;
        } else if (cli_is(a, i, "--dtype")) {
            if (strcmp(v, "f16") && strcmp(v, "bf16") && strcmp(v, "f32"))
                return cli_usage_error("plan", "--dtype is f16, bf16 or f32");
            dtype = v;
        }
    }
    if (a->n_pos != 1)
        return cli_usage_error("plan", a->n_pos ? "one path at a time" : "no path given");
    path = a->pos[0];
    int spool = cli_spool_input(&path); /* a Hub name: the cache's copy */
    if (spool)
        return spool;
    if (!n)
        return cli_usage_error("plan", "give the devices: --device cuda:0:24GiB --device cpu:64GiB");
    mf_status st;
    mf_status_init(&st);
    mf_plan_opts po;
    mf_plan_opts_init(&po);
    po.dtype = dtype;
    mf_plan *p;
    if (mf_plan_path(path, devs, n, &po, &p, &st)) {
        int rc = cli_report(&st);
        mf_status_clear(&st);
        return rc;
    }
    mf_status_clear(&st);
    if (json)
        print_json(path, p);
    else
        print_text(p);
    mf_plan_free(p);
    return EXIT_FINE;
}

static const cli_opt opts[] = {
    {"--device", NULL, "NAME:SIZE", "a device and its memory (cuda:0:24GiB, cpu:64GB, disk); "
                                    "repeat, in order of preference"},
    {"--dtype", NULL, "T", "f16, bf16 or f32: the dtype the weights are loaded in"},
    {"--json", NULL, NULL, "one JSON object"},
    CLI_OPT_QUIET("the device map only, no per-device and total lines"),
    CLI_OPTS_REMOTE,
    {0},
};

const cli_cmd cli_cmd_plan = {
    "plan", run_plan, "PATH",
    "module -> device map as Accelerate's automatic device map, with each device's total", opts,
    NULL};
