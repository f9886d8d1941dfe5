/* pickle_names.c - what a name a pickle reaches is: allowlisted (and what
 * the interpreter builds for it), unknown, or dangerous.
 *
 * The allowlist follows what torch.load(weights_only=True) accepts
 * (torch/_weights_only_unpickler.py) plus the harmless builtins real
 * checkpoints hold. Dangerous names are those that run code, start
 * processes, touch files or the network, import modules or reach
 * attributes by name; a name is also dangerous when any part of a dotted
 * path is such a module (`torch._utils` + `os.system`, `__main__` +
 * `os.system` in protocol 4), or walks dunder attributes. Python 2 names
 * are read through pickle's fix_imports table (_compat_pickle.py). */
#include "core/pickle_int.h"

#include <stdlib.h>

typedef struct allowed {
    const char *name; /* module.name */
    pk_name_id id;
} allowed;

static const allowed allow[] = {
    {"collections.OrderedDict", PKN_ORDERED_DICT},
    {"torch._utils._rebuild_tensor", PKN_REBUILD_TENSOR},
    {"torch._utils._rebuild_tensor_v2", PKN_REBUILD_TENSOR_V2},
    {"torch._utils._rebuild_tensor_v3", PKN_REBUILD_TENSOR_V3},
    {"torch._utils._rebuild_parameter", PKN_REBUILD_PARAMETER},
    {"torch._utils._rebuild_parameter_with_state", PKN_REBUILD_PARAMETER_STATE},
    {"torch.nn.parameter.Parameter", PKN_PARAMETER},
    {"torch._tensor._rebuild_from_type_v2", PKN_REBUILD_FROM_TYPE_V2},
    {"torch._utils._rebuild_device_tensor_from_cpu_tensor", PKN_REBUILD_DEVICE_FROM_CPU},
    {"torch.Size", PKN_TORCH_SIZE},
    {"torch.device", PKN_TORCH_DEVICE},
    {"torch.Tensor", PKN_SAFE_OPAQUE},
    {"torch._utils._rebuild_qtensor", PKN_SAFE_OPAQUE},
    {"torch._utils._rebuild_sparse_tensor", PKN_SAFE_OPAQUE},
    {"torch._utils._rebuild_meta_tensor_no_storage", PKN_SAFE_OPAQUE},
    {"torch._utils._rebuild_nested_tensor", PKN_SAFE_OPAQUE},
    {"torch._utils._rebuild_wrapper_subclass", PKN_SAFE_OPAQUE},
    {"torch._utils._rebuild_device_tensor_from_numpy", PKN_SAFE_OPAQUE},
    {"torch.serialization._get_layout", PKN_SAFE_OPAQUE},
    {"torch.strided", PKN_SAFE_OPAQUE},
    {"torch.sparse_coo", PKN_SAFE_OPAQUE},
    {"torch.sparse_csr", PKN_SAFE_OPAQUE},
    {"torch.sparse_csc", PKN_SAFE_OPAQUE},
    {"torch.sparse_bsr", PKN_SAFE_OPAQUE},
    {"torch.sparse_bsc", PKN_SAFE_OPAQUE},
    {"torch.per_tensor_affine", PKN_SAFE_OPAQUE},
    {"torch.per_channel_affine", PKN_SAFE_OPAQUE},
    {"torch.per_tensor_symmetric", PKN_SAFE_OPAQUE},
    {"torch.per_channel_symmetric", PKN_SAFE_OPAQUE},
    {"torch.per_channel_affine_float_qparams", PKN_SAFE_OPAQUE},
    {"builtins.set", PKN_SET},
    {"builtins.frozenset", PKN_FROZENSET},
    {"builtins.bytearray", PKN_BYTEARRAY},
    {"builtins.bytes", PKN_BYTEARRAY},
    {"builtins.slice", PKN_SAFE_OPAQUE},
    {"builtins.complex", PKN_SAFE_OPAQUE},
    {"builtins.range", PKN_SAFE_OPAQUE},
    {"builtins.int", PKN_SAFE_OPAQUE},
    {"builtins.float", PKN_SAFE_OPAQUE},
    {"builtins.bool", PKN_SAFE_OPAQUE},
    {"builtins.str", PKN_SAFE_OPAQUE},
    {"builtins.tuple", PKN_SAFE_OPAQUE},
    {"builtins.list", PKN_SAFE_OPAQUE},
    {"builtins.dict", PKN_SAFE_OPAQUE},
    {"_codecs.encode", PKN_CODECS_ENCODE},
    {"numpy.core.multiarray._reconstruct", PKN_NP_RECONSTRUCT},
    {"numpy._core.multiarray._reconstruct", PKN_NP_RECONSTRUCT},
    {"numpy.ndarray", PKN_NP_NDARRAY},
    {"numpy.dtype", PKN_NP_DTYPE},
    {"numpy.core.multiarray.scalar", PKN_NP_SCALAR},
    {"numpy._core.multiarray.scalar", PKN_NP_SCALAR},
    {"datetime.datetime", PKN_SAFE_OPAQUE},
    {"datetime.date", PKN_SAFE_OPAQUE},
    {"datetime.time", PKN_SAFE_OPAQUE},
    {"datetime.timedelta", PKN_SAFE_OPAQUE},
    {"datetime.timezone", PKN_SAFE_OPAQUE},
    {"decimal.Decimal", PKN_SAFE_OPAQUE},
    {"fractions.Fraction", PKN_SAFE_OPAQUE},
    {"uuid.UUID", PKN_SAFE_OPAQUE},
    /* plain data that real checkpoints hold (doc/scan.md says why building
     * each runs nothing from the file) */
    {"builtins.Ellipsis", PKN_SAFE_OPAQUE},
    {"builtins.NotImplemented", PKN_SAFE_OPAQUE},
    {"copyreg._reconstructor", PKN_SAFE_OPAQUE},
    {"builtins.object", PKN_SAFE_OPAQUE},
    {"numpy.core.numeric._frombuffer", PKN_SAFE_OPAQUE},
    {"numpy._core.numeric._frombuffer", PKN_SAFE_OPAQUE},
    {"argparse.Namespace", PKN_SAFE_OPAQUE},
    {"pathlib.PosixPath", PKN_SAFE_OPAQUE},
    {"pathlib.WindowsPath", PKN_SAFE_OPAQUE},
    {"pathlib.PurePosixPath", PKN_SAFE_OPAQUE},
    {"pathlib.PureWindowsPath", PKN_SAFE_OPAQUE},
    {"pathlib.Path", PKN_SAFE_OPAQUE},
    {"pathlib.PurePath", PKN_SAFE_OPAQUE},
    {"collections.defaultdict", PKN_SAFE_OPAQUE},
    {"collections.Counter", PKN_SAFE_OPAQUE},
    /* joblib's array record: a plain object (BUILD sets its attributes);
     * the array it stands for follows in the stream (ops/scan_joblib.c) */
    {"joblib.numpy_pickle.NumpyArrayWrapper", PKN_SAFE_OPAQUE},
    {"sklearn.externals.joblib.numpy_pickle.NumpyArrayWrapper", PKN_SAFE_OPAQUE},
};

