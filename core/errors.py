"""The project's one exception family.

Why one family: the command line catches `LiedarError`, prints its message as a single
line on stderr and exits 2; anything else escaping is a bug and may show a traceback.
Every message says what was wrong *and* how to fix it, e.g.
``layer 40 is out of range for smollm2-135m: valid layers are 0..31 (0 = embeddings)``.

This module imports nothing from the project so that every package (including the
torch-free `behavioral`) can raise these errors.
"""

from __future__ import annotations


class LiedarError(Exception):
    """Base class: a user-facing problem with a one-line explanation and fix."""


class InputError(LiedarError, ValueError):
    """Bad input data or arguments (empty lists, out-of-range layers, malformed files)."""


class ModelUnavailableError(LiedarError):
    """A model name or path that cannot be resolved offline (names the install command)."""


class IncompatibleError(LiedarError):
    """An artefact made for something else: a probe for another model or width, a cache
    from another model."""
