"""Optimizers: what proposes a new skill text (a command, a Python callable, an agent).

The built-in ``command`` and ``provider`` optimizers are built by :func:`command_optimizer`
and :func:`provider_optimizer`, the entries of the optimizer registry
(:mod:`evalkit.optimize._optimizer_registry`).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from evalkit._registry import plugin
from evalkit._untrusted import load_json
from evalkit.errors import ConfigError
from evalkit.optimize._confine import command_settings, named_files, warn_unconfined
from evalkit.sandbox import Mounts, require_sandbox, run_command, sandbox_enabled

SKILL_FILE = "SKILL.md"
INSTRUCTIONS_FILE = "INSTRUCTIONS.md"
FAILURES_DIR = "failures"

INSTRUCTIONS = """# Improve the skill

`SKILL.md` in this directory is the current skill text. Agents given this skill failed the
cases described in `failures/` (one file per case: the task, what a good answer contains, and
what the agent did). Edit `SKILL.md` so that an agent following it would do better on tasks
like these — general guidance, not answers to these exact prompts.

Rules: edit only `SKILL.md`; do not touch anything outside this directory. Your edit is
evaluated on held-out cases you cannot see and accepted only if it improves them significantly.
"""


@dataclass(frozen=True)
class OptimizerContext:
    """What an optimizer is told about one proposal.

    Attributes:
        workspace: Hermetic directory holding ``SKILL.md`` (edit it), ``INSTRUCTIONS.md`` and
            ``failures/``; in description mode ``DESCRIPTION.txt`` (edit it) and ``SKILL.md``
            for reference.
        skill_path: The file to edit: ``workspace / "SKILL.md"``, or
            ``workspace / "DESCRIPTION.txt"`` in description mode.
        champion_text: The current champion's text or description (the starting point).
        failures: Failing train cases: ``case_id, prompt, expected_patterns, rubric,
            score, transcript`` (dicts); in description mode the mis-routed ones:
            ``case_id, prompt, should_trigger, loaded, trials, kind``.
        candidate_id: Id of the candidate being proposed.
        iteration: Candidates proposed before this one.
        seed: A seed for stochastic optimizers (differs between siblings).
        target: ``text`` (the skill text) or ``description`` (its trigger description).
    """

    workspace: Path
    skill_path: Path
    champion_text: str
    failures: list[dict[str, Any]]
    candidate_id: str
    iteration: int
    seed: int
    target: str = "text"


@dataclass(frozen=True)
class Proposal:
    """An optimizer's output.

    Attributes:
        text: The candidate skill text (read back from ``SKILL.md``).
        cost_usd: What the optimizer reported spending.
        error: Why the proposal failed (the iteration is wasted, not fatal).
        log: Optimizer output worth keeping.
    """

    text: str
    cost_usd: float = 0.0
    error: str | None = None
    log: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


class Optimizer(Protocol):
    """Proposes a new skill text by editing ``context.skill_path``."""

    name: str

    def propose(self, context: OptimizerContext) -> Proposal:
        """Edit the workspace's ``SKILL.md`` and report."""
        ...