/* torch storage classes (legacy typed storages; torch.cuda.* as saved from
 * GPUs by old versions) and their element types. */
static const struct { const char *name; mf_dtype dt; } storages[] = {
    {"DoubleStorage", MF_F64}, {"FloatStorage", MF_F32}, {"HalfStorage", MF_F16},
    {"BFloat16Storage", MF_BF16}, {"LongStorage", MF_I64}, {"IntStorage", MF_I32},
    {"ShortStorage", MF_I16}, {"CharStorage", MF_I8}, {"ByteStorage", MF_U8},
    {"BoolStorage", MF_BOOL}, {"ComplexFloatStorage", MF_C64},
    {"ComplexDoubleStorage", MF_C128}, {"QInt8Storage", MF_I8}, {"QUInt8Storage", MF_U8},
    {"QInt32Storage", MF_I32}, {"QUInt4x2Storage", MF_U8}, {"QUInt2x4Storage", MF_U8},
    {"UntypedStorage", MF_U8}, {"_UntypedStorage", MF_U8},
};

static const struct { const char *name; mf_dtype dt; } torch_dtypes[] = {
    {"float32", MF_F32}, {"float", MF_F32}, {"float64", MF_F64}, {"double", MF_F64},
    {"float16", MF_F16}, {"half", MF_F16}, {"bfloat16", MF_BF16}, {"int64", MF_I64},
    {"long", MF_I64}, {"int32", MF_I32}, {"int", MF_I32}, {"int16", MF_I16},
    {"short", MF_I16}, {"int8", MF_I8}, {"uint8", MF_U8}, {"bool", MF_BOOL},
    {"complex64", MF_C64}, {"cfloat", MF_C64}, {"complex128", MF_C128},
    {"cdouble", MF_C128}, {"uint16", MF_U16}, {"uint32", MF_U32}, {"uint64", MF_U64},
    {"float8_e4m3fn", MF_F8_E4M3}, {"float8_e5m2", MF_F8_E5M2},
    {"float8_e4m3fnuz", MF_F8_E4M3FNUZ}, {"float8_e5m2fnuz", MF_F8_E5M2FNUZ},
    {"float8_e8m0fnu", MF_F8_E8M0}, {"qint8", MF_I8}, {"quint8", MF_U8}, {"qint32", MF_I32},
    {"complex32", MF_DTYPE_INVALID}, {"chalf", MF_DTYPE_INVALID},
    {"quint4x2", MF_DTYPE_INVALID}, {"quint2x4", MF_DTYPE_INVALID},
};

