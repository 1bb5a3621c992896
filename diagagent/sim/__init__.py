"""The incident simulator: writes realistic bundles (BUNDLE.md) with a truth.json, deterministic per seed.

Used by the eval suites, the benches and the tests.
"""
