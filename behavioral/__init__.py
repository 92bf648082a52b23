"""Black-box deception instruments: they need only records of what a model answered.

Never imports torch, `models` or `probes` at import time; runners that need a model
import `models` inside the function that needs it.
"""
