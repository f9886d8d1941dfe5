/* test_scan_denylist.c - the names the Hub's pickle scanners deny
 * (picklescan's _unsafe_globals, modelscan's unsafe globals, fickling's
 * unsafe imports) and the bypass classes of their 2025-2026 advisories
 * (issue 18): each, reached by GLOBAL (protocol 2) and by STACK_GLOBAL
 * (protocol 4, dotted names too), is dangerous; the names benign
 * checkpoints use stay safe. Keras layers other than Lambda that load
 * code (tests/data/scan/keras_code/make_keras_code.py): never safe. */
#include "testlib.h"

#include "ops/scan.h"
#include "pickle_build.h"

/* module, name: every one must be dangerous */
static const char *const dangerous[][2] = {
    {"pkgutil", "resolve_name"}, {"importlib", "import_module"}, {"importlib.util", "spec_from_file_location"},
    {"marshal", "loads"}, {"operator", "methodcaller"}, {"operator", "attrgetter"},
    {"operator", "itemgetter"}, {"_operator", "attrgetter"}, {"cProfile", "run"},
    {"cProfile", "runctx"}, {"profile", "Profile.runctx"}, {"pdb", "run"}, {"bdb", "Bdb.run"},
    {"idlelib.pyshell", "ModifiedInterpreter.runcode"}, {"idlelib.run", "Executive.runcode"},
    {"idlelib.autocomplete", "AutoComplete.fetch_completions"}, {"idlelib.calltip", "get_entity"},
    {"idlelib.debugobj", "ObjectTreeItem.SetText"}, {"asyncio", "create_subprocess_shell"},
    {"asyncio.unix_events", "_UnixSubprocessTransport"}, {"torch._dynamo.guards", "GuardBuilder.get"},
    {"torch._inductor.codecache", "compile_file"}, {"torch.jit", "load"},
    {"torch.jit.unsupported_tensor_ops", "execWrapper"},
    {"torch.fx.experimental.symbolic_shapes", "ShapeEnv.evaluate_guards_expression"},
    {"numpy.f2py", "crackfortran"}, {"numpy.testing._private.utils", "runstring"},
    {"pip", "main"}, {"pip._internal", "main"}, {"setuptools", "setup"},
    {"distutils.file_util", "write_file"}, {"ctypes", "CDLL"}, {"_ctypes", "dlopen"},
    {"logging.config", "listen"}, {"logging.config", "dictConfig"}, {"code", "InteractiveInterpreter.runcode"},
    {"codeop", "compile_command"}, {"runpy", "run_path"}, {"runpy", "_run_code"}, {"timeit", "timeit"},
    {"trace", "Trace.runctx"}, {"webbrowser", "open"}, {"shutil", "rmtree"},
    {"multiprocessing.util", "spawnv_passfds"}, {"concurrent.futures", "ProcessPoolExecutor"},
    {"threading", "Thread"}, {"_thread", "start_new_thread"}, {"signal", "signal"},
    {"socket", "create_connection"}, {"http.client", "HTTPSConnection"}, {"urllib.request", "urlopen"},
    {"smtplib", "SMTP"}, {"ftplib", "FTP"}, {"xmlrpc.client", "ServerProxy"}, {"pty", "spawn"},
    {"site", "addsitedir"}, {"sysconfig", "get_config_vars"}, {"venv", "create"},
    {"ensurepip", "_run_pip"}, {"zipimport", "zipimporter"}, {"pydoc", "pipepager"},
    {"pydoc", "locate"}, {"doctest", "debug_script"}, {"functools", "partial"},
    {"functools", "reduce"}, {"builtins", "getattr"}, {"builtins", "setattr"},
    {"builtins", "__import__"}, {"builtins", "compile"}, {"builtins", "exec"}, {"builtins", "eval"},
    {"builtins", "open"}, {"builtins", "breakpoint"}, {"builtins", "input"},
    {"__builtin__", "eval"}, {"__builtin__", "apply"}, {"types", "CodeType"}, {"types", "FunctionType"},
    {"types", "MethodType"}, {"copyreg", "add_extension"}, {"copyreg", "_reduce_ex"},
    {"copyreg", "pickle"}, {"copy_reg", "constructor"}, {"_pickle", "loads"}, {"pickle", "loads"},
    {"pickle", "Unpickler"}, {"dill", "loads"}, {"cloudpickle", "loads"}, {"joblib", "load"},
    {"joblib.numpy_pickle", "load"}, {"aiohttp", "request"}, {"httpx", "get"}, {"requests.api", "get"},
    {"ssl", "get_server_certificate"}, {"lib2to3.pgen2.grammar", "Grammar.loads"},
    {"torch.utils._config_module", "ConfigModule.load_config"},
    {"torch.utils.bottleneck.__main__", "run_cprofile"}, {"torch.utils.collect_env", "run"},
    {"torch.utils.data.datapipes.utils.decoder", "basichandlers"}, {"torch.serialization", "load"},
    {"linecache", "getline"}, {"pkg_resources", "EntryPoint"}, {"_imp", "create_dynamic"},
    {"_frozen_importlib", "_call_with_frames_removed"}, {"pandas", "read_pickle"},
    {"pandas.io.pickle", "read_pickle"}, {"jsonpickle", "decode"}, {"gzip", "open"},
    {"numpy.lib.format", "read_array"}, {"keras.models", "load_model"}, {"torch", "compile"},
    {"pathlib", "Path.write_text"}, {"pathlib", "PosixPath.unlink"}, {"tempfile", "mkstemp"},
    {"io", "FileIO"}, {"_io", "open"}, {"shelve", "open"}, {"numpy", "load"}, {"torch", "load"},
    {"torch.hub", "load"}, {"torch", "hub.load"}, {"subprocess", "Popen"}, {"os", "system"},
    {"posix", "system"}, {"nt", "system"}, {"sys", "modules"}, {"inspect", "getmodule"},
    {"gc", "get_objects"}, {"ctypes.util", "find_library"}, {"numpy.ctypeslib", "load_library"},
};

