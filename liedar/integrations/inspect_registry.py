"""The ``inspect_ai`` entry point: registers ``@modelapi(name="liedar")``.

inspect loads this module (pyproject ``[project.entry-points.inspect_ai]``) when it resolves a
``liedar/...`` model; the provider class is built only when a model is actually created.
"""

from __future__ import annotations

from inspect_ai.model import modelapi


@modelapi(name="liedar")
def liedar() -> type:
    from liedar.integrations.inspect_provider import make_api_class

    return make_api_class()
