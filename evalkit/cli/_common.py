"""Shared CLI helpers: the options several commands take, JSON output, key=value parsing."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from evalkit._plain import json_text
from evalkit._redact import redact_value
from evalkit._settings import CONCURRENCY, N_RESAMPLES, RUNS_DIR, SEED
from evalkit._terminal import json_escaped, underneath
from evalkit.errors import ConfigError

#: Exit code of ``evalkit run`` when the run finished but failed: every item of the run, or of
#: a condition or provider, ended in an error (0 ok, 1 check failed, 2 bad input/config,
#: 130/143 interrupted).
EXIT_RUN_FAILED = 3


def print_json(data: dict[str, Any]) -> None:
    r"""Print one JSON object on stdout (NaN and infinities become null).

    Every display control of the data is a ``\uXXXX`` escape (``evalkit._terminal``): the
    JSON decodes to the data's strings and holds nothing a terminal would obey. Keys in the
    data are redacted (:func:`evalkit._redact.redact_value`), as on every page.
    """
    # Redacted as values (the JSON stays valid), then written beneath the text wrapper: the
    # escaped JSON holds no display control, and a second pass over megabytes would be slow.
    out = underneath(sys.stdout)
    out.write(json_escaped(json_text(redact_value(data))) + "\n")
    out.flush()


class _Result(Protocol):
    def to_dict(self) -> dict[str, Any]: ...


def printed_json(args: argparse.Namespace, result: _Result) -> bool:
    """With ``--json``, print ``result.to_dict()`` (:func:`print_json`); whether it did."""
    if args.json:
        print_json(result.to_dict())
    return bool(args.json)


def eprint(message: str) -> None:
    """Print to stderr."""
    sys.stderr.write(message.rstrip("\n") + "\n")
    sys.stderr.flush()


def parse_key_values(values: list[str] | None, flag: str) -> dict[str, str]:
    """Parse repeated ``KEY=VALUE`` options.

    Raises:
        ConfigError: A value without ``=``.
    """
    out: dict[str, str] = {}
    for raw in values or []:
        key, sep, value = raw.partition("=")
        if not sep or not key:
            raise ConfigError(f"{flag} expects KEY=VALUE, got '{raw}'")
        out[key.strip()] = value
    return out


def split_csv(value: str | None) -> tuple[str, ...]:
    """Split a comma-separated option into a tuple (empty when None)."""
    if not value:
        return ()
    return tuple(v.strip() for v in value.split(",") if v.strip())


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    """Add ``--json``: one JSON object on stdout and nothing else there."""
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object on stdout (progress on stderr)"
    )


#: A command's handler: parsed arguments in, exit code out.
Handler = Callable[[argparse.Namespace], int]

BACKENDS = ("loky", "threading", "dask", "ray")


def add_common_options(
    parser: argparse.ArgumentParser,
    handler: Handler,
    *,
    runs_dir_help: str | None = "where run ids are looked up",
) -> None:
    """Finish a command's parser: ``--runs-dir`` (unless None), ``--json`` and its handler.

    Args:
        parser: The command's parser.
        handler: The function that runs the command.
        runs_dir_help: Help text of ``--runs-dir`` (its default is added); None when the
            command takes no runs directory.
    """
    if runs_dir_help is not None:
        RUNS_DIR.add_argument(parser, what=runs_dir_help)
    add_json_flag(parser)
    parser.set_defaults(func=handler)


def add_bootstrap_options(parser: argparse.ArgumentParser) -> None:
    """``--resamples`` and ``--seed`` of a case-bootstrap interval."""
    N_RESAMPLES.add_argument(parser)
    SEED.add_argument(parser)


def add_roles_option(parser: argparse.ArgumentParser, when: str = "") -> None:
    """``--roles COND=ROLE,...``: which condition plays each lift role."""
    parser.add_argument(
        "--roles",
        metavar="COND=ROLE,...",
        help=f"{when}which condition plays each role, e.g. none=A,self-load=B,preloaded=C,"
        "stale=D (A baseline, B self-load, C oracle, D stale; default those names)",
    )


def add_provider_filter(parser: argparse.ArgumentParser) -> None:
    """``--provider P[,Q]`` of the analysis commands: keep only these providers."""
    parser.add_argument(
        "--provider",
        dest="providers",
        metavar="P[,Q]",
        help="keep only these providers (comma-separated; default every provider)",
    )


def add_provider_options(parser: argparse.ArgumentParser, provider_help: str) -> None:
    """``--provider`` and the repeatable ``--provider-opt KEY=VALUE``."""
    parser.add_argument("--provider", help=provider_help)
    parser.add_argument(
        "--provider-opt", action="append", metavar="KEY=VALUE", help="provider setting (repeatable)"
    )


def provider_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The options of :func:`add_provider_options` as ``provider`` and ``provider_options``.

    Raises:
        ConfigError: A ``--provider-opt`` that is not ``KEY=VALUE``.
    """
    return {
        "provider": args.provider,
        "provider_options": parse_key_values(args.provider_opt, "--provider-opt"),
    }