/* Modules whose every name is dangerous (and any dotted path through them). */
static const struct { const char *mod, *why; } bad_modules[] = {
    {"os", "operating-system access (commands, files, environment)"},
    {"posix", "operating-system access (commands, files, environment)"},
    {"nt", "operating-system access (commands, files, environment)"},
    {"subprocess", "starts processes"}, {"commands", "starts processes"},
    {"popen2", "starts processes"}, {"pty", "starts processes"},
    {"platform", "starts processes (platform.popen)"},
    {"sys", "interpreter internals (modules, hooks)"}, {"site", "interpreter setup"},
    {"runpy", "runs code"}, {"code", "runs code"}, {"codeop", "compiles code"},
    {"py_compile", "compiles code"}, {"compileall", "compiles code"},
    {"importlib", "imports modules"}, {"imp", "imports modules"},
    {"pkgutil", "imports modules"}, {"zipimport", "imports modules"},
    {"pickle", "loads another pickle"}, {"_pickle", "loads another pickle"},
    {"cPickle", "loads another pickle"}, {"marshal", "loads code objects"},
    {"dill", "loads another pickle"}, {"cloudpickle", "loads another pickle"},
    {"joblib", "loads another pickle"}, {"shelve", "loads pickles from files"},
    {"ctypes", "calls native code"}, {"_ctypes", "calls native code"}, {"cffi", "calls native code"},
    {"socket", "network access"}, {"_socket", "network access"}, {"socketserver", "network access"},
    {"ssl", "network access"}, {"http", "network access"}, {"httplib", "network access"},
    {"urllib", "network access"}, {"urllib2", "network access"}, {"urllib3", "network access"},
    {"requests", "network access"}, {"ftplib", "network access"}, {"smtplib", "network access"},
    {"telnetlib", "network access"}, {"poplib", "network access"}, {"imaplib", "network access"},
    {"nntplib", "network access"}, {"xmlrpc", "network access"}, {"xmlrpclib", "network access"},
    {"asyncio", "runs code and network access"}, {"asyncore", "network access"},
    {"asynchat", "network access"}, {"webbrowser", "opens URLs (runs a browser)"},
    {"multiprocessing", "starts processes"}, {"concurrent", "runs code in workers"},
    {"_thread", "runs code in threads"}, {"thread", "runs code in threads"},
    {"threading", "runs code in threads"}, {"signal", "installs signal handlers"},
    {"pip", "installs packages"}, {"setuptools", "builds and installs packages"},
    {"distutils", "runs build commands"}, {"ensurepip", "installs packages"},
    {"venv", "creates environments"}, {"shutil", "file operations"},
    {"tempfile", "creates files"}, {"io", "opens files"}, {"_io", "opens files"},
    {"fileinput", "reads files"}, {"mmap", "maps files"}, {"fcntl", "file control"},
    {"resource", "process limits"}, {"functools", "calls functions (partial, reduce)"},
    {"operator", "reaches attributes and calls methods by name"},
    {"_operator", "reaches attributes and calls methods by name"},
    {"types", "builds functions and code objects"},
    {"timeit", "runs code strings"}, {"cProfile", "runs code strings"},
    {"profile", "runs code strings"}, {"pdb", "runs code strings"}, {"bdb", "runs code"},
    {"trace", "runs code"}, {"doctest", "runs code strings"}, {"pydoc", "runs commands"},
    {"idlelib", "runs code"}, {"lib2to3", "rewrites files"}, {"logging.config", "evaluates configuration"},
    {"gc", "reaches every object"}, {"inspect", "reaches frames and globals"},
    {"numpy.testing", "runs code strings (runstring)"}, {"numpy.f2py", "compiles and runs code"},
    {"numpy.distutils", "runs build commands"}, {"numpy.ctypeslib", "loads native libraries"},
    {"torch.hub", "downloads and runs code"}, {"torch.jit", "loads and runs TorchScript"},
    {"torch.package", "imports packaged code"}, {"torch.fx", "compiles code from strings"},
    {"torch.serialization", "loads other files"}, {"torch.utils.cpp_extension", "compiles native code"},
    {"torch.distributed", "network access (rpc)"}, {"torch.multiprocessing", "starts processes"},
    {"torch._inductor", "compiles and runs code"}, {"torch._dynamo", "compiles and runs code"},
    {"torch.utils.collect_env", "runs commands (collect_env.run)"},
    {"_posixsubprocess", "starts processes"}, {"_osx_support", "runs commands (_read_output)"},
    {"_aix_support", "runs commands"}, {"_bootsubprocess", "starts processes"},
    {"_winapi", "starts processes (CreateProcess)"}, {"msvcrt", "console and process access"},
    {"tarfile", "extracts and writes files"}, {"zipfile", "extracts and writes files"},
    {"sqlite3", "opens files and loads extensions"}, {"pipes", "runs shell pipelines"},
    {"tkinter", "runs Tcl code"}, {"_tkinter", "runs Tcl code"},
    {"rlcompleter", "evaluates expressions"}, {"_sitebuiltins", "reads files and starts pydoc"},
    {"test", "runs interpreters and commands (test.support)"},
    {"unittest.mock", "imports modules by name (_importer)"},
    {"copyreg._extension_registry", "an EXT opcode: the name it loads cannot be seen in the file"},
    /* issue 18: the Hub scanners' deny lists and their 2025-2026
     * advisories (doc/scan.md, "Deny-rule additions of issue 18") */
    {"aiohttp", "network access"}, {"httpx", "network access"},
    {"websocket", "network access"}, {"websockets", "network access"},
    {"sysconfig", "reads build files and imports modules by name"},
    {"linecache", "reads any file"}, {"dbm", "opens database files"},
    {"_imp", "imports modules"}, {"_frozen_importlib", "imports modules"},
    {"_frozen_importlib_external", "imports modules and reads files"},
    {"pkg_resources", "imports modules by name (EntryPoint.load)"},
    {"zipapp", "writes files"}, {"_signal", "installs signal handlers"},
    {"_multiprocessing", "starts processes"}, {"_subprocess", "starts processes"},
    {"jsonpickle", "loads arbitrary objects"}, {"pandas.io.pickle", "loads another pickle"},
    {"torch.utils._config_module", "loads a pickle inside the pickle (load_config)"},
    {"torch.utils.bottleneck", "runs code under profilers"},
    {"torch.utils.data.datapipes.utils.decoder", "unpickles bytes (basichandlers)"},
    {"torch.utils.model_zoo", "downloads and loads files"},
    {"torch.export", "loads and runs exported programs"},
    {"torch._export", "loads and runs exported programs"},
    {"keras.models", "loads models (Lambda code)"}, {"keras.saving", "loads models (Lambda code)"},
    {"keras.src.saving", "loads models (Lambda code)"},
    {"tensorflow.keras.models", "loads models (Lambda code)"},
    {"tensorflow.saved_model", "loads graphs"}, {"tensorflow.io", "reads and writes files"},
};

