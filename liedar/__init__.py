"""liedar: measure deception in small local language models.

This package holds only the composition layer (command line, demo pipeline, combined
report) and the project-wide exception type. It must stay import-light: `behavioral`
imports `liedar.errors`, and `behavioral` must import without torch.
"""

__version__ = "0.2.0"
