"""The hill-climb loop: propose, evaluate on validation, gate, commit; unseal the test once.

Serial (``parallel=1``) is a depth-first hill climb: each candidate is proposed from the
champion as of the previous decision. ``parallel=N`` proposes N siblings from the *same*
champion and commits them one at a time, each re-gated against the champion as of its own
commit: a breadth-first search, not a faster serial run. On an objective where progress is
cumulative (each accepted edit enables the next), N siblings forked from one parent are N
variations of one step, so on the same budget ``parallel=N`` can end strictly worse than
serial (``docs/optimize.md`` measures it). What parallelism preserves is honesty: a sibling
forked from a superseded champion is compared with the new champion, never banked blindly.
"""

from __future__ import annotations

import difflib
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit._paths import safe_run_id
from evalkit._settings import CONFIDENCE
from evalkit.cases import Suite, load_suite, stable_hash
from evalkit.errors import ConfigError, SealError, TamperError
from evalkit.optimize._config import OptimizeConfig
from evalkit.optimize._description import (
    DESCRIPTION_FILE,
    DESCRIPTION_INSTRUCTIONS,
    f1_gate,
    failure_markdown,
    misrouted,
    trigger_f1,
    trigger_rates,
    validate_description,
)
from evalkit.optimize._guard import check_unchanged, protected_state
from evalkit.optimize._optimizer_registry import load_optimizer
from evalkit.optimize._optimizers import (
    FAILURES_DIR,
    INSTRUCTIONS,
    INSTRUCTIONS_FILE,
    SKILL_FILE,
    Optimizer,
    OptimizerContext,
    Proposal,
)
from evalkit.optimize._splits import Splits, assign_splits
from evalkit.optimize._state import (
    SEED_ID,
    Decision,
    OptimizeState,
    TestResult,
    TriggerRates,
    has_state,
    read_state,
    write_state,
)
from evalkit.results import append_event, read_run, read_transcripts
from evalkit.runner import DescriptionOverride, RunConfig, SkillOverride, run
from evalkit.stats import CompareOptions, Interval, Verdict, compare_tables

SPLITS_FILE = "splits.json"
_HONESTY_ERRORS = (TamperError, SealError)


@dataclass(frozen=True)
class OptimizeResult:
    """Outcome of an optimisation run.

    Attributes:
        run_dir: The optimisation run directory.
        state: The final record (``optimize.json``): history, budgets spent, test result.
    """

    run_dir: Path
    state: OptimizeState

    @property
    def champion(self) -> str:
        """Id of the final champion (``seed`` when nothing was accepted)."""
        return self.state.champion

    @property
    def accepted(self) -> list[str]:
        """Ids of accepted candidates, in order."""
        return self.state.accepted

    def to_dict(self) -> dict[str, Any]:
        """JSON summary (``evalkit optimize --json``)."""
        s = self.state
        return {
            "run_id": s.run_id,
            "run_dir": str(self.run_dir),
            "status": s.status,
            "target": s.target,
            "objective": s.objective,
            "champion": s.champion,
            "iterations": s.iterations,
            "accepted": self.accepted,
            "metric_calls": s.metric_calls,
            "usd": s.usd,
            "holdout_looks": s.holdout_looks,
            "validation": s.champion_val_rate,
            "test": s.test.model_dump(mode="json") if s.test is not None else None,
            "seed_trigger": _dump(s.seed_trigger),
            "champion_trigger": _dump(self._champion_trigger()),
        }

    def _champion_trigger(self) -> TriggerRates | None:
        """The champion's validation trigger rates (description mode)."""
        for decision in self.state.history:
            if decision.candidate == self.state.champion:
                return decision.trigger
        return self.state.seed_trigger


def _dump(rates: TriggerRates | None) -> dict[str, Any] | None:
    return None if rates is None else rates.model_dump(mode="json")


def _rate(df: pd.DataFrame) -> float:
    return float(df.groupby("case_id")["passed"].mean().mean()) if len(df) else float("nan")


