/* scan_sarif.c - SARIF 2.1.0 for mfmt scan (doc/scan.md, "SARIF").
 *
 * One run; tool.driver names mfmt, its version and the rules; one result
 * per finding with the rule of its class, a level by its severity
 * (dangerous: error, unknown: warning, safe: note), the file as the
 * artifactLocation (a URI reference: the path as given, percent-encoded)
 * and the byte as region.byteOffset when the finding has a byte in the
 * file itself. A finding inside an archive member, a chat template or a
 * stream that is not the file's bytes as is names that part as a logical
 * location and its offset in properties. Checked against the OASIS schema
 * by tests/check_cli.sh (tests/sarif_check.py). */
#include "scan_sarif.h"

#include <stdlib.h>

#define SARIF_SCHEMA "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json"

/* The classes of finding: a rule each. */
enum { R_NAME, R_TEMPLATE, R_STREAM, R_ARCHIVE, R_FILE, R_COUNT };
static const struct {
    const char *id, *name, *text;
} rules[R_COUNT] = {
    {"MFS001", "pickle-name",
     "A pickle reaches a Python name (GLOBAL, STACK_GLOBAL, INST, EXT): dangerous when it runs "
     "code, unknown when it is off mfmt's allowlist."},
    {"MFS002", "chat-template",
     "A chat template (GGUF tokenizer.chat_template*, tokenizer_config.json, chat_template.json "
     "or .jinja) parsed as Jinja2: dangerous when it reaches Python's internals, unknown when "
     "mfmt cannot resolve what it reaches."},
    {"MFS003", "pickle-stream",
     "A pickle opcode or stream rule: where mfmt's reading could differ from the loader's, or "
     "the machine stopped."},
    {"MFS004", "archive",
     "An archive member or container (zip, tar, nested archives) that a loader may read "
     "otherwise than it looks."},
    {"MFS005", "file",
     "The file as a whole: code its loader runs besides pickles (Keras Lambda layers, "
     "TensorFlow ops, remote code), or what kind of file it is."},
};

struct cli_sarif {
    json_t *results;
};

cli_sarif *cli_sarif_new(void)
{
    cli_sarif *s = calloc(1, sizeof(*s));
    if (s)
        s->results = json_array();
    return s;
}

static int rule_of(const mf_finding *f)
{
    if (f->global)
        return R_NAME;
    if (f->opcode && !strcmp(f->opcode, "jinja"))
        return R_TEMPLATE;
    if (f->opcode)
        return R_STREAM;
    if (f->member[0])
        return R_ARCHIVE;
    return R_FILE;
}

static const char *level_of(mf_verdict v)
{
    return v == MF_VERDICT_DANGEROUS ? "error" : v == MF_VERDICT_UNKNOWN ? "warning" : "note";
}

/* A path as a URI reference (RFC 3986): unreserved characters and '/'
 * kept, every other byte percent-encoded. */
static json_t *uri_of(const char *path)
{
    size_t n = strlen(path);
    char *u = malloc(3 * n + 1);
    if (!u)
        return json_string("");
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)path[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            strchr("-._~/", c))
            u[o++] = (char)c;
        else
            o += (size_t)sprintf(u + o, "%%%02X", c);
    }
    u[o] = 0;
    json_t *j = json_string(u);
    free(u);
    return j;
}

static json_t *message_of(const mf_finding *f)
{
    char text[2400];
    snprintf(text, sizeof(text), "%s%s%s%s%s", f->global ? f->global : "", f->global ? ": " : "",
             f->member[0] ? f->member : "", f->member[0] ? ": " : "", f->message);
    json_t *m = json_object();
    json_object_set_new(m, "text", cli_json_string(text, strlen(text)));
    return m;
}

static json_t *location_of(const mf_scan_report *r, const mf_finding *f)
{
    char buf[4200];
    json_t *phys = json_object(), *art = json_object(), *loc = json_object();
    json_object_set_new(art, "uri", uri_of(cli_shown_path(r->path, buf, sizeof(buf))));
    json_object_set_new(phys, "artifactLocation", art);
    if (f->file_offset >= 0) {
        json_t *region = json_object();
        json_object_set_new(region, "byteOffset", json_integer(f->file_offset));
        json_object_set_new(phys, "region", region);
    }
    json_object_set_new(loc, "physicalLocation", phys);
    if (f->member[0]) {
        json_t *ll = json_object(), *lls = json_array();
        json_object_set_new(ll, "fullyQualifiedName", cli_json_string(f->member, strlen(f->member)));
        json_object_set_new(ll, "kind", json_string(f->opcode && !strcmp(f->opcode, "jinja") ? "member" : "module"));
        json_array_append_new(lls, ll);
        json_object_set_new(loc, "logicalLocations", lls);
    }
    return loc;
}

void cli_sarif_add(cli_sarif *s, const mf_scan_report *r)
{
    if (!s)
        return;
    for (size_t i = 0; i < r->n_findings; i++) {
        const mf_finding *f = &r->findings[i];
        int rule = rule_of(f);
        json_t *res = json_object(), *locs = json_array(), *props = json_object();
        json_object_set_new(res, "ruleId", json_string(rules[rule].id));
        json_object_set_new(res, "ruleIndex", json_integer(rule));
        json_object_set_new(res, "level", json_string(level_of(f->severity)));
        json_object_set_new(res, "message", message_of(f));
        json_array_append_new(locs, location_of(r, f));
        json_object_set_new(res, "locations", locs);
        json_object_set_new(props, "severity", json_string(mf_verdict_name(f->severity)));
        json_object_set_new(props, "fileVerdict", json_string(mf_verdict_name(r->verdict)));
        if (f->member[0])
            json_object_set_new(props, "member", cli_json_string(f->member, strlen(f->member)));
        if (f->offset >= 0)
            json_object_set_new(props, "offset", json_integer(f->offset));
        if (f->opcode)
            json_object_set_new(props, "opcode", json_string(f->opcode));
        if (f->global)
            json_object_set_new(props, "global", cli_json_string(f->global, strlen(f->global)));
        json_object_set_new(res, "properties", props);
        json_array_append_new(s->results, res);
    }
}

static json_t *driver(void)
{
    json_t *d = json_object(), *rs = json_array();
    json_object_set_new(d, "name", json_string("mfmt"));
    json_object_set_new(d, "version", json_string(mf_version()));
    json_object_set_new(d, "semanticVersion", json_string(mf_version()));
    for (int i = 0; i < R_COUNT; i++) {
        json_t *rule = json_object(), *sd = json_object(), *cfg = json_object();
        json_object_set_new(rule, "id", json_string(rules[i].id));
        json_object_set_new(rule, "name", json_string(rules[i].name));
        json_object_set_new(sd, "text", json_string(rules[i].text));
        json_object_set_new(rule, "shortDescription", sd);
        json_object_set_new(cfg, "level", json_string("error"));
        json_object_set_new(rule, "defaultConfiguration", cfg);
        json_array_append_new(rs, rule);
    }
    json_object_set_new(d, "rules", rs);
    return d;
}

void cli_sarif_print(cli_sarif *s)
{
    if (!s)
        return;
    json_t *log = json_object(), *runs = json_array(), *run = json_object(), *tool = json_object();
    json_object_set_new(log, "$schema", json_string(SARIF_SCHEMA));
    json_object_set_new(log, "version", json_string("2.1.0"));
    json_object_set_new(tool, "driver", driver());
    json_object_set_new(run, "tool", tool);
    json_object_set_new(run, "results", s->results);
    json_array_append_new(runs, run);
    json_object_set_new(log, "runs", runs);
    cli_print_json(log);
    free(s);
}
