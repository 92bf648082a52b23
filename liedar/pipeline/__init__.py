"""Pipelines that compose every layer: `demo` (one model, the whole toolkit, one report).

`context` holds what every step shares; `demo_steps` the steps; `demo` runs them.
"""
