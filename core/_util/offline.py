"""Import this before transformers/huggingface_hub: liedar never touches the network.

The switches must be in the environment *before* those libraries are imported, because
they read them at import time.
"""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
