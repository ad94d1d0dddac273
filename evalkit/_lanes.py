"""Names of the evidence lane's metrics, shared by the scorers, analysis and the CLI.

A root module without imports, so that ``compare`` can know the names without loading the
suite models (pydantic).
"""

#: The evidence lane's metrics: components of every evidence item that declares them (the
#: scorers write them, ``lift`` and ``compare`` report them).
EVIDENCE_METRICS: tuple[str, ...] = (
    "evidence_completeness",
    "report_completeness",
    "taxonomy_usage",
)
