"""A hostile agent for quota tests: it writes big files into its workspace, then answers.

``--provider tests.faults.hog_provider:create`` with ``--provider-opt files=N`` and
``file_bytes=B`` (``files=0``: write until the disk is full), in execution cases only. The
answer itself is the simulated agent's.
"""

from __future__ import annotations

import errno
from collections.abc import Mapping
from typing import Any

import evalkit
from evalkit.providers import AgentRequest, AgentResponse, ProviderInfo
from evalkit.providers._simulated import create_simulated

_CHUNK = b"\1" * (1 << 20)


class HogProvider:
    name = "hog"

    def __init__(self, settings: Mapping[str, Any]) -> None:
        settings = dict(settings)
        self.files = int(settings.pop("files", 3))
        self.file_bytes = int(settings.pop("file_bytes", 3_000_000))
        self.inner = create_simulated(settings)

    def info(self) -> ProviderInfo:
        return self.inner.info()

    def outcome_settings(self) -> dict[str, Any]:
        return self.inner.outcome_settings() | {"files": self.files, "bytes": self.file_bytes}

    def invoke(self, request: AgentRequest) -> AgentResponse:
        if request.case.lane != "execution":  # only execution cases: the others stay ok
            return self.inner.invoke(request)
        if self.files == 0:  # fill the disk; the agent goes on when nothing more fits
            try:
                with open(request.workspace / "hog", "wb") as handle:
                    while True:
                        handle.write(_CHUNK)
                        handle.flush()
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
        for index in range(self.files):
            with open(request.workspace / f"hog{index}", "wb") as handle:
                for start in range(0, self.file_bytes, len(_CHUNK)):
                    handle.write(_CHUNK[: self.file_bytes - start])
        return self.inner.invoke(request)


@evalkit.plugin("provider")
def create(settings: Mapping[str, Any]) -> HogProvider:
    return HogProvider(settings)