/* Single names that are dangerous. */
static const struct { const char *name, *why; } bad_names[] = {
    {"builtins.eval", "runs code"}, {"builtins.exec", "runs code"},
    {"builtins.compile", "compiles code"}, {"builtins.execfile", "runs code"},
    {"builtins.__import__", "imports modules"}, {"builtins.getattr", "reaches attributes by name (getattr chains)"},
    {"builtins.setattr", "changes attributes"}, {"builtins.delattr", "changes attributes"},
    {"builtins.globals", "reaches module globals"}, {"builtins.locals", "reaches frame locals"},
    {"builtins.vars", "reaches object dictionaries"}, {"builtins.open", "opens files"},
    {"builtins.file", "opens files"}, {"builtins.input", "reads the terminal"},
    {"builtins.breakpoint", "starts a debugger"}, {"builtins.help", "starts a pager"},
    {"builtins.exit", "exits"}, {"builtins.quit", "exits"}, {"builtins.__build_class__", "builds classes"},
    {"builtins.reload", "imports modules"}, {"builtins.apply", "calls functions"},
    {"builtins.memoryview", "raw memory access"},
    {"codecs.open", "opens files"}, {"codecs.EncodedFile", "opens files"},
    {"numpy.load", "loads pickles (allow_pickle)"}, {"numpy.lib.npyio.load", "loads pickles"},
    {"numpy.fromfile", "reads files"}, {"numpy.memmap", "maps files"}, {"numpy.save", "writes files"},
    {"numpy.savez", "writes files"}, {"numpy.savetxt", "writes files"}, {"numpy.loadtxt", "reads files"},
    {"numpy.genfromtxt", "reads files"}, {"numpy.tofile", "writes files"},
    {"torch.load", "loads another pickle"}, {"torch.save", "writes files"},
    {"torch.ops.load_library", "loads native libraries"}, {"torch.classes.load_library", "loads native libraries"},
    {"torch._utils._import_dotted_name", "imports modules"},
    {"torch.storage._load_from_bytes", "runs torch.load on bytes inside the pickle"},
    {"uuid._get_command_stdout", "runs commands"}, {"uuid._popen", "runs commands"},
    {"uuid._find_mac", "runs commands"}, {"uuid._find_mac_near_keyword", "runs commands"},
    {"uuid._find_mac_under_heading", "runs commands"}, {"uuid._ifconfig_getnode", "runs commands"},
    {"uuid._ip_getnode", "runs commands"}, {"uuid._arp_getnode", "runs commands"},
    {"uuid._lanscan_getnode", "runs commands"}, {"uuid._netstat_getnode", "runs commands"},
    {"uuid._unix_getnode", "runs commands"}, {"uuid.getnode", "runs commands"},
    {"uuid._windll_getnode", "calls native code"},
    {"torch._C._jit_pass_lower_all_tuples", "runs TorchScript passes"},
    {"yaml.load", "builds arbitrary objects"}, {"yaml.unsafe_load", "builds arbitrary objects"},
    {"yaml.full_load", "builds arbitrary objects"}, {"yaml.load_all", "builds arbitrary objects"},
    {"gzip.open", "opens files"}, {"gzip.GzipFile", "opens files"}, {"bz2.open", "opens files"},
    {"bz2.BZ2File", "opens files"}, {"lzma.open", "opens files"}, {"lzma.LZMAFile", "opens files"},
    {"pandas.read_pickle", "loads another pickle"}, {"pandas.read_csv", "reads files and URLs"},
    {"numpy.lib.format.read_array", "loads pickles (allow_pickle)"},
    {"numpy.lib.format.open_memmap", "maps and creates files"},
    {"numpy.lib.npyio.loadtxt", "reads files"},
    {"torch.compile", "compiles and runs code"},
    {"torch.utils.collect_env.run", "runs commands"},
};

