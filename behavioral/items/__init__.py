"""Built-in item banks, written by this project's own code (never copied data)."""
