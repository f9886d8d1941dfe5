#!/usr/bin/python3
"""sarif_check.py - is `mfmt scan --format sarif`'s output a SARIF 2.1.0 log?

Usage: sarif_check.py LOG.json [SCHEMA.json]

With a schema file (the OASIS sarif-schema-2.1.0.json, $id
https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json;
given as the argument or by MFMT_SARIF_SCHEMA) and python3-jsonschema, the log
is validated against it (Draft 7). Without them, the schema's parts that
mfmt's log uses are checked here, as the schema states them: sarifLog
(version "2.1.0", runs; no other properties but $schema, properties,
inlineExternalProperties), run (tool required), tool (driver required),
toolComponent (name required; rules are reportingDescriptors with an id),
result (message required; level one of none/note/warning/error;
ruleIndex >= -1), message (text or id), location/physicalLocation/
artifactLocation/region (byteOffset >= 0, integers), logicalLocation.
Then mfmt's own promises: one rule per class, each result's ruleId and
ruleIndex agree, a level by severity. Prints "N passed, M failed".
"""
import json
import os
import sys

checks = [0, 0]


def check(cond, what):
    checks[0 if cond else 1] += 1
    if not cond:
        print("FAIL", what)


def only(obj, allowed, where):
    extra = set(obj) - set(allowed)
    check(not extra, "%s: properties the schema does not allow: %s" % (where, sorted(extra)))


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def check_message(m, where):
    check(isinstance(m, dict) and ("text" in m or "id" in m), where + ": message needs text or id")
    if isinstance(m, dict):
        only(m, ["text", "markdown", "id", "arguments", "properties"], where + ".message")
        check(isinstance(m.get("text", ""), str), where + ".message.text is a string")


def check_location(loc, where):
    only(loc, ["id", "physicalLocation", "logicalLocations", "message", "annotations",
               "relationships", "properties"], where)
    pl = loc.get("physicalLocation")
    if pl is not None:
        only(pl, ["address", "artifactLocation", "region", "contextRegion", "properties"],
             where + ".physicalLocation")
        al = pl.get("artifactLocation", {})
        only(al, ["uri", "uriBaseId", "index", "description", "properties"], where + ".artifactLocation")
        check(isinstance(al.get("uri"), str) and " " not in al.get("uri", " "),
              where + ": artifactLocation.uri is a URI reference")
        reg = pl.get("region")
        if reg is not None:
            only(reg, ["startLine", "startColumn", "endLine", "endColumn", "charOffset",
                       "charLength", "byteOffset", "byteLength", "snippet", "message",
                       "sourceLanguage", "properties"], where + ".region")
            check(is_int(reg.get("byteOffset")) and reg["byteOffset"] >= 0,
                  where + ": region.byteOffset is an integer >= 0")
    for ll in loc.get("logicalLocations", []):
        only(ll, ["name", "index", "fullyQualifiedName", "decoratedName", "parentIndex", "kind",
                  "properties"], where + ".logicalLocation")


def builtin_check(log):
    only(log, ["$schema", "version", "runs", "inlineExternalProperties", "properties"], "sarifLog")
    check(log.get("version") == "2.1.0", "version is 2.1.0")
    check(isinstance(log.get("runs"), list), "runs is an array")
    for run in log.get("runs", []):
        check("tool" in run and "driver" in run["tool"], "run.tool.driver is there")
        drv = run["tool"]["driver"]
        check(isinstance(drv.get("name"), str), "driver.name")
        rules = drv.get("rules", [])
        for r in rules:
            check(isinstance(r.get("id"), str), "rule.id")
            only(r, ["id", "deprecatedIds", "guid", "deprecatedGuids", "name", "deprecatedNames",
                     "shortDescription", "fullDescription", "messageStrings",
                     "defaultConfiguration", "helpUri", "help", "relationships", "properties"],
                 "reportingDescriptor")
            lvl = r.get("defaultConfiguration", {}).get("level", "warning")
            check(lvl in ("none", "note", "warning", "error"), "defaultConfiguration.level")
        ids = [r["id"] for r in rules]
        check(len(set(ids)) == len(ids), "rule ids are unique")
        for i, res in enumerate(run.get("results", [])):
            where = "result %d" % i
            check_message(res.get("message"), where)
            check(res.get("level") in ("none", "note", "warning", "error"), where + ": level")
            ri = res.get("ruleIndex", -1)
            check(is_int(ri) and ri >= -1, where + ": ruleIndex")
            if ri >= 0:
                check(ri < len(rules) and rules[ri]["id"] == res.get("ruleId"),
                      where + ": ruleId and ruleIndex name the same rule")
            sev = res.get("properties", {}).get("severity")
            want = {"dangerous": "error", "unknown": "warning", "safe": "note"}.get(sev)
            check(want == res.get("level"), where + ": level %s for severity %s" % (res.get("level"), sev))
            for loc in res.get("locations", []):
                check_location(loc, where)


def main():
    log = json.load(open(sys.argv[1]))
    schema_path = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("MFMT_SARIF_SCHEMA")
    builtin_check(log)
    if schema_path and os.path.exists(schema_path):
        try:
            import jsonschema
        except ImportError:
            print("SKIP the official schema: python3-jsonschema is not installed")
        else:
            schema = json.load(open(schema_path))
            errors = list(jsonschema.Draft7Validator(schema).iter_errors(log))
            for e in errors[:10]:
                print("FAIL schema:", "/".join(map(str, e.absolute_path)), e.message)
            check(not errors, "valid against %s" % os.path.basename(schema_path))
    print("%d passed, %d failed" % tuple(checks))
    return 1 if checks[1] else 0


if __name__ == "__main__":
    sys.exit(main())