/* Path segments that make any dotted name dangerous (attribute chains). */
static const char *const bad_segments[] = {
    "os", "posix", "nt", "subprocess", "sys", "builtins", "__builtin__", "__builtins__",
    "runpy", "importlib", "pty", "socket", "shutil", "ctypes", "marshal", "pickle", "_pickle",
    "cPickle", "webbrowser", "eval", "exec", "system", "popen", "__import__", "getattr",
    "commands", "multiprocessing", "dill",
};

/* Python 2 modules renamed in Python 3 (fix_imports, Lib/_compat_pickle.py). */
static const struct { const char *py2, *py3; } renamed[] = {
    {"__builtin__", "builtins"}, {"copy_reg", "copyreg"}, {"exceptions", "builtins"},
    {"cPickle", "pickle"}, {"commands", "subprocess"}, {"UserDict", "collections"},
    {"UserList", "collections"}, {"UserString", "collections"}, {"StringIO", "io"},
    {"cStringIO", "io"}, {"urllib2", "urllib.request"}, {"urlparse", "urllib.parse"},
    {"httplib", "http.client"}, {"xmlrpclib", "xmlrpc.client"}, {"thread", "_thread"},
    {"Queue", "queue"}, {"SocketServer", "socketserver"}, {"repr", "reprlib"},
};

