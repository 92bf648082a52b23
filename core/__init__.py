"""liedar.core: the bottom layer, the things every other layer may import.

`errors` (the one exception family), `stats` (intervals and the `Estimate` type), `results`
(the result types every instrument hands to the report), `rows` (the rules for building
report rows) and `_util` (atomic writes, the JSON codec, JSON-lines reading, offline switches,
optional extras, worker processes and other small utilities).

Why it imports nothing above it: models, probes, behavioral, the report, the organisms and
the command line all import these modules, so an import from here up to any of them would be
a circle; and the torch-free `behavioral` must import without loading a model backend. The
layering test (`LAYERS` in tests/house/test_layers.py) holds it to that.
"""
