"""Suites, cases, skills and conditions: models, loader and content hashes."""

from typing import TYPE_CHECKING

from evalkit import _lazy

if TYPE_CHECKING:
    from evalkit.cases._artifacts import (
        ARTIFACT_KINDS as ARTIFACT_KINDS,
        EVIDENCE_METRICS,
        ArtifactRequirement,
        BundleSpec,
        kind_for_path as kind_for_path,
    )
    from evalkit.cases._docs import (
        render_suites_markdown as render_suites_markdown,
    )
    from evalkit.cases._hashing import (
        directory_hash,
        stable_hash as stable_hash,
    )
    from evalkit.cases._loader import (
        SUITE_FILE as SUITE_FILE,
        SuiteInspection,
        inspect_suite,
        load_suite,
    )
    from evalkit.cases._models import (
        DEFAULT_CONDITIONS as DEFAULT_CONDITIONS,
        LANES,
        NO_SKILL as NO_SKILL,
        SPLITS as SPLITS,
        STANDARD_CONDITIONS,
        AntiPatternRule,
        Budgets,
        Case,
        CommandCheck,
        Condition,
        Expectation,
        FileExistsCheck,
        FileMatchesCheck,
        JsonPathEqualsCheck,
        JudgeSpec,
        PairwiseSpec,
        Skill,
        SuiteDefaults,
        SuiteFile,
        VerifierCheck as VerifierCheck,
        WorkflowCheck,
    )
    from evalkit.cases._new_suite import NewSuite, init_suite
    from evalkit.cases._patterns import (
        compile_pattern as compile_pattern,
        find_affirmed,
        first_match as first_match,
        is_negated,
    )
    from evalkit.cases._schema import cases_schema, suite_schema, write_schemas
    from evalkit.cases._skill_creator import (
        SkillImport,
        import_skill_dir,
        is_skill_dir as is_skill_dir,
    )
    from evalkit.cases._skill_store import (
        SKILL_TEXT_FILE as SKILL_TEXT_FILE,
        load_skill_text as load_skill_text,
        skill_text_hash as skill_text_hash,
        store_skill_texts as store_skill_texts,
    )
    from evalkit.cases._suite import (
        SkillExposure as SkillExposure,
        SkillTexts as SkillTexts,
        Suite,
        VariantFiles as VariantFiles,
    )
    from evalkit.cases._suite_formats import (
        SUITE_FORMATS as SUITE_FORMATS,
        SkillCreatorOptions,
        SuiteFormat,
        SuiteImported,
        TableOptions,
        detect_suite_format as detect_suite_format,
        import_suite,
        suite_format_names,
    )
    from evalkit.cases._table import CaseTableImport, TableColumns, import_case_table
else:
    __getattr__, __dir__ = _lazy.attach(__name__, __file__)

__all__ = [
    "EVIDENCE_METRICS",
    "ArtifactRequirement",
    "BundleSpec",
    "LANES",
    "STANDARD_CONDITIONS",
    "AntiPatternRule",
    "Budgets",
    "Case",
    "CaseTableImport",
    "CommandCheck",
    "Condition",
    "Expectation",
    "FileExistsCheck",
    "FileMatchesCheck",
    "JsonPathEqualsCheck",
    "JudgeSpec",
    "NewSuite",
    "PairwiseSpec",
    "Skill",
    "SkillCreatorOptions",
    "SkillImport",
    "Suite",
    "SuiteDefaults",
    "SuiteFile",
    "SuiteFormat",
    "SuiteImported",
    "SuiteInspection",
    "TableColumns",
    "TableOptions",
    "WorkflowCheck",
    "cases_schema",
    "directory_hash",
    "find_affirmed",
    "import_case_table",
    "import_skill_dir",
    "import_suite",
    "is_negated",
    "init_suite",
    "inspect_suite",
    "load_suite",
    "suite_format_names",
    "suite_schema",
    "write_schemas",
]
