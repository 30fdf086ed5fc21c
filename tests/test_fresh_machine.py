"""The README's test command on a fresh machine (issue 16, item 1).

- CI (`.ci/run`) runs exactly the README's command;
- `scripts/test.sh` installs the headless browser when chromium is missing
  (checked with stub `apt-get`/`cargo`/`python3` on a PATH without chromium);
- `scripts/test.sh --install` (the README's command) installs the package with
  its test extra, the dependencies beside the wheel's build, llama.cpp (the GGUF
  tests' oracle) among them, prebuilt;
- the tests that interrupt a child pass when the suite itself runs with
  SIGINT ignored, as `cmd &`, `nohup` and `setsid` start it.
"""

from __future__ import annotations

import os
import pathlib
import shlex
import shutil
import stat
import subprocess
import sys
import tomllib
from typing import Optional

ROOT = pathlib.Path(__file__).resolve().parents[1]


def readme_test_command() -> str:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Run the whole test suite"))
    return next(line.strip() for line in lines[start + 1:] if line.startswith("    "))


def test_ci_runs_exactly_the_readme_command():
    command = readme_test_command()
    assert command == "bash scripts/test.sh --install"
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    assert command in ci
    # nothing else installs or tests: the command alone must be enough
    others = [line for line in ci if line and not line.startswith("#") and line != command]
    assert all(line.startswith(("set ", "cd ", "export ")) for line in others), others


