"""Running agent CLIs: binary lookup, isolated directories, allowlisted environment, timeouts.

A CLI agent runs with

- stdin from ``/dev/null`` and its working directory set to the item's workspace;
- an environment built from an allowlist (:func:`cli_env`): nothing of the caller's
  environment leaks in except ``PATH``, the locale, the variables the provider needs (its API
  key) and those the user names in ``pass_env``;
- a private ``HOME``, config directory and ``TMPDIR`` per invocation (:func:`agent_dirs`),
  removed afterwards;
- its own session (``start_new_session``): on timeout, and after every exit, the whole process
  group is killed, together with any process that carries the invocation's marker variable
  (``EVALKIT_RUN_MARK``) in its environment, so tools that started their own session (PTYs,
  daemons) die too.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from evalkit._redact import clip_tail
from evalkit.errors import AgentCrashed, ConfigError
from evalkit.sandbox import start_in_new_session

#: Variables every CLI gets from the caller's environment (when set).
BASE_ENV_KEYS = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ")

#: Name of the variable that marks every process of one invocation.
MARK_VAR = "EVALKIT_RUN_MARK"


def find_binary(setting: str | None, env_var: str, name: str, provider: str) -> str:
    """Locate a CLI: the ``binary`` setting, else ``$env_var``, else ``name`` on ``PATH``.

    Args:
        setting: The provider's ``binary`` setting.
        env_var: Environment variable that may name the binary (e.g. ``EVALKIT_CLAUDE_BIN``).
        name: Executable name looked up on ``PATH``.
        provider: Provider name, for the error message.

    Returns:
        Absolute path of an executable file.

    Raises:
        ConfigError: Nothing executable was found.
    """
    candidate = setting or os.environ.get(env_var) or shutil.which(name)
    origin = "binary" if setting else env_var if os.environ.get(env_var) else "PATH"
    if candidate:
        found = shutil.which(candidate) if os.sep not in candidate else candidate
        if found and os.path.isfile(found) and os.access(found, os.X_OK):
            return str(Path(found).resolve())
    raise ConfigError(
        f"--provider-opt binary for '{provider}': no executable '{candidate or name}' "
        f"(looked at {origin}); run scripts/install-agent-clis.sh (installs into .tools/npm) "
        f"and pass binary=.tools/npm/node_modules/.bin/{name}, set {env_var}, or put "
        f"'{name}' on PATH"
    )


def cli_env(
    provider_vars: Mapping[str, str],
    pass_env: Iterable[str] = (),
    *,
    base: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The allowlisted environment of a CLI invocation.

    Args:
        provider_vars: Variables the provider sets (HOME, config dirs, keys, switches).
        pass_env: Names of caller variables the user explicitly passes through.
        base: The caller's environment (default: ``os.environ``).

    Returns:
        ``PATH`` and locale from the caller, then ``pass_env``, then ``provider_vars``.
    """
    source = os.environ if base is None else base
    env = {k: source[k] for k in BASE_ENV_KEYS if k in source}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.setdefault("LANG", "C.UTF-8")
    env.update({k: source[k] for k in pass_env if k in source})
    env.update(provider_vars)
    return env


@dataclass(frozen=True)
class AgentDirs:
    """Private directories of one invocation (all under ``root``).

    Attributes:
        root: The invocation's private directory (parent of ``home`` and ``config``).
        home: ``HOME``.
        config: The CLI's config directory (``CLAUDE_CONFIG_DIR`` or ``CODEX_HOME``).
        tmp: ``TMPDIR``, outside ``root`` (so the config directory is never under it).
    """

    root: Path
    home: Path
    config: Path
    tmp: Path


@contextlib.contextmanager
def agent_dirs(prefix: str, state_dir: str | None = None) -> Iterator[AgentDirs]:
    """Create private HOME/config/TMPDIR directories; remove them afterwards.

    ``TMPDIR`` is a short directory of its own in the system temp directory, whatever
    ``state_dir`` is: agents put Unix sockets there, whose paths must stay under 108 bytes.

    Args:
        prefix: Name prefix of the directory (e.g. ``evalkit-codex-``).
        state_dir: Parent of HOME and the config directory (default: the system temp
            directory).

    Yields:
        The directories.
    """
    if state_dir:
        Path(state_dir).mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix=prefix, dir=state_dir)).resolve()
    tmp = Path(tempfile.mkdtemp(prefix="ek-")).resolve()
    dirs = AgentDirs(root, root / "home", root / "config", tmp)
    for path in (dirs.home, dirs.config):
        path.mkdir(mode=0o700)
    try:
        yield dirs
    finally:
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)


@dataclass
class CliResult:
    """What a CLI invocation produced.

    Attributes:
        lines: Stdout lines (without newlines), in order.
        stderr: Stderr (the last 20,000 characters).
        returncode: Exit code; ``None`` when evalkit killed it.
        elapsed_s: Wall-clock seconds.
        timed_out: Whether the time limit killed it.
        aborted: Why ``on_line`` stopped it early, or ``""``.
    """

    lines: list[str] = field(default_factory=list)
    stderr: str = ""
    returncode: int | None = None
    elapsed_s: float = 0.0
    timed_out: bool = False
    aborted: str = ""