/* Single names renamed by fix_imports (NAME_MAPPING, Lib/_compat_pickle.py). */
static const struct { const char *mod, *name, *mod3, *name3; } renamed_names[] = {
    {"__builtin__", "xrange", "builtins", "range"}, {"__builtin__", "reduce", "functools", "reduce"},
    {"__builtin__", "intern", "sys", "intern"}, {"__builtin__", "unichr", "builtins", "chr"},
    {"__builtin__", "unicode", "builtins", "str"}, {"__builtin__", "long", "builtins", "int"},
    {"__builtin__", "basestring", "builtins", "str"},
    {"itertools", "izip", "builtins", "zip"}, {"itertools", "imap", "builtins", "map"},
    {"itertools", "ifilter", "builtins", "filter"},
    {"itertools", "ifilterfalse", "itertools", "filterfalse"},
    {"itertools", "izip_longest", "itertools", "zip_longest"},
    {"UserDict", "IterableUserDict", "collections", "UserDict"},
    {"whichdb", "whichdb", "dbm", "whichdb"}, {"_socket", "fromfd", "socket", "fromfd"},
    {"_multiprocessing", "Connection", "multiprocessing.connection", "Connection"},
    {"multiprocessing.process", "Process", "multiprocessing.context", "Process"},
    {"multiprocessing.forking", "Popen", "multiprocessing.popen_fork", "Popen"},
    {"urllib", "urlopen", "urllib.request", "urlopen"},
    {"urllib", "urlretrieve", "urllib.request", "urlretrieve"},
    {"exceptions", "StandardError", "builtins", "Exception"},
    {"socket", "_socketobject", "socket", "SocketType"},
};

static bool mod_under(const char *mod, const char *base)
{
    size_t n = strlen(base);
    return strncmp(mod, base, n) == 0 && (mod[n] == 0 || mod[n] == '.');
}

static const char *py3_module(const char *mod)
{
    for (size_t i = 0; i < sizeof(renamed) / sizeof(renamed[0]); i++)
        if (strcmp(mod, renamed[i].py2) == 0)
            return renamed[i].py3;
    return mod;
}

static bool is_dunder(const char *s, size_t n)
{
    return n > 4 && s[0] == '_' && s[1] == '_' && s[n - 2] == '_' && s[n - 1] == '_';
}

/* Is any '.'-separated segment of s (after the first, with skip_first) a
 * bad segment, or, for attribute chains, a dunder? */
static const char *bad_segment_in(const char *s, bool skip_first, bool attrs)
{
    if (skip_first) {
        s = strchr(s, '.');
        if (!s)
            return NULL;
        s++;
    }
    while (*s) {
        const char *dot = strchr(s, '.');
        size_t n = dot ? (size_t)(dot - s) : strlen(s);
        for (size_t i = 0; i < sizeof(bad_segments) / sizeof(bad_segments[0]); i++)
            if (strlen(bad_segments[i]) == n && memcmp(bad_segments[i], s, n) == 0)
                return "a dotted path through a module that runs code or reaches the system";
        if (attrs && is_dunder(s, n))
            return "walks dunder attributes (__globals__, __class__, ...)";
        if (!dot)
            break;
        s = dot + 1;
    }
    return NULL;
}

