"""Suites, cases, skills and conditions: models, loader and content hashes."""

__all__ = [
    "Case",
    "Skill",
    "Suite",
    "SuiteFormat",
    "SuiteFormatOptions",
    "SuiteImported",
    "TableColumns",
    "find_affirmed",
    "import_case_table",
    "import_skill_dir",
    "load_suite",
]

from typing import TYPE_CHECKING

from evalkit import _lazy

if TYPE_CHECKING:
    from evalkit.cases._artifacts import (
        ARTIFACT_KINDS as ARTIFACT_KINDS,
        EVIDENCE_METRICS as EVIDENCE_METRICS,
        ArtifactRequirement as ArtifactRequirement,
        BundleSpec as BundleSpec,
        kind_for_path as kind_for_path,
    )
    from evalkit.cases._docs import (
        render_suites_markdown as render_suites_markdown,
    )
    from evalkit.cases._hashing import (
        directory_hash as directory_hash,
        stable_hash as stable_hash,
    )
    from evalkit.cases._loader import (
        SUITE_FILE as SUITE_FILE,
        SuiteInspection as SuiteInspection,
        inspect_suite as inspect_suite,
        load_suite,
    )
    from evalkit.cases._models import (
        DEFAULT_CONDITIONS as DEFAULT_CONDITIONS,
        LANES as LANES,
        NO_SKILL as NO_SKILL,
        SPLITS as SPLITS,
        STANDARD_CONDITIONS as STANDARD_CONDITIONS,
        AntiPatternRule as AntiPatternRule,
        Budgets as Budgets,
        Case,
        CommandCheck as CommandCheck,
        Condition as Condition,
        Expectation as Expectation,
        FileExistsCheck as FileExistsCheck,
        FileMatchesCheck as FileMatchesCheck,
        JsonPathEqualsCheck as JsonPathEqualsCheck,
        JudgeSpec as JudgeSpec,
        PairwiseSpec as PairwiseSpec,
        Skill,
        SuiteDefaults as SuiteDefaults,
        SuiteFile as SuiteFile,
        VerifierCheck as VerifierCheck,
        WorkflowCheck as WorkflowCheck,
    )
    from evalkit.cases._new_suite import NewSuite as NewSuite, init_suite as init_suite
    from evalkit.cases._patterns import (
        compile_pattern as compile_pattern,
        find_affirmed,
        first_match as first_match,
        is_negated as is_negated,
    )
    from evalkit.cases._schema import (
        cases_schema as cases_schema,
        suite_schema as suite_schema,
        write_schemas as write_schemas,
    )
    from evalkit.cases._skill_creator import (
        SkillImport as SkillImport,
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
        SkillCreatorOptions as SkillCreatorOptions,
        SuiteFormat,
        SuiteFormatOptions,
        SuiteImported,
        TableOptions as TableOptions,
        detect_suite_format as detect_suite_format,
        import_suite as import_suite,
        suite_format_names as suite_format_names,
    )
    from evalkit.cases._table import (
        CaseTableImport as CaseTableImport,
        TableColumns,
        import_case_table,
    )
else:
    __getattr__, __dir__ = _lazy.attach(__name__, __file__)
