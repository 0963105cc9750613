"""Reproducible benchmarks for memdesk: `python -m bench` (`make bench`); see README.md."""
