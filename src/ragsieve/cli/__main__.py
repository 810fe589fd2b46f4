"""``python -m ragsieve.cli``: the ``ragsieve`` command."""

from ragsieve.cli import main

if __name__ == "__main__":
    main()
