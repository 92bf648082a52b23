"""liedar: measure deception in small local language models.

This package is the face of the project: it holds the version, the report and organisms
layers and the composition layer (command line, pipelines, audit, integrations). The bottom
layer is `liedar.core` (folder core/), and `liedar.models`, `liedar.probes` and
`liedar.behavioral` live in folders of their own. It must stay import-light: importing any
liedar module runs this file first, and `behavioral` must import without torch.
"""

__version__ = "0.3.0"
