"""ragsieve's benchmarks: ``python -m benchmarks`` lists them, ``python -m benchmarks NAME`` runs
one (see ``__main__.py``); shared loading, intervals, tables and timing live in ``common.py``."""