/* benign checkpoints' names: every one must stay safe */
static const char *const benign[][2] = {
    {"collections", "OrderedDict"}, {"torch._utils", "_rebuild_tensor_v2"}, {"copyreg", "_reconstructor"},
    {"copyreg", "__newobj__"}, {"pathlib", "PosixPath"}, {"argparse", "Namespace"},
    {"numpy.core.multiarray", "_reconstruct"}, {"builtins", "set"},
};

/* GLOBAL mod name, EMPTY_TUPLE, REDUCE, STOP (protocol 2) or
 * SHORT_BINUNICODE x2, STACK_GLOBAL, ... (protocol 4). */
static mf_verdict verdict_of(const char *mod, const char *name, int proto)
{
    pb p = {0};
    pb_proto(&p, proto);
    if (proto >= 4) {
        pb_str(&p, mod);
        pb_str(&p, name);
        pb_op(&p, 0x93); /* STACK_GLOBAL */
    } else {
        pb_global(&p, mod, name);
    }
    pb_op(&p, ')');
    pb_op(&p, 'R');
    pb_stop(&p);
    mf_scan_report *r = NULL;
    mf_verdict v = MF_VERDICT_UNKNOWN;
    if (mf_scan_bytes("mem", p.b, p.n, &r, NULL) == 0)
        v = r->verdict;
    mf_scan_free(r);
    pb_free(&p);
    return v;
}

static void test_keras_code(void)
{
    static const struct { const char *file, *want; } cases[] = {
        {"tfoplambda.keras", "unknown"},          /* a TensorFlow symbol by name */
        {"slicingoplambda.keras", "unknown"},
        {"funcdump_activation.keras", "dangerous"}, /* marshalled code in an activation */
        {"lambda_output_shape.keras", "dangerous"}, /* marshalled output_shape */
        {"dense.keras", "safe"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char path[256];
        snprintf(path, sizeof(path), "tests/data/scan/keras_code/%s", cases[i].file);
        mf_scan_report *r = NULL;
        CHECKF(mf_scan_file(path, &r, NULL) == 0, "%s", path);
        if (r)
            CHECKF(!strcmp(mf_verdict_name(r->verdict), cases[i].want), "%s: %s, want %s", path,
                   mf_verdict_name(r->verdict), cases[i].want);
        mf_scan_free(r);
    }
}

int main(void)
{
    test_keras_code();
    size_t nd = sizeof(dangerous) / sizeof(dangerous[0]), nb = sizeof(benign) / sizeof(benign[0]);
    for (size_t i = 0; i < nd; i++)
        for (int proto = 2; proto <= 4; proto += 2) {
            mf_verdict v = verdict_of(dangerous[i][0], dangerous[i][1], proto);
            CHECKF(v == MF_VERDICT_DANGEROUS, "%s.%s (protocol %d): %s", dangerous[i][0],
                   dangerous[i][1], proto, mf_verdict_name(v));
        }
    for (size_t i = 0; i < nb; i++) {
        mf_verdict v = verdict_of(benign[i][0], benign[i][1], 2);
        CHECKF(v != MF_VERDICT_DANGEROUS, "%s.%s: %s", benign[i][0], benign[i][1], mf_verdict_name(v));
    }
    printf("deny list: %zu names dangerous (protocols 2 and 4), %zu benign names not\n", nd, nb);
    printf("RESULT scan_denylist %d %d\n", tl_passed, tl_failed);
    return tl_failed != 0;
}
