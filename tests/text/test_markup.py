"""A span of document text shown as plain text (``ragsieve.text.markup.plain``): Markdown
links, escapes and emphasis stars go; globs, identifiers and other backslashes stay."""

from __future__ import annotations

import pytest

from ragsieve.text.markup import plain


@pytest.mark.parametrize(
    ("marked", "shown"),
    [
        ("[RFC8878](https://datatracker.ietf.org/doc/html/rfc8878)", "RFC8878"),
        ('see [the docs](https://example.org "Docs") here', "see the docs here"),
        ("![logo](x.png) text", "logo text"),
        (r"$XDG\_CONFIG\_HOME/git/ignore", "$XDG_CONFIG_HOME/git/ignore"),
        (r"ninja -t graph mytarget \| dot -Tpng", "ninja -t graph mytarget | dot -Tpng"),
        ("*git ls-files*", "git ls-files"),
        ("**ffi_status** and ***x***", "ffi_status and x"),
        ("segmentation fault.**", "segmentation fault."),
        (r"\*not emphasis\*", "*not emphasis*"),
    ],
)
def test_markup_goes(marked: str, shown: str) -> None:
    assert plain(marked) == shown


@pytest.mark.parametrize(
    "text",
    ["*.tar.gz", "FullPathToTrainingSet/*", "__NOGLOBS__", r"MIME-TreeMagic\0\n", "2 * 3 = 6"],
)
def test_globs_identifiers_and_other_backslashes_stay(text: str) -> None:
    assert plain(text) == text
