"""The bubblewrap command line: what the sandbox shows a command, and what it hides."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from evalkit.sandbox._policy import Limits

#: System directories shown read-only (symlinks such as merged-/usr ``/bin`` stay symlinks).
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")

#: The parts of ``/etc`` programs need (dynamic linker, users, locale, time zone,
#: alternatives, certificates); the rest of ``/etc`` stays hidden.
ETC_ENTRIES = (
    "/etc/alternatives",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/hosts",
    "/etc/resolv.conf",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/locale.alias",
    "/etc/mime.types",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/gitconfig",
)

#: Variables copied from the parent's environment (nothing else reaches the sandbox).
SAFE_ENV_KEYS = ("PATH", "LANG", "LC_ALL", "TZ")

_FALLBACK_PATH = "/usr/local/bin:/usr/bin:/bin"


@dataclass(frozen=True)
class Mounts:
    """What a sandboxed command may write and read besides the system directories.

    The default is the command sandbox of suites and agents: the workspace is writable. A
    confined command (the ``command:`` optimizer) sees its workspace read-only, may write only
    the files in ``writable`` (each bound over its own path) and a private ``/tmp``, which is
    also its ``HOME``.

    Attributes:
        workspace_writable: Bind the workspace read-write (else read-only).
        writable: Files or directories bound read-write at their own paths.
        readable: Files or directories bound read-only at their own paths.
    """

    workspace_writable: bool = True
    writable: tuple[Path, ...] = ()
    readable: tuple[Path, ...] = ()


def _under(path: str, roots: Iterable[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def interpreter_dirs() -> list[str]:
    """Python installation directories outside the system directories (bound read-only).

    Commands often call ``python``; a virtualenv or pyenv interpreter lives outside ``/usr``.
    """
    dirs: list[str] = []
    for prefix in (sys.prefix, sys.base_prefix, sys.exec_prefix):
        real = os.path.realpath(prefix)
        for candidate in (prefix, real):
            if (
                candidate not in dirs
                and os.path.isdir(candidate)
                and not _under(candidate, SYSTEM_DIRS)
            ):
                dirs.append(candidate)
    return dirs


def visible_roots() -> list[str]:
    """Every directory the sandbox shows read-only."""
    return [*SYSTEM_DIRS, *interpreter_dirs()]


def command_env(workspace: Path, *, sandboxed: bool = True) -> dict[str, str]:
    """The environment of a command: a few safe variables, HOME is the workspace.

    Args:
        workspace: The command's working directory.
        sandboxed: Whether the command runs in the sandbox (PATH then keeps only directories
            the sandbox shows, and TMPDIR is its private ``/tmp``).

    Returns:
        The variables; no credentials or other parent variables are included.
    """
    env = {k: os.environ[k] for k in SAFE_ENV_KEYS if k in os.environ}
    path = env.get("PATH", _FALLBACK_PATH)
    if sandboxed:
        roots = visible_roots()
        kept = [p for p in path.split(os.pathsep) if p and _under(p, roots)]
        path = os.pathsep.join(kept) or _FALLBACK_PATH
        env["TMPDIR"] = "/tmp"
    elif "TMPDIR" in os.environ:
        env["TMPDIR"] = os.environ["TMPDIR"]
    env["PATH"] = path
    env["HOME"] = str(workspace)
    env.setdefault("LANG", "C.UTF-8")
    return env


def _ro(path: str) -> list[str]:
    if os.path.islink(path):
        return ["--symlink", os.readlink(path), path]
    return ["--ro-bind-try", path, path]


def bwrap_argv(
    bwrap: str,
    inner: list[str],
    workspace: Path,
    env: dict[str, str],
    *,
    network: bool,
    mounts: Mounts | None = None,
) -> list[str]:
    """The ``bwrap`` command line running ``inner`` with ``workspace`` as its only writable path.

    Args:
        bwrap: Path of the ``bwrap`` executable.
        inner: The command to run inside.
        workspace: Bound at its own path (read-write unless ``mounts`` says otherwise); the
            working directory.
        env: The command's whole environment (``--clearenv`` drops everything else).
        network: Share the host's network (otherwise only a private loopback exists).
        mounts: Other paths shown, and whether the workspace is writable (default
            :class:`Mounts`: the workspace writable, nothing else).

    Returns:
        The argument vector.
    """
    argv = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    if network:
        argv.append("--share-net")
    for directory in SYSTEM_DIRS:
        if os.path.lexists(directory):
            argv += _ro(directory)
    for entry in ETC_ENTRIES:
        if os.path.lexists(entry):
            argv += _ro(entry)
    ws = str(workspace)
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    mounts = mounts or Mounts()
    interpreters = interpreter_dirs()
    shown = [*SYSTEM_DIRS, *interpreters]
    readable = [str(p) for p in mounts.readable if not _under(str(p), shown)]  # else visible
    writable = [str(p) for p in mounts.writable]
    if not mounts.workspace_writable:
        argv += _read_only_parents([*interpreters, ws, *readable, *writable])
    for directory in interpreters:  # after the private /tmp: a venv under /tmp stays visible
        argv += ["--ro-bind", directory, directory]
    argv += ["--bind" if mounts.workspace_writable else "--ro-bind", ws, ws]
    for path in readable:
        argv += ["--ro-bind", path, path]
    for path in writable:  # after the read-only binds, so a file inside them is writable
        argv += ["--bind", path, path]
    if not mounts.workspace_writable:
        argv += ["--remount-ro", "/"]  # nothing lands in the sandbox's root either
    argv += ["--chdir", ws, "--clearenv"]
    for key, value in sorted(env.items()):
        argv += ["--setenv", key, value]
    return [*argv, "--", *inner]


def _read_only_parents(paths: list[str]) -> list[str]:
    """Directories of the private ``/tmp`` leading to bound paths, created without write access.

    bwrap creates the parent directories of a mount point in the tmpfs it is on; under the
    private ``/tmp`` they would be writable, so a write to a hidden file beside a bound one
    would land there (and vanish) instead of failing. Mode 0555 with every capability dropped
    refuses it (``Permission denied``), also to root.
    """
    parents: list[str] = []
    for path in paths:
        parent = os.path.dirname(path)
        chain = []
        while _under(parent, ["/tmp"]) and parent != "/tmp":
            chain.append(parent)
            parent = os.path.dirname(parent)
        for directory in reversed(chain):
            if directory not in parents:
                parents.append(directory)
    return [arg for d in parents for arg in ("--perms", "0555", "--dir", d)]


def inherited_limit(resource_id: int, wanted: int) -> int:
    """``wanted``, or the lower limit this process already has (a limit cannot be raised).

    Under an inherited ``ulimit -f`` (or ``-v``), asking ``prlimit`` for more than the hard
    limit fails before the command starts; the command gets the inherited limit instead.
    """
    import resource

    soft, hard = resource.getrlimit(resource_id)
    finite = [v for v in (soft, hard) if v != resource.RLIM_INFINITY and v >= 0]
    return min([wanted, *finite])


def limited(inner: list[str], limits: Limits, *, nproc: int | None) -> list[str]:
    """Wrap ``inner`` in ``prlimit`` with the memory, file-size and (optional) process limits.

    A limit this process already has below the wanted one is kept (see :func:`inherited_limit`).
    """
    import resource

    argv = [
        "prlimit",
        f"--as={inherited_limit(resource.RLIMIT_AS, limits.memory_bytes)}",
        f"--fsize={inherited_limit(resource.RLIMIT_FSIZE, limits.file_bytes)}",
        "--core=0",
    ]
    if nproc is not None:
        argv.append(f"--nproc={nproc}")
    return [*argv, "--", *inner]