class CommandOptimizer:
    """An external command run in the workspace (``command:CMD``), inside the sandbox.

    The command runs with ``bash -c`` in the workspace, stdin from /dev/null, environment
    ``EVALKIT_SKILL_PATH`` (the file to edit), ``EVALKIT_INSTRUCTIONS``,
    ``EVALKIT_FAILURES_DIR``, ``EVALKIT_CANDIDATE_ID``, ``EVALKIT_SEED`` and ``EVALKIT_TARGET``
    (``text`` or ``description``; in description mode also ``EVALKIT_DESCRIPTION_PATH``) and
    otherwise only the sandbox's few safe variables (no credentials); a JSON object printed on
    its last stdout line may report ``{"cost_usd": ...}``.

    It runs in evalkit's bubblewrap sandbox (:func:`evalkit.sandbox.run_command`): the
    candidate file (``EVALKIT_SKILL_PATH``) is its only writable file, beside a private
    ``/tmp`` that is also its ``HOME``; the workspace, the files its command line names by
    absolute path and the ``read`` setting's paths are read-only; the system directories are
    read-only and everything else (home directories, the suite, the runs directory, the
    evalkit checkout) is invisible. It has its own pid namespace and dies with evalkit: when
    it ends, every process it started ends too, ``setsid`` daemons included. No network
    unless ``network``. With the sandbox off (``--no-sandbox``, ``EVALKIT_SANDBOX=off``) it
    runs with the user's rights after a warning; its process group is still killed when it
    ends, and the honesty guard still detects edits of protected files afterwards.

    Args:
        command: The shell command.
        timeout_s: Time limit of one proposal.
        readable: More paths the command may read.
        network: Share the host's network.

    Raises:
        SandboxUnavailableError: The sandbox is on and ``bwrap`` is missing (names the fix).
    """

    def __init__(
        self,
        command: str,
        timeout_s: float = 600.0,
        *,
        readable: tuple[Path, ...] = (),
        network: bool = False,
    ) -> None:
        self.name = f"command:{command}"
        self.command = command
        self.timeout_s = timeout_s
        self.readable = tuple(dict.fromkeys((*named_files(command), *readable)))
        self.network = network
        if sandbox_enabled():
            require_sandbox()
        else:
            warn_unconfined()

    def propose(self, context: OptimizerContext) -> Proposal:
        """Run the command; a non-zero exit, a limit or a timeout is a failed proposal."""
        env = {
            "EVALKIT_SKILL_PATH": str(context.skill_path),
            "EVALKIT_INSTRUCTIONS": str(context.workspace / INSTRUCTIONS_FILE),
            "EVALKIT_FAILURES_DIR": str(context.workspace / FAILURES_DIR),
            "EVALKIT_CANDIDATE_ID": context.candidate_id,
            "EVALKIT_SEED": str(context.seed),
            "EVALKIT_TARGET": context.target,
        }
        if context.target == "description":
            env["EVALKIT_DESCRIPTION_PATH"] = str(context.skill_path)
        mounts = Mounts(
            workspace_writable=False, writable=(context.skill_path,), readable=self.readable
        )
        outcome = run_command(
            self.command,
            context.workspace,
            self.timeout_s,
            network=self.network,
            mounts=mounts,
            env=env,
        )
        log = outcome.output[-4000:]
        extra = {"sandboxed": outcome.sandboxed, "exit_code": outcome.exit_code}
        if outcome.timed_out:
            error = f"optimizer timed out after {self.timeout_s:g}s"
            return Proposal(text="", error=error, log=log, extra=extra)
        if outcome.limit == "output":
            return Proposal(text="", error="optimizer output limit reached", log=log, extra=extra)
        if outcome.exit_code != 0:
            error = f"optimizer exited {outcome.exit_code}"
            return Proposal(text="", error=error, log=log, extra=extra)
        cost = 0.0
        lines = log.strip().splitlines()
        if lines:
            try:
                report = load_json(lines[-1], "optimizer report")
                cost = float(report.get("cost_usd", 0.0)) if isinstance(report, dict) else 0.0
            except (ValueError, TypeError):
                cost = 0.0
        return Proposal(text=_read(context.skill_path), cost_usd=cost, log=log, extra=extra)


class CallableOptimizer:
    """A Python callable ``module:function(context) -> str | dict | None`` (``python:...``).

    It may edit ``context.skill_path`` and return None, return the new text, or return a dict
    ``{"text": ..., "cost_usd": ...}``.
    """

    def __init__(self, spec: str, func: Callable[[OptimizerContext], Any]) -> None:
        self.name = f"python:{spec}"
        self.func = func

    def propose(self, context: OptimizerContext) -> Proposal:
        """Call the function."""
        result = self.func(context)
        cost = 0.0
        if isinstance(result, dict):
            cost = float(result.get("cost_usd", 0.0))
            result = result.get("text")
        if isinstance(result, str):
            context.skill_path.write_text(result, encoding="utf-8")
        return Proposal(text=_read(context.skill_path), cost_usd=cost)


