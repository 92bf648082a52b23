"""Subcommands of the `liedar` CLI, one module each (see liedar.cli)."""
