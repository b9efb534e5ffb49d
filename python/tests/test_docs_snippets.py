"""README.md's and docs/quickstart.md's Python snippets, as printed: each
block runs in a fresh copy of examples/relu (where the docs run them).
The shell snippets are run by customop/tests/docs_snippets.rs."""

import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import REPO

DOCS = ["README.md", "docs/quickstart.md"]


def blocks(doc):
    return re.findall(r"```python\n(.*?)```", (REPO / doc).read_text(), re.S)


CASES = [(doc, i, b) for doc in DOCS for i, b in enumerate(blocks(doc))]


def test_the_docs_have_python_snippets():
    assert len(blocks("README.md")) == 1 and len(blocks("docs/quickstart.md")) == 3


@pytest.mark.parametrize("doc,i,block", CASES, ids=[f"{d}:{i}" for d, i, _ in CASES])
def test_a_docs_python_snippet_runs_as_printed(tmp_path, doc, i, block):
    if "import torch" in block and not os.environ.get("NEURONCUSTOMOP_REQUIRE_TORCH"):
        pytest.importorskip("torch")
    work = tmp_path / "relu"
    shutil.copytree(REPO / "examples" / "relu", work)
    # The default build directory (~/.cache/neuroncustomop) kept in the test's.
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, "-c", block], cwd=work, capture_output=True, text=True, env=env)
    assert r.returncode == 0, f"{doc}, block {i}:\n{block}\n{r.stdout}{r.stderr}"
    if "print(report.ok, len(report.cores))" in block:
        assert r.stdout.strip() == "True 1", r.stdout
