"""Offline model backends: text in, hidden states / option log-probs / tokens out.

Import-light on purpose: nothing here imports torch or llama_cpp until a backend is
loaded, so `probes` and the CLI can import `models` cheaply.
"""