#: Settings that turn an agent CLI's own tool sandbox on while it edits a proposal workspace.
#: Claude Code then runs its Bash commands in its bubblewrap sandbox (writes limited to the
#: workspace and temporary directories; the commands end with the CLI); Codex's
#: ``workspace-write`` sandbox also stops writes under ``/tmp``. A setting the user gives wins.
CONFINING_SETTINGS: dict[str, dict[str, str | bool]] = {
    "claude_code": {"scrub_subprocess_env": True},
    "codex": {
        "sandbox": "workspace-write",
        "extra_args": "-c sandbox_workspace_write.exclude_slash_tmp=true",
    },
}


def confining_settings(provider: str, settings: dict[str, Any]) -> dict[str, Any]:
    """``settings`` with the provider's :data:`CONFINING_SETTINGS` filled in.

    The user's settings win; ``extra_args`` of the user's come after the confining ones (so
    a ``-c`` of the user's overrides the same key).
    """
    merged: dict[str, Any] = dict(CONFINING_SETTINGS.get(provider, {}))
    for key, value in settings.items():
        if key == "extra_args" and key in merged:
            ours = str(merged[key])
            merged[key] = (
                f"{ours} {value}" if isinstance(value, str) else [*shlex.split(ours), *value]
            )
        else:
            merged[key] = value
    return merged


class ProviderOptimizer:
    """An agent provider (``provider:claude_code``, ``provider:codex``) editing the workspace.

    The agent follows ``INSTRUCTIONS.md`` as an execution-lane case in the proposal workspace.
    evalkit's own agent loop (``openai_compat``, ``anthropic``) runs every shell tool call in
    the command sandbox (the throwaway workspace writable). An agent CLI runs outside it, with
    its own tool sandbox turned on (:data:`CONFINING_SETTINGS`), an allowlisted environment
    and its process group killed after every exit; the honesty guard applies to all.
    """

    def __init__(self, provider: str, settings: dict[str, Any]) -> None:
        self.name = f"provider:{provider}"
        self.provider = provider
        self.settings = confining_settings(provider, settings)

    def propose(self, context: OptimizerContext) -> Proposal:
        """Ask the agent to follow ``INSTRUCTIONS.md``; the edited file is the proposal."""
        from evalkit.cases import Case
        from evalkit.providers import AgentRequest, create_provider

        agent = create_provider(self.provider, self.settings)
        case = Case.model_validate(
            {
                "id": f"optimize-{context.candidate_id}",
                "lane": "execution",
                "prompt": (context.workspace / INSTRUCTIONS_FILE).read_text(encoding="utf-8"),
                "verifier": [{"kind": "file_exists", "path": context.skill_path.name}],
                "budgets": {"timeout_s": 900},
            }
        )
        request = AgentRequest(
            item_key=f"optimize:{context.candidate_id}",
            case=case,
            condition="none",
            exposure=(),
            workspace=context.workspace,
            seed=context.seed,
            timeout_s=900.0,
        )
        response = agent.invoke(request)
        return Proposal(text=_read(context.skill_path), cost_usd=response.cost_usd)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


@plugin("optimizer")
def command_optimizer(command: str, settings: Mapping[str, Any]) -> CommandOptimizer:
    """The ``command:CMD`` optimizer.

    Args:
        command: The shell command (the text after ``command:``).
        settings: ``read`` (comma-separated paths it may read), ``network`` and ``timeout_s``.

    Raises:
        ConfigError: No command, a bad setting, or the sandbox on and no ``bwrap``
            (:class:`~evalkit.sandbox.SandboxUnavailableError`).
    """
    if not command:
        raise ConfigError("--optimizer command: give the command to run, as command:CMD")
    options = command_settings(dict(settings))
    return CommandOptimizer(
        command, options.timeout_s, readable=options.read, network=options.network
    )


@plugin("optimizer")
def provider_optimizer(provider: str, settings: Mapping[str, Any]) -> ProviderOptimizer:
    """The ``provider:NAME`` optimizer (``provider:claude_code``).

    Args:
        provider: The agent provider's name (the text after ``provider:``).
        settings: The provider's settings.

    Raises:
        ConfigError: No provider name.
    """
    if not provider:
        raise ConfigError(
            "--optimizer provider: give the agent provider, as provider:NAME "
            "(e.g. provider:claude_code)"
        )
    return ProviderOptimizer(provider, dict(settings))