def _stub(path: pathlib.Path, body: str) -> None:
    path.write_text("#!/bin/bash\n" + body, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def _run_test_sh(tmp_path: pathlib.Path, with_browser: bool, args=("-x",), apt_fails: bool = False, apt_locked: int = 0, dependencies_fail: bool = False, check: bool = True,
                 env: Optional[dict] = None):
    """Runs a copy of scripts/test.sh (and its install scripts) with a PATH
    of stubs: returns the commands they ran, in order; with ``check`` false,
    the run itself too. With
    ``apt_locked``, that many apt-get runs fail first on the package lists'
    lock, as when another apt-get update runs beside it; with
    ``dependencies_fail``, pip cannot install the requirements. The
    browser installs in the background while cargo runs: its commands
    interleave with cargo's."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    for name in ("test.sh", "ci-browser.sh"):
        shutil.copy(ROOT / "scripts" / name, repo / "scripts" / name)
    shutil.copy(ROOT / "pyproject.toml", repo / "pyproject.toml")
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    log = tmp_path / "log"
    for tool in ("bash", "dirname", "id", "cat", "chmod", "mktemp", "rm", "mkdir", "nice", "touch", "cp"):
        os.symlink(shutil.which(tool), bin_ / tool)
    record = f'echo "$(basename "$0") $*" >> {log}\n'
    browser = f'{record}echo "$(basename "$0") 1.0"\n'
    _stub(bin_ / "basename", 'echo "${1##*/}"\n')
    # apt-get install puts chromium and chromedriver on the PATH, as Debian's packages do
    install = "".join(f"printf '%s' '{browser}' > {bin_}/{b}; chmod +x {bin_}/{b}\n" for b in ("chromium", "chromedriver"))
    fail = 'if [[ " $* " == *" install "* ]]; then echo "E: Unable to locate package chromium" >&2; exit 100; fi\n'
    counter = tmp_path / "apt-runs"
    locked = (f'n=$(( $(cat {counter} 2>/dev/null || echo 0) + 1 )); echo $n > {counter}\n'
              f'if [ $n -le {apt_locked} ]; then echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by'
              f' process 4242 (apt-get)" >&2; exit 100; fi\n')
    _stub(bin_ / "apt-get", record + locked + (fail if apt_fails else "")
          + f'if [[ " $* " == *" install "* ]]; then\n{install}fi\n')
    _stub(bin_ / "sleep", f'echo "sleep $*" >> {log}\n')
    _stub(bin_ / "sudo", 'exec "$@"\n')
    # what the builds and the Pythons run with: the environment that test.sh exports
    environment = (f'echo "$(basename "$0") $1 $2 LTO=${{CARGO_PROFILE_DEV_FAST_LTO-}}'
                   f' NOPYC=${{PYTHONDONTWRITEBYTECODE-}}" >> {tmp_path / "environment"}\n')
    _stub(bin_ / "cargo", record + environment)
    # python3's -c scripts run; `pip wheel` makes bytepair's wheel, and `pip install --target DIR` puts uv in
    # DIR/bin: a stub whose `uv pip install -r` keeps a copy of the requirements
    wheel = ('if [ "$3" = "wheel" ]; then\n'
             '  prev=""; for a in "$@"; do if [ "$prev" = "--wheel-dir" ]; then dir="$a"; fi; prev="$a"; done\n'
             '  mkdir -p "$dir"; : > "$dir/bytepair-1.0-cp38-abi3-linux_x86_64.whl"\n'
             'fi\n')
    uv = (record + 'prev=""; for a in "$@"; do if [ "$prev" = "-r" ]; then\n'
          f'  cp "$a" {tmp_path}/requirements.txt\n'
          + ('  echo "error: No solution found: tiktoken>=0.7 is not available" >&2; exit 1\n' if dependencies_fail else '')
          + 'fi; prev="$a"; done\n')
    target = ('if [ "$3" = "install" ] && [ "$5" = "--target" ]; then\n'
              f'  mkdir -p "$6/bin"; printf \'%s\' {shlex.quote("#!/bin/bash" + chr(10) + uv)} > "$6/bin/uv"; chmod +x "$6/bin/uv"\n'
              'fi\n')
    _stub(bin_ / "python3", 'args="$*"; echo "$(basename "$0") ${args//$\'\\n\'/ }" >> ' + f'{log}\n' + environment +
          f'if [ "$1" = "-c" ]; then exec {sys.executable} "$@"; fi\n'
          f'if [ "$2" = "pip" ]; then\n{wheel}{target}fi\n')
    if with_browser:
        for b in ("chromium", "chromedriver"):
            _stub(bin_ / b, browser)
    done = subprocess.run(["/bin/bash", str(repo / "scripts" / "test.sh"), *args], env={"PATH": str(bin_), **(env or {})},
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    calls = log.read_text(encoding="utf-8").splitlines()
    if not check:
        return calls, done
    assert done.returncode == 0, done.stderr
    return calls


PYTEST = "python3 -m pytest -q -n auto --dist loadfile --no-loadscope-reorder -x"
CARGO = "cargo test --lib --no-default-features --profile dev-fast --config profile.dev-fast.package.bytepair.opt-level=1 --quiet"
BROWSER = ("apt-get", "chromium", "chromedriver")


FETCH = ["python3 scripts/get_vocabs.py", "python3 scripts/get_published.py", "python3 scripts/get_gguf_vocabs.py",
         "python3 scripts/get_tokenizers.py"]


def _fetch_calls(calls: list) -> list:
    return [c for c in calls if c in FETCH]


def test_test_sh_installs_the_browser_when_chromium_is_missing(tmp_path):
    calls = _run_test_sh(tmp_path, with_browser=False)
    browser = [c for c in calls if c.split()[0] in BROWSER]
    names = [c.split()[0] for c in browser]
    assert names == ["apt-get", "apt-get", "chromium", "chromedriver"]
    assert " update" in browser[0]
    assert " install " in browser[1] and "chromium" in browser[1].split() and "chromium-driver" in browser[1].split()
    assert [c for c in calls if c.split()[0] == "cargo"] == [CARGO]
    assert _fetch_calls(calls) == FETCH  # the tests' data, fetched in order before pytest
    assert len(calls) == len(browser) + 2 + len(FETCH)
    # pytest last: after the browser is installed and the Rust tests have passed
    assert calls[-1] == PYTEST


def test_test_sh_leaves_an_installed_browser_alone(tmp_path):
    calls = _run_test_sh(tmp_path, with_browser=True)
    assert sorted(calls[:-1]) == sorted([CARGO, *FETCH])
    assert _fetch_calls(calls) == FETCH
    assert calls[-1] == PYTEST


def _install_calls(tmp_path: pathlib.Path, **options) -> list:
    """`test.sh --install`'s calls, its temporary folder named WORK, the wait for the wheel left out."""
    calls = _run_test_sh(tmp_path, args=("--install", "-x"), **options)
    build = next(c for c in calls if c.startswith("python3 -m pip wheel") and c.endswith(" ."))
    work = build.split("--wheel-dir ")[1].split()[0].removesuffix("/wheel")
    return [c.replace(work, "WORK").replace(UV_PYTHON, "") for c in calls if c != "sleep 1"]


# uv installs into python3's environment (the interpreter's path, which the stub's `python3 -c` prints); Python
# writes the bytecode of what the tests import (scripts/test.sh unsets PYTHONDONTWRITEBYTECODE)
UV_PYTHON = f" --python {sys.executable} --system"


WHEEL = "WORK/wheel/bytepair-1.0-cp38-abi3-linux_x86_64.whl"


def test_install_builds_the_wheel_beside_the_dependencies_then_installs_it_with_its_test_extra(tmp_path):
    calls = _install_calls(tmp_path, with_browser=True)
    # the dependencies (pyproject.toml's, and its test extra) and the wheel's build are both done before the
    # wheel is installed, then checked complete with the extra; bytepair's own data files come after
    installs = ["python3 -m pip install --quiet --target WORK/uv uv>=0.5",
                "uv pip install -r WORK/requirements.txt",
                f"uv pip install --reinstall --no-deps {WHEEL}",
                f"uv pip install {WHEEL}[test]",
                "python3 scripts/get_tokenizers.py"]
    at = [calls.index(c) for c in installs]
    assert at == sorted(at)
    assert calls.index("python3 -m pip wheel --no-deps --wheel-dir WORK/wheel .") < at[2]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = (tmp_path / "requirements.txt").read_text(encoding="utf-8").splitlines()
    assert requirements == project.get("dependencies", []) + project["optional-dependencies"]["test"]
    assert _fetch_calls(calls)[:3] == FETCH[:3] and _fetch_calls(calls)[3:] == FETCH[3:]
    # nothing but bytepair's wheel is built (llama.cpp comes prebuilt with the test extra); pytest last
    assert [c for c in calls if " pip wheel " in c] == ["python3 -m pip wheel --no-deps --wheel-dir WORK/wheel ."]
    assert calls.count(CARGO) == 1 and calls[-1] == PYTEST


def test_the_suite_builds_without_thin_lto_and_writes_the_bytecode_it_imports(tmp_path):
    """The wheel, the Rust tests and pytest (whose tests/test_wheel.py builds the crate again, from the same
    target/) run with the dev-fast profile's ThinLTO off, and with PYTHONDONTWRITEBYTECODE unset even where the
    caller set it: the installs do not compile every package's bytecode, so Python writes what is imported."""
    _install_calls(tmp_path, with_browser=True, env={"PYTHONDONTWRITEBYTECODE": "1"})
    runs = (tmp_path / "environment").read_text(encoding="utf-8").splitlines()
    wanted = ["python3 -m pip", "cargo test --lib", "python3 -m pytest"]
    seen = [run for run in runs if any(run.startswith(w + " ") for w in wanted)]
    assert sorted({" ".join(run.split()[:3]) for run in seen}) == sorted(wanted), runs
    assert all(run.endswith(" LTO=off NOPYC=") for run in seen), seen


def test_the_oracle_of_the_gguf_tests_is_the_llama_cpp_its_bindings_declare():
    """tests/llama_cpp_ref.py declares llama.cpp's C API as one xllamacpp version ships it (a struct passed by
    value): the test extra pins that version."""
    import llama_cpp_ref
    test_extra = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"]["test"]
    assert f"xllamacpp=={llama_cpp_ref.XLLAMACPP_VERSION}" in test_extra


def test_install_keeps_pips_index_settings(tmp_path):
    index = {"PIP_INDEX_URL": "https://mirror.example/simple", "PIP_EXTRA_INDEX_URL": "https://extra.example/simple"}
    calls = _install_calls(tmp_path, with_browser=True, env=index)
    uv = [c for c in calls if c.startswith("uv pip install")]
    assert len(uv) == 3  # the dependencies, the wheel, its extra
    assert all(" --index-url https://mirror.example/simple --extra-index-url https://extra.example/simple " in c
               for c in uv), uv


def test_install_fails_with_the_installers_log_when_a_dependency_cannot_be_installed(tmp_path):
    calls, done = _run_test_sh(tmp_path, with_browser=True, args=("--install", "-x"), dependencies_fail=True,
                               check=False)
    assert done.returncode != 0
    assert "No solution found: tiktoken>=0.7 is not available" in done.stderr and "log above" in done.stderr
    assert PYTEST not in calls and not [c for c in calls if "--reinstall" in c]


def test_a_failed_background_install_fails_the_run_with_its_log(tmp_path):
    """The browser's install fails (apt-get cannot find chromium): test.sh prints its log and exits non-zero,
    and pytest never starts."""
    calls, done = _run_test_sh(tmp_path, with_browser=False, apt_fails=True, check=False)
    assert done.returncode != 0
    assert "E: Unable to locate package chromium" in done.stderr and "log above" in done.stderr
    assert CARGO in calls and PYTEST not in calls


def test_the_browser_install_waits_for_another_apt_run_holding_the_lists_lock(tmp_path):
    """`apt-get update` fails at once when another one holds the package lists' lock (DPkg::Lock::Timeout covers
    only dpkg's): ci-browser.sh tries again every 5 s, so the run passes once the other apt is done."""
    calls = _run_test_sh(tmp_path, with_browser=False, apt_locked=2)
    browser = [c for c in calls if c.split()[0] in BROWSER + ("sleep",)]
    assert [c.split()[0] for c in browser] == ["apt-get", "sleep", "apt-get", "sleep", "apt-get", "apt-get",
                                               "chromium", "chromedriver"]
    assert all(" update" in browser[i] for i in (0, 2, 4)) and " install " in browser[5]
    assert browser[1] == "sleep 5" and calls[-1] == PYTEST


def test_the_rust_tests_are_the_library_unit_tests():
    """scripts/test.sh runs `cargo test --lib`: the crate has no doctests (no code block in a doc comment), no
    tests/*.rs and no other test target that it would leave out."""
    assert not [p for p in (ROOT / "src").rglob("*.rs") if "```" in p.read_text(encoding="utf-8")]
    assert not list((ROOT / "tests").glob("*.rs")) and not list((ROOT / "benches").glob("*.rs"))
    assert not list(ROOT.glob("examples/*.rs")) and not (ROOT / "src" / "main.rs").exists()
    assert not (ROOT / "src" / "bin").exists()
    cargo = (ROOT / "Cargo.toml").read_text(encoding="utf-8")
    assert not any(f"[[{kind}]]" in cargo for kind in ("test", "bin", "example", "bench"))


def test_the_quick_tier_runs_pytest_alone_without_the_slow_tests(tmp_path):
    """`--quick`: no browser install, no Rust tests; pytest without the tests marked slow."""
    calls = _run_test_sh(tmp_path, with_browser=False, args=("--quick", "-x"))
    assert calls == ["python3 -m pytest -q -n auto --dist loadfile --no-loadscope-reorder -m not slow -x"]


def test_the_files_left_out_of_the_quick_tier_exist():
    """conftest.SLOW names test files (or node ids in them): a name that matches nothing would leave a slow file
    in the quick tier without a word."""
    from conftest import SLOW, FIRST
    for name in sorted(SLOW) + FIRST:
        assert (ROOT / "tests" / name.split("::")[0]).is_file(), name


def test_readme_names_the_quick_tier_next_to_the_test_command():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Run the whole test suite"))
    assert any("bash scripts/test.sh --quick" in line for line in lines[start:start + 12])


def _in_background(command: str) -> subprocess.CompletedProcess:
    """Runs COMMAND as a shell starts a background job: SIGINT ignored, no
    terminal (a new session), stdin closed."""
    return subprocess.run(["bash", "-c", f'trap "" INT; {command}'], cwd=ROOT, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, start_new_session=True, timeout=600)


def test_a_background_job_ignores_sigint():
    """The condition the next test reproduces: a child of such a job starts with SIGINT ignored."""
    done = _in_background(f"{sys.executable} -c 'import signal; print(signal.getsignal(signal.SIGINT) == signal.SIG_IGN)'")
    assert done.stdout.strip() == "True"


def test_sigint_tests_pass_when_the_suite_runs_in_the_background():
    done = _in_background(
        f"{sys.executable} -m pytest -q -p no:cacheprovider "
        "tests/test_progress.py::test_ctrl_c_stops_training_promptly_and_writes_nothing "
        "'tests/test_limits.py::test_kill_during_training_keeps_the_previous_tokenizer[2]'")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "2 passed" in done.stdout