static bool lookup_storage(const char *mod, const char *name, mf_dtype *dt)
{
    bool torch_mod = strcmp(mod, "torch") == 0 || strcmp(mod, "torch.cuda") == 0 ||
                     strcmp(mod, "torch.storage") == 0;
    if (!torch_mod)
        return false;
    for (size_t i = 0; i < sizeof(storages) / sizeof(storages[0]); i++)
        if (strcmp(name, storages[i].name) == 0) {
            *dt = storages[i].dt;
            return true;
        }
    return false;
}

mf_dtype pk_torch_dtype(const char *name)
{
    if (strncmp(name, "torch.", 6) == 0)
        name += 6;
    for (size_t i = 0; i < sizeof(torch_dtypes) / sizeof(torch_dtypes[0]); i++)
        if (strcmp(name, torch_dtypes[i].name) == 0)
            return torch_dtypes[i].dt;
    return MF_DTYPE_INVALID;
}

static bool is_torch_dtype_name(const char *name)
{
    for (size_t i = 0; i < sizeof(torch_dtypes) / sizeof(torch_dtypes[0]); i++)
        if (strcmp(name, torch_dtypes[i].name) == 0)
            return true;
    return false;
}

static bool classify_allowed(pk_global *g, const char *mod, const char *full)
{
    for (size_t i = 0; i < sizeof(allow) / sizeof(allow[0]); i++)
        if (strcmp(full, allow[i].name) == 0) {
            g->id = allow[i].id;
            return true;
        }
    if (lookup_storage(mod, g->name, &g->dtype)) {
        g->id = PKN_STORAGE_CLASS;
        return true;
    }
    if (strcmp(mod, "torch") == 0 && is_torch_dtype_name(g->name)) {
        g->id = PKN_TORCH_DTYPE;
        g->dtype = pk_torch_dtype(g->name);
        return true;
    }
    /* numpy 2's dtype classes (numpy.dtypes.Float32DType, ...) */
    size_t nl = strlen(g->name);
    if (strcmp(mod, "numpy.dtypes") == 0 && nl > 5 && strcmp(g->name + nl - 5, "DType") == 0 &&
        !strchr(g->name, '.')) {
        g->id = PKN_SAFE_OPAQUE;
        return true;
    }
    return false;
}

static const char *classify_dangerous(const char *mod, const char *name, const char *full)
{
    for (size_t i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++)
        if (strcmp(full, bad_names[i].name) == 0)
            return bad_names[i].why;
    for (size_t i = 0; i < sizeof(bad_modules) / sizeof(bad_modules[0]); i++)
        if (mod_under(mod, bad_modules[i].mod))
            return bad_modules[i].why;
    /* the first segment of the module is judged by bad_modules */
    const char *why = bad_segment_in(mod, true, false);
    if (!why)
        why = bad_segment_in(name, false, strchr(name, '.') != NULL);
    if (why)
        return why;
    /* copyreg's internals other than the reconstructors pickle writes:
     * its dispatch table and extension registry change how later names
     * load (add_extension, pickle, constructor, _reduce_ex...) */
    if (strcmp(mod, "copyreg") == 0 && strcmp(name, "_reconstructor") != 0 &&
        strcmp(name, "__newobj__") != 0 && strcmp(name, "__newobj_ex__") != 0)
        return "copyreg's internals (the dispatch table, the extension registry)";
    /* a method of a path class reached by a dotted name (protocol 4):
     * pathlib.Path.write_text, .unlink, .read_bytes... touch files */
    if (mod_under(mod, "pathlib") && strchr(name, '.'))
        return "a method of a path: reads, writes or removes files";
    /* a dunder name itself (builtins.__import__ aside, caught above) */
    if (is_dunder(name, strlen(name)) && !(strcmp(mod, "copyreg") == 0 &&
                                          (strcmp(name, "__newobj__") == 0 ||
                                           strcmp(name, "__newobj_ex__") == 0)))
        return "a dunder attribute";
    return NULL;
}

/* The exact allowlist: module.name as resolved, before any deny rule (a
 * deny rule on a whole module, torch.serialization, must not turn its one
 * harmless name, _get_layout, dangerous). */
