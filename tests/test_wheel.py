"""The release artifacts of ``scripts/build-wheels.sh``: a manylinux wheel
for this interpreter's CPython version (the script builds one per version;
here only this one, for time) and an sdist. The wheel is installed into a
fresh virtual environment (no system site-packages) whose ``PATH`` has no ``cargo`` and no ``rustc``,
and its command line trains a tokenizer and encodes with it: the ids must be
those of the bytepair under test.

The wheel is built with the ``dev-fast`` profile and without zig (this
machine's glibc): the profile of ``pip install .`` (pyproject.toml) and of
``scripts/dev-install.sh``, so the test reuses the build that installed the
package under test (the README's test command builds it just before) and
only packs the wheel; from a cold ``target/`` it compiles the crate once in
that profile (measured 2026-12-01: 96 s of CPU).
The release build (fat LTO, manylinux2014 through zig) is the script's
default, not tested here for time.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile

import pytest

from bytepair import Tokenizer
from conftest import ROOT


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    env = dict(os.environ, BYTEPAIR_WHEEL_PROFILE="dev-fast", BYTEPAIR_WHEEL_ZIG="0", PYTHON=sys.executable,
               BYTEPAIR_WHEEL_PYTHONS=f"{sys.version_info.major}.{sys.version_info.minor}")
    r = subprocess.run(["bash", str(ROOT / "scripts" / "build-wheels.sh"), str(out)], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=3600)
    assert r.returncode == 0, r.stderr[-4000:]
    wheels, sdists = sorted(out.glob("*.whl")), sorted(out.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, os.listdir(out)
    return wheels[0], sdists[0]


def test_wheel_is_this_cpythons_manylinux(artifacts):
    wheel, _ = artifacts
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    assert re.fullmatch(rf"bytepair-[\d.]+-{tag}-{tag}-(manylinux[\w.]*_x86_64)\.whl", wheel.name), wheel.name
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        meta = z.read(next(n for n in names if n.endswith(".dist-info/WHEEL"))).decode()
        entry_points = z.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    assert "Root-Is-Purelib: false" in meta and re.search(rf"Tag: {tag}-{tag}-manylinux", meta)
    assert any(re.fullmatch(rf"bytepair/_core\.cpython-{tag[2:]}-x86_64-linux-gnu\.so", n) for n in names), names
    assert "bytepair/py.typed" in names and "bytepair/cli/__init__.py" in names
    assert re.search(r"^bytepair ?= ?bytepair\.cli:main$", entry_points, re.M), entry_points


def test_sdist_holds_what_a_build_needs(artifacts):
    _, sdist = artifacts
    with tarfile.open(sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    for needed in ["pyproject.toml", "Cargo.toml", "Cargo.lock", "src/lib.rs", "src/py/mod.rs", "src/pipeline/mod.rs",
                   "python/bytepair/__init__.py", "python/bytepair/cli/__init__.py", "README.md"]:
        assert needed in names, needed


def test_wheel_installs_and_runs_without_rust(artifacts, tmp_path):
    wheel, _ = artifacts
    venv = tmp_path / "venv"
    # without pip of its own (ensurepip costs seconds): this interpreter's pip installs into it (--python)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    bin_dir = venv / "bin"
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env.update(PATH=f"{bin_dir}:/usr/bin:/bin", CARGO_HOME=str(tmp_path / "no-cargo"),
               RUSTUP_HOME=str(tmp_path / "no-rustup"), PIP_DISABLE_PIP_VERSION_CHECK="1")
    for tool in ("cargo", "rustc"):
        assert shutil.which(tool, path=env["PATH"]) is None, tool
    # binary wheels only: nothing may be compiled (the dependencies are pure Python or have wheels)
    r = subprocess.run([sys.executable, "-m", "pip", "--python", str(bin_dir / "python"), "install", "-q",
                        "--only-binary=:all:", str(wheel)],
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    r = subprocess.run([str(bin_dir / "python"), "-c", "import bytepair._core as c; print(c.__file__)"],
                       env=env, capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.startswith(str(venv)), (r.stdout, r.stderr)

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the quick brown fox jumps over the lazy dog\n" * 50 + "naïve café 日本語\n" * 10, encoding="utf-8")
    tok_path = tmp_path / "tok.json"
    r = subprocess.run([str(bin_dir / "bytepair"), "train", str(corpus), "--vocab-size", "300", "-o", str(tok_path)],
                       env=env, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    text = "the lazy fox, naïve café"
    r = subprocess.run([str(bin_dir / "bytepair"), "encode", "-t", str(tok_path), text],
                       env=env, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    ours = Tokenizer.train([corpus.read_text(encoding="utf-8")], vocab_size=300)
    assert Tokenizer.load(str(tok_path)).merges == ours.merges
    assert [int(i) for i in r.stdout.split()] == ours.encode(text)
