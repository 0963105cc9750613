"""Fixtures shared by the tests and the benchmarks: labelled corpora and their readers."""
