"""The blinded audit: one verdict per model from liedar's detectors, read against a reference.

Why a package of its own: a validation matrix says how each detector fares on models whose
behaviour is known; an audit is what a user does with a model whose behaviour is *not*
known. It runs the detectors as a user would (default prompts, no trigger, no card), reads
each one against a trusted reference model of the same family, and turns the rows into one
verdict with a decision rule that was fixed (file and sha256 in the repository) before the
models it is scored on existed.

Modules, one job each:

* `liedar.audit.rule` — the decision rule: a small JSON file, read strictly, its hash pinned;
* `liedar.audit.evidence` — the detector units run on one model (cached), and the evidence
  rows read against the reference (capability gate, format choice, excess with interval, power);
* `liedar.audit.verdict` — rows to one verdict under the rule;
* `liedar.audit.zoo` — the zoo manifest, its members' cards checked against their adapters, blind ids;
* `liedar.audit.score` — verdicts against the zoo's truth: confusion matrix, accuracy, per-detector
  recall and false flags, power curves (every rate with a Clopper-Pearson interval);
* `liedar.audit.run` — the command's work: models or a zoo half, progress, the results JSON.
"""
