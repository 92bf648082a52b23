"""Runners that apply behavioural instruments to a local model.

They talk to a model only through the `models.backend.Backend` protocol
(``score_options`` / ``generate``) and import `models` lazily, inside the functions
that load a model by name, so `behavioral` stays importable without torch.
"""
