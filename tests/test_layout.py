"""The package's shape: no import cycles between qa's modules, modules of a readable size."""

from __future__ import annotations

import ast
import logging
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "qa"


def module_name(path: Path) -> str:
    """qa/index/load.py -> qa.index.load; qa/index/__init__.py -> qa.index."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, modules: set[str]) -> set[str]:
    """The qa modules path imports, at any depth (lazy imports in functions count too)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            # "from qa.answering import coverage" imports the module qa.answering.coverage.
            found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names)
    return {m for m in found if m in modules and m != name}


def graph() -> dict[str, set[str]]:
    """Module -> the qa modules it imports."""
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {module_name(p) for p in paths}
    return {module_name(p): imports(p, modules) for p in paths}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan), each as a sorted list."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in edges.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_cycle_finder_finds_a_cycle():
    edges = {"qa.a": {"qa.b"}, "qa.b": {"qa.c"}, "qa.c": {"qa.a"}, "qa.d": {"qa.a"}}
    assert cycles(edges) == [["qa.a", "qa.b", "qa.c"]]


def test_import_graph_sees_relative_lazy_and_module_imports(tmp_path):
    assert "qa.index.load" in graph()["qa.index.build"]
    assert "qa.answering.coverage" in graph()["qa.answering.draft"]  # from qa.answering import coverage


def test_qa_has_no_import_cycles():
    assert cycles(graph()) == []


def test_packages_import_upstream_only():
    """A stage imports only earlier stages: the folders tell the data flow."""
    order = ["errors", "rules", "config", "files", "passage", "notices", "answer", "articles", "text",
             "question", "embedding", "llm", "index", "retrieval", "sentences", "readers", "answering",
             "generation", "engine", "api", "cluster", "surfaces"]
    rank = {name: i for i, name in enumerate(order)}
    late = []
    for module, targets in graph().items():
        stage = module.split(".")[1] if module != "qa" else None
        if stage is None:
            continue
        for target in targets:
            other = target.split(".")[1] if "." in target else "engine"  # `import qa`: the public API
            if rank[other] > rank[stage]:
                late.append(f"{module} -> {target}")
    assert late == []


def test_answering_knows_no_language_model():
    """The composer reads through the Reader interface: how a reading is run or queued is the readers'."""
    answering = {m: t for m, t in graph().items() if m.startswith("qa.answering")}
    assert answering and {m: sorted(x for x in t if x.startswith("qa.llm")) for m, t in answering.items()
                          if any(x.startswith("qa.llm") for x in t)} == {}


def test_no_folder_holds_more_than_twelve_modules():
    root = PACKAGE.parent
    crowded = {str(d.relative_to(root)): n for d in [*PACKAGE.rglob("*"), *(root / "eval").rglob("*")]
               if d.is_dir() and (n := len([p for p in d.glob("*.py") if p.name != "__init__.py"])) > 12}
    assert crowded == {}


def test_modules_are_readable_sizes():
    sizes = {module_name(p): len(p.read_text("utf-8").splitlines()) for p in PACKAGE.rglob("*.py")
             if p.name != "__init__.py"}
    assert {m: n for m, n in sizes.items() if n > 250} == {}


def test_importing_qa_and_quantizing_leave_logging_alone():
    """Importing qa, and the ONNX quantizer (which calls logging.basicConfig), leave the root logger be."""
    code = """
import logging, sys
from pathlib import Path
import qa
from qa.embedding import export
try:
    export._fuse_and_quantize(Path("/nonexistent/model.onnx"), Path("/nonexistent/out.onnx"), 12, 384)
except Exception:
    pass
root = logging.getLogger()
print("onnxruntime.quantization.matmul_nbits_quantizer" in sys.modules, len(root.handlers), root.level)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "0", str(logging.WARNING)]


def test_importing_qa_and_its_help_load_no_ray():
    """The cluster extra is optional: `import qa` and `qa --help` never import Ray."""
    code = """
import sys
from click.testing import CliRunner
import qa
from qa.surfaces.cli import main
result = CliRunner().invoke(main, ["--help"])
assert "serve" in result.output and "build" in result.output, result.output
print(sorted(m for m in sys.modules if m == "ray" or m.startswith("ray.")))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_readme_is_short_and_every_setting_is_documented():
    """The README stays a front page (150 lines at most); docs/configuration.md names every setting
    of every component as its QA_ variable, and the README links there."""
    from qa.config import OWNER

    root = PACKAGE.parent
    readme = (root / "README.md").read_text("utf-8")
    assert len(readme.splitlines()) <= 150
    documented = (root / "docs" / "configuration.md").read_text("utf-8")
    names = [f"QA_{name.upper()}" for name in ["seeds_dir", "index_dir", "cache_dir", *OWNER]]
    assert [name for name in names if f"`{name}`" not in documented] == []
    assert "docs/configuration.md" in readme


def test_the_changelog_names_the_packages_version():
    """The CHANGELOG's newest release is the version pyproject.toml gives the package."""
    import re
    import tomllib

    root = PACKAGE.parent
    version = tomllib.loads((root / "pyproject.toml").read_text("utf-8"))["project"]["version"]
    releases = re.findall(r"^## \[?(\d+\.\d+\.\d+)\]?", (root / "CHANGELOG.md").read_text("utf-8"), re.M)
    assert releases and releases[0] == version
