"""mfmt/__init__.pyi against the package it describes: a type checker reads
the stub instead of the .py files, so a parameter added to a function and
not to the stub makes correct calls fail type checking (and a stale stub
hides a removed one). Each public function and method of the stub must
have the runtime's parameters (names, kinds, which have defaults), and each
NamedTuple the runtime's fields, in order; every public name the package
exports must be in the stub."""

import ast
import inspect
import os

import pytest

import mfmt
from conftest import PKG

STUB = os.path.join(PKG, "mfmt", "__init__.pyi")


def stub_tree():
    with open(STUB, encoding="utf-8") as f:
        return ast.parse(f.read())


def stub_params(fn):
    """(name, kind, has default) of an ast function, self/cls dropped."""
    a = fn.args
    pos = [(p.arg, "POSITIONAL_ONLY") for p in a.posonlyargs] + \
          [(p.arg, "POSITIONAL_OR_KEYWORD") for p in a.args]
    n_pos_defaults = len(a.defaults)
    out = [(n, k, i >= len(pos) - n_pos_defaults) for i, (n, k) in enumerate(pos)]
    if a.vararg:
        out.append((a.vararg.arg, "VAR_POSITIONAL", False))
    out += [(p.arg, "KEYWORD_ONLY", d is not None) for p, d in zip(a.kwonlyargs, a.kw_defaults)]
    if a.kwarg:
        out.append((a.kwarg.arg, "VAR_KEYWORD", False))
    return out


def runtime_params(obj):
    sig = inspect.signature(obj)
    return [(p.name, p.kind.name, p.default is not inspect.Parameter.empty)
            for p in sig.parameters.values()]


def drop_self(params):
    return params[1:] if params and params[0][0] in ("self", "cls") else params


def pairs():
    """(qualified name, stub function node, runtime object) of every public
    function and method the stub declares."""
    for node in stub_tree().body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            yield node.name, node, getattr(mfmt, node.name, None)
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            cls = getattr(mfmt, node.name, None)
            for m in node.body:
                if isinstance(m, ast.FunctionDef) and not m.name.startswith("_"):
                    decorators = {getattr(d, "id", getattr(d, "attr", None)) for d in m.decorator_list}
                    if "property" in decorators or "overload" in decorators:
                        continue
                    yield f"{node.name}.{m.name}", m, None if cls is None else getattr(cls, m.name, None)


PAIRS = list(pairs())


def test_stub_declares_functions():
    assert len(PAIRS) > 50, f"only {len(PAIRS)} functions in {STUB}"


@pytest.mark.parametrize("name,node,obj", PAIRS, ids=[p[0] for p in PAIRS])
def test_stub_signature_matches_runtime(name, node, obj):
    assert obj is not None, f"{name} is in the stub, not in the package"
    try:
        real = runtime_params(obj)
    except (TypeError, ValueError):
        pytest.skip(f"{name}: no signature to compare (a builtin)")
    assert drop_self(stub_params(node)) == drop_self(real), name


def namedtuples_in_stub():
    for node in stub_tree().body:
        if isinstance(node, ast.ClassDef) and any(getattr(b, "id", None) == "NamedTuple" for b in node.bases):
            fields = [s.target.id for s in node.body if isinstance(s, ast.AnnAssign)]
            yield node.name, fields


TUPLES = list(namedtuples_in_stub())


@pytest.mark.parametrize("name,fields", TUPLES, ids=[t[0] for t in TUPLES])
def test_stub_namedtuple_fields_match(name, fields):
    cls = getattr(mfmt, name, None)
    assert cls is not None, f"{name} is in the stub, not in the package"
    assert list(cls._fields) == fields, name


def test_every_export_in_stub():
    declared = set()
    for node in stub_tree().body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            declared.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            declared.add(node.target.id)
        elif isinstance(node, ast.Assign):
            declared.update(t.id for t in node.targets if isinstance(t, ast.Name))
    exported = getattr(mfmt, "__all__", None) or [n for n in dir(mfmt) if not n.startswith("_")]
    missing = sorted(n for n in exported if n not in declared and not inspect.ismodule(getattr(mfmt, n)))
    assert not missing, f"exported but not in {STUB}: {missing}"