static bool exact_allowed(pk_global *g, const char *full)
{
    for (size_t i = 0; i < sizeof(allow) / sizeof(allow[0]); i++)
        if (strcmp(full, allow[i].name) == 0) {
            g->id = allow[i].id;
            return true;
        }
    return false;
}

/* protocol 4 resolves a dotted name by attributes (pickle's
 * _getattribute): module "torch" + name "hub.load" reaches torch.hub.load.
 * Every split of the path into a module and an attribute is judged. */
static const char *dangerous_any_split(const char *mod, const char *name, const char *full)
{
    const char *why = classify_dangerous(mod, name, full);
    if (why)
        return why;
    size_t ml = strlen(mod);
    for (const char *d = strchr(name, '.'); d; d = strchr(d + 1, '.')) {
        char m2[512];
        size_t pl = (size_t)(d - name);
        if (ml + 1 + pl >= sizeof(m2) || !d[1])
            break;
        memcpy(m2, mod, ml);
        m2[ml] = '.';
        memcpy(m2 + ml + 1, name, pl);
        m2[ml + 1 + pl] = 0;
        if ((why = classify_dangerous(m2, d + 1, full)))
            return why;
    }
    return NULL;
}

void pk_classify(pk_global *g)
{
    g->id = PKN_OTHER;
    g->dtype = MF_DTYPE_INVALID;
    g->gate = NULL;
    g->cls = PK_UNKNOWN;
    g->reason = "not on the allowlist of names that model files need";
    if (!*g->module || !*g->name) {
        g->reason = "an empty module or name";
        return;
    }
    const char *mod = py3_module(g->module), *name = g->name;
    /* fix_imports renames single names too: __builtin__.xrange -> builtins.range */
    for (size_t i = 0; i < sizeof(renamed_names) / sizeof(renamed_names[0]); i++)
        if (strcmp(g->module, renamed_names[i].mod) == 0 &&
            strcmp(g->name, renamed_names[i].name) == 0) {
            mod = renamed_names[i].mod3;
            name = renamed_names[i].name3;
        }
    char full[512];
    size_t ml = strlen(mod), nl = strlen(name);
    if (ml + nl + 2 > sizeof(full) || strlen(g->module) + strlen(g->name) + 2 > sizeof(full)) {
        g->reason = "an unusually long name";
        return;
    }
    memcpy(full, mod, ml);
    full[ml] = '.';
    memcpy(full + ml + 1, name, nl + 1);
    g->gate = pk_gate_of(full);
    if (exact_allowed(g, full)) {
        g->cls = PK_SAFE;
        g->reason = NULL;
        return;
    }
    const char *why = dangerous_any_split(mod, name, full);
    if (!why && (mod != g->module || name != g->name)) { /* the Python 2 spelling too */
        char full2[1040];
        snprintf(full2, sizeof(full2), "%.511s.%.511s", g->module, g->name);
        why = dangerous_any_split(g->module, g->name, full2);
    }
    if (why) {
        g->cls = PK_DANGEROUS;
        g->reason = why;
        return;
    }
    if (!strchr(name, '.') && classify_allowed(g, mod, full)) {
        g->cls = PK_SAFE;
        g->reason = NULL;
        return;
    }
    if (mod_under(mod, "__main__"))
        g->reason = "a class of the program that saved the file";
    else if (strchr(name, '.'))
        g->reason = "a dotted attribute path (protocol 4) to a name not on the allowlist";
}

/* numpy dtype descr: optional byte order, then kind and size. */
mf_dtype pk_numpy_dtype(const char *descr)
{
    if (*descr == '<' || *descr == '>' || *descr == '|' || *descr == '=')
        descr++;
    static const struct { const char *d; mf_dtype dt; } map[] = {
        {"f2", MF_F16}, {"f4", MF_F32}, {"f8", MF_F64}, {"i1", MF_I8}, {"i2", MF_I16},
        {"i4", MF_I32}, {"i8", MF_I64}, {"u1", MF_U8}, {"u2", MF_U16}, {"u4", MF_U32},
        {"u8", MF_U64}, {"b1", MF_BOOL}, {"c8", MF_C64}, {"c16", MF_C128},
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(descr, map[i].d) == 0)
            return map[i].dt;
    return MF_DTYPE_INVALID;
}