def add_execution_options(parser: argparse.ArgumentParser) -> None:
    """Where and how work items run: concurrency, backend, runs directory, run id, resume."""
    CONCURRENCY.add_argument(parser)
    parser.add_argument(
        "--backend", default="loky", choices=BACKENDS, help="joblib backend (default loky)"
    )
    RUNS_DIR.add_argument(parser, what="where runs are written")
    parser.add_argument("--run-id", help="run id (default: timestamp plus random suffix)")
    parser.add_argument(
        "--resume", action="store_true", help="continue a partial run (needs --run-id)"
    )


def execution_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The options of :func:`add_execution_options`, checked, as keyword arguments.

    Raises:
        ConfigError: ``--resume`` without ``--run-id``. (``--concurrency`` is checked by
            :class:`~evalkit.runner.RunConfig`; see ``cli/_flags.py``.)
    """
    if args.resume and not args.run_id:
        raise ConfigError("--resume needs --run-id (the run to continue)")
    return {
        "concurrency": args.concurrency,
        "backend": args.backend,
        "runs_dir": Path(args.runs_dir),
        "run_id": args.run_id,
        "resume": args.resume,
    }


def pick(args: argparse.Namespace, *names: str) -> dict[str, Any]:
    """Options passed on unchanged: ``{name: args.name}`` for keyword arguments of a call."""
    return {name: getattr(args, name) for name in names}


def add_futility_options(group: argparse._ActionsContainer) -> None:
    """``--plan-effect`` and ``--futility-beta``: the planned-effect futility boundary."""
    group.add_argument(
        "--plan-effect",
        type=float,
        metavar="E",
        help="also stop as futile once the planned effect E (e.g. 0.1 for 10 pp) is excluded: "
        "an e-process against 'difference >= E' reaching 1/beta (docs/statistics.md)",
    )
    group.add_argument(
        "--futility-beta",
        type=float,
        metavar="BETA",
        help="with --plan-effect: chance of stopping futile when the true effect is at least "
        "E (default 0.2)",
    )


def futility_arguments(args: argparse.Namespace) -> dict[str, Any]:
    """``plan_effect`` and ``futility_beta`` of the command line (refused: beta alone)."""
    if args.futility_beta is not None and args.plan_effect is None:
        raise ConfigError("--futility-beta: only with --plan-effect E (e.g. --plan-effect 0.1)")
    return {"plan_effect": args.plan_effect, "futility_beta": args.futility_beta}


_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "kib": 1 << 10, "m": 10**6, "mb": 10**6,
          "mib": 1 << 20, "g": 10**9, "gb": 10**9, "gib": 1 << 30, "t": 10**12, "tb": 10**12,
          "tib": 1 << 40}  # fmt: skip


def byte_size(text: str) -> int:
    """A size such as ``2GiB``, ``500MB`` or ``1048576`` in bytes (an argparse type)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text)
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in _UNITS or float(match.group(1)) * _UNITS[unit] < 1:
        raise argparse.ArgumentTypeError(
            f"'{text}' is not a size; give bytes or a number with a unit (500MiB, 2GiB, 1GB)"
        )
    return int(float(match.group(1)) * _UNITS[unit])
