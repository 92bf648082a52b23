"""Bridges to other tools' ecosystems (top layer: may use models, probes and behavioral).

* `inspect_provider`: liedar as an inspect_ai model provider (``--model liedar/smollm2-135m``),
  with the honesty monitor's scores in each output's metadata;
* `inspect_logs`: inspect_ai eval logs -> liedar's behavioural records and detectors;
* `inspect_tasks`: a small multiple-choice task shipped for end-to-end tests and examples.

inspect_ai is an optional extra (``pip install 'liedar[inspect]'``); nothing here imports it
at package import time.
"""