LineHook = Callable[[str], str | None]
"""Called with each stdout line; returning a non-empty reason stops the CLI."""


def run_cli(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    timeout_s: float,
    on_line: LineHook | None = None,
) -> CliResult:
    """Run a CLI to completion or until its deadline, then kill everything it started.

    Args:
        argv: Command line.
        cwd: Working directory (the item's workspace).
        env: Complete environment (see :func:`cli_env`); a marker variable is added.
        timeout_s: Wall-clock limit.
        on_line: Optional hook on each stdout line that may stop the run early.

    Returns:
        The output; never raises on a non-zero exit or a timeout.

    Raises:
        AgentCrashed: The binary could not be started.
    """
    mark = uuid.uuid4().hex
    env = dict(env, **{MARK_VAR: mark})
    result = CliResult()
    started = time.monotonic()
    try:
        proc = start_in_new_session(argv, cwd=cwd, env=env, stderr=subprocess.PIPE)
    except OSError as exc:
        raise AgentCrashed(f"cannot start {argv[0]}: {exc}") from exc
    stop = threading.Event()
    stderr_chunks: list[bytes] = []
    err_thread = threading.Thread(
        target=lambda: stderr_chunks.append(proc.stderr.read() if proc.stderr else b""),
        daemon=True,
    )
    out_thread = threading.Thread(
        target=_read_lines, args=(proc, result, on_line, stop), daemon=True
    )
    err_thread.start()
    out_thread.start()
    try:
        deadline = started + timeout_s
        while proc.poll() is None:
            if stop.wait(min(0.05, max(0.0, deadline - time.monotonic()))):
                break
            if time.monotonic() >= deadline:
                result.timed_out = True
                break
    finally:
        kill_tree(proc.pid, mark)
        proc.wait()
        out_thread.join(timeout=5)
        err_thread.join(timeout=5)
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
    result.returncode = None if (result.timed_out or result.aborted) else proc.returncode
    result.stderr = clip_tail(b"".join(stderr_chunks).decode("utf-8", "replace"), 20000)
    result.elapsed_s = time.monotonic() - started
    return result


def _read_lines(
    proc: subprocess.Popen[bytes], result: CliResult, on_line: LineHook | None,
    stop: threading.Event,
) -> None:
    if proc.stdout is None:  # pragma: no cover - Popen(stdout=PIPE) always sets it
        return
    for raw in proc.stdout:
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        result.lines.append(line)
        if on_line is not None and not result.aborted:
            try:
                reason = on_line(line)
            except Exception:  # noqa: BLE001 - a broken hook must not lose the output
                on_line, reason = None, None
            if reason:
                result.aborted = reason
                stop.set()


def kill_tree(pgid: int, mark: str | None = None) -> None:
    """SIGKILL a process group and every process whose environment carries ``mark``.

    Args:
        pgid: Process group id (the leader's pid, as started with ``start_new_session``).
        mark: Value of :data:`MARK_VAR` of the invocation, or ``None``.
    """
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    if mark:
        for pid in marked_pids(mark):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def marked_pids(mark: str) -> list[int]:
    """Pids of live processes whose environment contains ``EVALKIT_RUN_MARK=mark`` (Linux).

    Args:
        mark: The marker value.

    Returns:
        Matching pids (empty where ``/proc`` is unavailable).
    """
    needle = f"{MARK_VAR}={mark}".encode()
    found = []
    proc = Path("/proc")
    if not proc.is_dir():
        return []
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


@lru_cache(maxsize=16)
def detect_version(binary: str, mtime_ns: int) -> str:
    """``BINARY --version`` (first line), cached per binary and modification time.

    Args:
        binary: Absolute path of the CLI.
        mtime_ns: Its modification time (a reinstall invalidates the cache).

    Returns:
        The version line, or ``unknown (...)`` when it cannot be run.
    """
    del mtime_ns  # part of the cache key only
    with tempfile.TemporaryDirectory(prefix="evalkit-version-") as home:
        env = cli_env({"HOME": home, "DISABLE_AUTOUPDATER": "1", "NO_COLOR": "1"})
        try:
            out = subprocess.run(
                [binary, "--version"],
                env=env,
                cwd=home,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=30,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"unknown ({type(exc).__name__})"
    text = out.stdout.decode("utf-8", "replace").strip().splitlines()
    return text[0].strip() if text and out.returncode == 0 else f"unknown (exit {out.returncode})"


def binary_version(binary: str) -> str:
    """The CLI's version line (detected once per binary and process)."""
    try:
        mtime = os.stat(binary).st_mtime_ns
    except OSError:
        mtime = 0
    return detect_version(binary, mtime)


def version_number(line: str) -> str:
    """The version number in a ``--version`` line.

    Examples:
        >>> version_number("2.1.332 (Claude Code)")
        '2.1.332'
        >>> version_number("codex-cli 0.171.0")
        '0.171.0'
    """
    match = re.search(r"\d+(?:\.\d+)+(?:[-+.][0-9A-Za-z.]+)?", line)
    return match.group(0) if match else line
