"""``evalkit judge RUN``: re-grade a run's expectations without rerunning the agent."""

from __future__ import annotations

import argparse
import shlex
import sys

from evalkit.cli._common import add_json_flag, parse_key_values, print_json
from evalkit.errors import ConfigError
from evalkit.judge import judge_run


def add_judge_flags(p: argparse.ArgumentParser) -> None:
    """``--judge-provider``, ``--judge-model`` and ``--judge-opt`` (shared with ``run``)."""
    p.add_argument(
        "--judge-provider",
        help="judge of the expectations: simulated, anthropic, openai_compat, claude_code ... "
        "(default: the suite's judge)",
    )
    p.add_argument("--judge-model", help="judge model")
    p.add_argument(
        "--judge-opt", action="append", metavar="KEY=VALUE", help="judge setting (repeatable)"
    )


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``evalkit judge``."""
    p = sub.add_parser(
        "judge",
        help="re-grade a run's expectations (e.g. with another judge) into a new run",
        description="Grade the expectations of an existing run again, without rerunning the "
        "agent: the new run shares the agent outcomes and transcripts; unchanged verdicts come "
        "from the judge cache.",
    )
    p.add_argument("run", help="run id (under --runs-dir) or run directory")
    add_judge_flags(p)
    p.add_argument("--runs-dir", default="runs", help="where runs live (default runs)")
    p.add_argument("--run-id", help="id of the new run (default: RUN-judged-<time>)")
    p.add_argument("--concurrency", type=int, default=2, help="judge calls in flight (default 2)")
    p.add_argument("--retries", type=int, default=2, help="retries of a failed judge call")
    p.add_argument("--no-cache", action="store_true", help="ignore cached verdicts")
    add_json_flag(p)
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    """Judge the run; print a summary (or the JSON object)."""
    if args.concurrency < 1:
        raise ConfigError(f"--concurrency must be at least 1, got {args.concurrency}")
    if args.retries < 0:
        raise ConfigError(f"--retries must be at least 0, got {args.retries}")
    result = judge_run(
        args.run,
        runs_dir=args.runs_dir,
        provider=args.judge_provider,
        model=args.judge_model,
        options=parse_key_values(args.judge_opt, "--judge-opt"),
        run_id=args.run_id,
        use_cache=not args.no_cache,
        concurrency=args.concurrency,
        retries=args.retries,
        command_line=shlex.join(["evalkit", *sys.argv[1:]]),
    )
    if args.json:
        print_json(result.to_dict())
        return 0
    judge = result.judge
    print(
        f"judged {judge.items} items of run '{result.judged_from}' with {judge.provider}/"
        f"{judge.model}: {judge.statements_passed}/{judge.statements} statements passed, "
        f"{judge.errors} judge errors"
    )
    print(
        f"judge calls {judge.calls}, from cache {judge.cache_hits}, judge cost "
        f"${judge.cost_usd:.4f}; pass rate {result.pass_rate:.1%}"
    )
    print(f"run written to {result.run_dir}")
    return 0