class _Optimisation:
    """One optimisation run (state on disk, so a killed run resumes)."""

    def __init__(self, suite: Suite, config: OptimizeConfig) -> None:
        self.suite = suite
        self.config = config
        self.optimizer: Optimizer = load_optimizer(config.optimizer, config.optimizer_settings)
        if config.skill not in suite.skills:
            known = ", ".join(sorted(suite.skills)) or "(none)"
            raise ConfigError(
                f"--skill: suite '{suite.name}' has no skill '{config.skill}'; {known}"
            )
        if config.condition not in suite.conditions:
            raise ConfigError(f"--condition: unknown condition '{config.condition}'")
        self.describing = config.target == "description"
        mode = suite.conditions[config.condition].mode
        if self.describing and mode != "self-load":
            raise ConfigError(
                f"--condition: '{config.condition}' is a {mode} condition; --target description "
                "needs a self-load condition (the description is what self-load shows), e.g. "
                "--condition self-load"
            )
        run_id = safe_run_id(config.run.run_id or datetime.now().strftime("opt-%Y%m%d-%H%M%S"))
        self.dir = Path(config.run.runs_dir) / run_id
        self.skills_dir = self.dir / "skills"
        self.gate = {
            "metric": "passed",
            "threshold": config.threshold,
            "confidence": self.gate_confidence,
            "condition": config.condition,
            "trials": config.run.trials,
            "provider": config.run.provider,
            "provider_options": config.run.provider_options,
            "n_resamples": config.n_resamples,
        }
        if self.describing:  # text runs keep the gate hash of earlier runs
            self.gate.update(target="description", metric="trigger_f1")
        if config.run.resume and has_state(self.dir):
            self.state = read_state(self.dir)
            self.splits = Splits.read(self.dir / SPLITS_FILE)
            check_unchanged(self.state.protected, self._protected())
        else:
            self._start(run_id)
        self._failures: dict[str, list[dict[str, Any]]] = {}
        self._val: dict[str, pd.DataFrame] = {}

    @property
    def gate_confidence(self) -> float:
        """Two-sided confidence of each gate's interval (one-sided ``alpha / K`` per side)."""
        comparisons = self.config.max_iterations or 20
        return 1.0 - 2.0 * self.config.alpha / comparisons

    # -- setup --------------------------------------------------------------------------------

    def _start(self, run_id: str) -> None:
        seed_text = self._seed_text()  # a bad starting file leaves no run directory behind
        try:
            self.dir.mkdir(parents=True)
        except FileExistsError:
            raise ConfigError(
                f"optimisation run '{run_id}' already exists; pass --resume or another --run-id"
            ) from None
        self.skills_dir.mkdir()
        case_ids = tuple(c.id for c in self.suite.cases)
        self.splits = assign_splits(
            self.suite, case_ids, derive=self.config.derive_splits, seed=self.config.split_seed
        )
        digest = self.splits.write(self.dir / SPLITS_FILE)
        (self.skills_dir / f"{SEED_ID}.md").write_text(seed_text, encoding="utf-8")
        self.state = OptimizeState(
            run_id=run_id,
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
            suite=self.suite.name,
            skill=self.config.skill,
            target=self.config.target,
            objective="trigger_f1" if self.describing else "pass_rate",
            optimizer=self.optimizer.name,
            config=self.config.record(),
            splits_sha256=digest,
            split_sizes={s: len(self.splits.cases(s)) for s in ("dev", "holdout", "test")},
            protected=self._protected(),
        )
        self._event("optimize_started", splits_sha256=digest, sizes=self.state.split_sizes)
        self._save()

    def _seed_text(self) -> str:
        skill = self.suite.skills[self.config.skill]
        path = self.config.seed_skill
        if path is None:
            return skill.description if self.describing else skill.texts["canonical"]
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"--skill {self.config.skill}={path}: cannot read: {exc}") from None
        if not self.describing:
            return text
        try:
            return validate_description(text)
        except ValueError as exc:
            raise ConfigError(
                f"--skill {self.config.skill}={path}: {exc}; write the starting description as "
                "one line"
            ) from None

    def _protected(self) -> dict[str, str]:
        return protected_state(self.suite.root, self.dir / SPLITS_FILE, self.gate)

    def _save(self) -> None:
        write_state(self.dir, self.state)

    def _event(self, event: str, **fields: Any) -> None:
        append_event(self.dir, event, **fields)

    def _guard(self) -> None:
        try:
            check_unchanged(self.state.protected, self._protected())
        except TamperError as exc:
            self.state.status = "aborted"
            self.state.abort_reason = str(exc)
            self._event("honesty_violation", changed={k: list(v) for k, v in exc.changed.items()})
            self._save()
            raise

    def _text(self, candidate: str) -> str:
        return (self.skills_dir / f"{candidate}.md").read_text(encoding="utf-8")

    # -- evaluation ---------------------------------------------------------------------------

    @property
    def conditions(self) -> tuple[str, ...]:
        """Conditions of every evaluation (description mode adds the ``none`` baseline)."""
        if self.describing and "none" in self.suite.conditions:
            return (self.config.condition, "none")
        return (self.config.condition,)

    def _objective(self, df: pd.DataFrame) -> float:
        """Pass rate (text) or trigger F1 under the evaluated condition (description)."""
        if self.describing:
            return trigger_f1(df, self.config.skill, self.config.condition)
        return _rate(df)

    def _trigger(self, df: pd.DataFrame) -> TriggerRates | None:
        if not self.describing:
            return None
        return trigger_rates(
            df,
            self.config.skill,
            self.config.condition, n_resamples=self.config.n_resamples, seed=self.config.seed
        )

    def _gate(
        self, baseline: pd.DataFrame, candidate: pd.DataFrame, confidence: float
    ) -> tuple[Verdict, Interval, int]:
        """The paired comparison of the objective: candidate vs baseline."""
        if self.describing:
            return f1_gate(
                baseline,
                candidate,
                self.config.skill,
                self.config.condition,
                threshold=self.config.threshold,
                confidence=confidence,
                n_resamples=self.config.n_resamples,
                seed=self.config.seed,
            )
        result = compare_tables(
            baseline,
            candidate,
            options=CompareOptions(
                threshold=self.config.threshold, confidence=confidence,
                n_resamples=self.config.n_resamples, seed=self.config.seed,
            ),
        )
        return result.verdict, result.delta, result.n_cases

    def _evaluate(self, candidate: str, split: str) -> pd.DataFrame:
        self._guard()
        label = f"{candidate}-{split}"
        seed = int(stable_hash([self.config.seed, label]), 16) % 2**31
        variant: dict[str, Any]
        if self.describing:
            described = DescriptionOverride(skill=self.config.skill, text=self._text(candidate))
            variant = {"descriptions": (described,)}
        else:
            path = self.skills_dir / f"{candidate}.md"
            variant = {"skills": (SkillOverride(skill=self.config.skill, path=path),)}
        config = RunConfig(  # the optimisation's run settings, for this evaluation
            **{
                **dict(self.config.run),
                "conditions": self.conditions,
                "case_ids": self.splits.cases(split),
                "seed": seed,
                **variant,
                "runs_dir": self.dir / "evals",
                "run_id": label,
                "resume": True,
                "progress": False,
            }
        )
        result = run(self.suite, config)
        df = read_run(result.run_dir)
        spent = float(df["cost_usd"].fillna(0).sum())
        self.state.metric_calls += result.items
        self.state.usd += spent
        if split == "holdout":
            self.state.holdout_looks += 1
        self._event(
            "evaluation",
            candidate=candidate,
            split=split,
            items=result.items,
            pass_rate=_rate(df[df["condition"] == self.config.condition]),
            usd=spent,
            **({"trigger_f1": self._objective(df)} if self.describing else {}),
        )
        return df

    def _validation(self, candidate: str) -> pd.DataFrame:
        if candidate not in self._val:
            self._val[candidate] = self._evaluate(candidate, "holdout")
        return self._val[candidate]

    def _train_failures(self, candidate: str) -> list[dict[str, Any]]:
        if candidate in self._failures:
            return self._failures[candidate]
        df = self._evaluate(candidate, "dev")
        if self.describing:
            failures = misrouted(df, self.config.skill, self.config.condition)
            for failure in failures:
                failure["prompt"] = self.suite.case(failure["case_id"]).prompt
            self._failures[candidate] = failures
            return failures
        failing = df[~df["passed"].astype(bool)]
        worst = failing.sort_values(["case_id", "score"]).drop_duplicates("case_id")
        transcripts = read_transcripts(
            self.dir / "evals" / f"{candidate}-dev", list(worst["item_key"])
        )
        failures = []
        rates = df.groupby("case_id")["passed"].mean()
        for _, row in worst.iterrows():
            case = self.suite.case(str(row["case_id"]))
            record = transcripts.get(str(row["item_key"]), {})
            events = record.get("response", {}).get("events", [])
            said = "\n".join(
                e["content"] for e in events if e["kind"] in ("assistant", "tool_call")
            )
            failures.append(
                {
                    "case_id": case.id,
                    "prompt": case.prompt,
                    "expected_patterns": list(case.expected_patterns),
                    "forbidden_patterns": list(case.forbidden_patterns),
                    "rubric": list(case.rubric),
                    "pass_rate": float(rates[case.id]),
                    "score": float(row["score"]),
                    "transcript": said[-3000:],
                }
            )
        self._failures[candidate] = failures
        return failures

    # -- proposals ----------------------------------------------------------------------------

    def _propose(self, candidate: str, parent: str, failures: list[dict[str, Any]]) -> Proposal:
        workspace = Path(tempfile.mkdtemp(prefix=f"evalkit-{candidate}-"))
        try:
            parent_text = self._text(parent)
            if self.describing:
                edited = workspace / DESCRIPTION_FILE
                self._description_workspace(workspace, parent_text, failures)
            else:
                edited = workspace / SKILL_FILE
                self._text_workspace(workspace, parent_text, failures)
            context = OptimizerContext(
                workspace=workspace,
                skill_path=edited,
                champion_text=parent_text,
                failures=failures,
                candidate_id=candidate,
                iteration=self.state.iterations,
                seed=int(stable_hash([self.config.seed, candidate]), 16) % 2**31,
                target=self.config.target,
            )
            try:
                return self.optimizer.propose(context)
            except _HONESTY_ERRORS:
                raise
            except Exception as exc:  # noqa: BLE001 - a failed proposal is a wasted iteration
                return Proposal(text="", error=f"{type(exc).__name__}: {exc}")
        finally:
            shutil.rmtree(workspace, ignore_errors=True)

    def _description_workspace(
        self, workspace: Path, description: str, failures: list[dict[str, Any]]
    ) -> None:
        (workspace / DESCRIPTION_FILE).write_text(description + "\n", encoding="utf-8")
        skill_text = self.suite.skills[self.config.skill].texts["canonical"]
        (workspace / SKILL_FILE).write_text(skill_text, encoding="utf-8")
        (workspace / INSTRUCTIONS_FILE).write_text(DESCRIPTION_INSTRUCTIONS, encoding="utf-8")
        (workspace / FAILURES_DIR).mkdir()
        for failure in failures:
            (workspace / FAILURES_DIR / f"{failure['case_id']}.md").write_text(
                failure_markdown(failure), encoding="utf-8"
            )

    def _text_workspace(
        self, workspace: Path, parent_text: str, failures: list[dict[str, Any]]
    ) -> None:
        (workspace / SKILL_FILE).write_text(parent_text, encoding="utf-8")
        (workspace / INSTRUCTIONS_FILE).write_text(INSTRUCTIONS, encoding="utf-8")
        (workspace / FAILURES_DIR).mkdir()
        for failure in failures:
            lines = [f"# {failure['case_id']}", "", "## Task", failure["prompt"], ""]
            lines += ["## A good answer contains (regular expressions)"]
            lines += [f"- `{p}`" for p in failure["expected_patterns"]] + [""]
            lines += ["## What the agent did", failure["transcript"], ""]
            (workspace / FAILURES_DIR / f"{failure['case_id']}.md").write_text(
                "\n".join(lines), encoding="utf-8"
            )

    # -- budgets ------------------------------------------------------------------------------

    def headroom(self) -> int:
        """How many candidates the next round may propose (0: a budget is exhausted).

        Every cap is converted to a number of candidates and floored at 1 while any budget
        remains: like the serial loop, a round never stops mid-candidate, so at any
        parallelism a cap is overshot by at most the one candidate in flight.
        """
        s, c = self.state, self.config
        limits = [c.parallel]
        if c.max_iterations is not None:
            limits.append(c.max_iterations - s.iterations)
        if c.stall is not None:
            limits.append(c.stall - s.stall)
        if c.max_metric_calls is not None:
            left = c.max_metric_calls - s.metric_calls
            trials = c.run.trials or self.suite.spec.defaults.trials
            per = len(self.splits.cases("holdout")) * trials * len(self.conditions)
            limits.append(0 if left <= 0 else max(1, left // per))
        if c.max_usd is not None:
            left_usd = c.max_usd - s.usd
            per_usd = s.usd / s.iterations if s.iterations else 0.0
            if left_usd <= 0:
                limits.append(0)
            elif per_usd <= 0:
                limits.append(1)  # no observed spend per candidate yet: one at a time
            else:
                limits.append(max(1, int(left_usd // per_usd)))
        return max(0, min(limits))

    # -- the loop -----------------------------------------------------------------------------

    def run(self) -> OptimizeResult:
        if self.state.status == "complete":
            return OptimizeResult(self.dir, self.state)
        champion = self.state.champion
        champion_val = self._validation(champion)
        self.state.champion_val_rate = self._objective(champion_val)
        if champion == SEED_ID:
            self.state.seed_val_rate = self.state.champion_val_rate
            self.state.seed_trigger = self._trigger(champion_val)
        self._save()
        while not self.state.test_unsealed:
            n = self.headroom()
            if n == 0:
                break
            parent = self.state.champion
            failures = self._train_failures(parent)
            first = self.state.iterations + 1
            ids = [f"cand-{first + j:04d}" for j in range(n)]
            for cid in ids:
                self._event("proposal", candidate=cid, parent=parent, failures=len(failures))
            if n == 1:
                proposals = [self._propose(ids[0], parent, failures)]
            else:
                with ThreadPoolExecutor(n) as pool:
                    futures = [pool.submit(self._propose, c, parent, failures) for c in ids]
                    proposals = [f.result() for f in futures]
            for cid, proposal in zip(ids, proposals, strict=True):
                self._commit(cid, parent, proposal)
        self._unseal()
        self.state.status = "complete"
        self._save()
        self._event("optimize_finished", champion=self.state.champion)
        return OptimizeResult(self.dir, self.state)

    def _commit(self, candidate: str, parent: str, proposal: Proposal) -> None:
        """The serialized commit point: gate one candidate against the current champion."""
        s = self.state
        s.iterations += 1
        s.usd += proposal.cost_usd
        s.optimizer_usd += proposal.cost_usd
        champion = s.champion
        decision = Decision(
            candidate=candidate,
            parent=parent,
            champion_at_commit=champion,
            accepted=False,
            optimizer_usd=proposal.cost_usd,
        )
        if proposal.log or proposal.extra:  # what the optimizer said (a refused write, ...)
            self._event(
                "optimizer_output",
                candidate=candidate,
                error=proposal.error,
                log=proposal.log[-2000:],
                **proposal.extra,
            )
        self._guard()
        text, invalid = self._candidate_text(proposal)
        if invalid is not None:
            decision.reason = f"failed proposal: {invalid}"
        elif text == self._text(champion):
            decision.reason = "no change from the champion"
        else:
            (self.skills_dir / f"{candidate}.md").write_text(text, encoding="utf-8")
            candidate_val = self._validation(candidate)
            self._guard()
            gate_verdict, d, _ = self._gate(
                self._validation(champion), candidate_val, self.gate_confidence
            )
            decision.verdict = gate_verdict
            decision.delta = d.estimate
            decision.ci_low = d.ci_low
            decision.ci_high = d.ci_high
            decision.val_rate = self._objective(candidate_val)
            decision.trigger = self._trigger(candidate_val)
            if gate_verdict == "improved":
                decision.accepted = True
                decision.reason = "improved on validation"
                diff = difflib.unified_diff(
                    self._text(champion).splitlines(keepends=True),
                    text.splitlines(keepends=True),
                    fromfile=f"{champion}.md",
                    tofile=f"{candidate}.md",
                )
                (self.skills_dir / f"{candidate}.diff").write_text("".join(diff), encoding="utf-8")
                s.champion = candidate
                s.champion_val_rate = decision.val_rate
            else:
                decision.reason = f"gate: {gate_verdict}"
        s.stall = 0 if decision.accepted else s.stall + 1
        decision.metric_calls = s.metric_calls
        decision.usd = s.usd
        s.history.append(decision)
        self._save()  # the state first: the log never names a decision the state lacks
        self._event("decision", **decision.model_dump(mode="json", exclude_unset=True))

    def _candidate_text(self, proposal: Proposal) -> tuple[str, str | None]:
        """The proposed text (a description is validated and stripped), or why it is invalid."""
        if proposal.error is not None:
            return "", proposal.error
        if not self.describing:
            return proposal.text, None if proposal.text.strip() else "empty skill text"
        try:
            return validate_description(proposal.text), None
        except ValueError as exc:
            return "", str(exc)

    def _unseal(self) -> None:
        """Evaluate the sealed test split exactly once: the seed and the champion."""
        s = self.state
        if s.test is not None:
            raise SealError(f"the test split of '{s.run_id}' was already unsealed")
        if not s.test_unsealed:
            s.test_unsealed = True
            s.test_champion = s.champion
            s.unsealed_at = datetime.now(UTC).isoformat(timespec="seconds")
            self._event("unseal", champion=s.champion)
            self._save()
        champion = s.test_champion or s.champion  # a resumed unseal finishes the same one
        seed_test = self._evaluate(SEED_ID, "test")
        champ_test = seed_test if champion == SEED_ID else self._evaluate(champion, "test")
        test_verdict, d, n_cases = self._gate(seed_test, champ_test, CONFIDENCE.default)
        s.test = TestResult(
            champion=champion,
            seed_rate=self._objective(seed_test),
            champion_rate=self._objective(champ_test),
            delta=d.estimate,
            ci_low=d.ci_low,
            ci_high=d.ci_high,
            verdict=test_verdict,
            n_cases=n_cases,
            seed_trigger=self._trigger(seed_test),
            champion_trigger=self._trigger(champ_test),
        )
        self._event("test_result", **s.test.model_dump(mode="json"))
        self._save()


def optimize(suite: str | Path | Suite, config: OptimizeConfig) -> OptimizeResult:
    """Hill-climb a skill against a validation gate and report an honest test number.

    The optimizer sees failing *train* (``dev``) cases; each candidate is evaluated on the
    *validation* (``holdout``) split, paired against the champion with :func:`evalkit.compare`,
    and accepted only when the verdict is *improved*. The *test* split is sealed: evaluated
    exactly once, at the end, for the seed skill and the champion. Cases, scorers, the split
    file and the gate are hash-checked before every evaluation; a change aborts the run
    (:class:`TamperError`), on the serial and the parallel path alike.

    Args:
        suite: Suite directory or loaded suite.
        config: Optimisation options.

    Returns:
        The final record (also in ``<run_dir>/optimize.json``).

    Raises:
        TamperError: A protected file changed.
        SealError: The test split was already unsealed.
        evalkit.errors.InputError: Bad options.
    """
    loaded = suite if isinstance(suite, Suite) else load_suite(suite)
    return _Optimisation(loaded, config).run()
