"""Words a question names that the retrieved text never mentions (``ragsieve.text.words``):
a rare word absent in every form is found; a common word, a slip of the pen, a misspelt common
word, an inflection, a longer form and two words written as one (one maybe a function word) are
not."""

from __future__ import annotations

from ragsieve.rerank.bm25 import tokenize
from ragsieve.text.words import absent_names, absent_words, is_rare, misspelt, stem

NETTLE = "Nettle provides PBKDF2 with HMAC-SHA256 for deriving keys from passwords."


def absent(question: str, text: str) -> list[str]:
    return absent_words(tokenize(question), tokenize(text))


def test_a_rare_word_no_text_mentions_is_absent() -> None:
    assert absent("Which Nettle function computes Argon2 password hashes?", NETTLE) == ["argon2"]
    assert absent("Does Nettle implement Kyber or scrypt?", NETTLE) == ["kyber", "scrypt"]
    # a number of five digits is rare; "cve" (Zipf 2.4) is not
    assert absent("Which Expat version fixed CVE-2022-25235?", "Expat 2.4.5 fixed it.") == ["25235"]
    assert absent("蜜蜂的舞蹈是谁解码的？", "Karl von Frisch decoded the waggle dance.")


def test_common_words_and_the_texts_own_forms_are_held() -> None:
    # a paraphrase in common English never decides: "timezone" for "Samoa Time"
    assert absent("What timezone do the Minor Outlying Islands observe?", "Samoa Time") == []
    assert absent("What position does the footballer paly?", "He plays as a defender") == []
    assert absent("Which brittish band sang it?", "the British band Queen") == []
    assert absent("Are patterns matched case-insensitive?", "matched case-insensitively") == []
    assert absent("Which pthreads calls?", "the pthread library") == []
    assert absent("Which Nettle function hashes passwords?", NETTLE) == []
    assert absent("Argon2?", "Argon2 is a password hash.") == []
    # a word of the text run into a function word, which the search words never hold
    assert absent("What is the massof the probe?", "The probe has a mass of 722 kg.") == []
    assert absent("Who won the cup in2014?", "Germany won the cup in 2014.") == []
    assert absent("What is the massof the probe?", "The probe weighs 722 kg.") == ["massof"]
    # a short word is never judged, a word is only rare once
    assert absent("Is kyber or kyber 19 here?", "nothing") == ["kyber"]


def test_rare_and_stem() -> None:
    assert is_rare("argon2") and is_rare("xpath") and is_rare("拉丁")
    assert not is_rare("timezone") and not is_rare("password") and not is_rare("tungsten")
    assert stem("announced") == stem("announce") == "announc" and stem("bees") == "bee"


def test_a_misspelt_common_word_is_not_rare() -> None:
    # a letter dropped, added or two neighbours swapped, after the first letter
    assert misspelt("accomlish") and misspelt("dissloved") and misspelt("comitted")
    assert not is_rare("accomlish") and not is_rare("brittish")
    # a changed letter or the first letter does not count: these are names, not slips
    assert not misspelt("scrypt") and not misspelt("pthreads") and not misspelt("kyber")
    assert is_rare("scrypt") and is_rare("gdbserver") and is_rare("submodules")
    assert absent("How many tackles did he accomlish?", "He made five solo tackles.") == []


def test_a_name_in_code_form_no_text_holds_is_absent() -> None:
    doc = "Memcheck's --leak-check=full calls ffi\\_prep\\_cif; see MIME.cache and Node.js."
    q = "Does --leak-check or --freelist-vol call ffi_prep_cif on mime.cache, node.js or .docx?"
    assert absent_names(q, doc) == ["--freelist-vol", ".docx"]
    # abbreviations and prose are no names: "U.S.", "e.g.", a hyphenated word, a bare word
    assert absent_names("Which U.S. state, e.g. a long-distance one, or Ohio?", "nothing") == []
    # two words run together at a full stop are prose, not a name
    assert absent_names("What did Apple Inc.suggest in the city.It was?", "nothing") == []
    assert absent_names("What is git's gc.auto default?", "git gc runs") == ["gc.auto"]
    # a version number: a release the text never mentions ("3.19.0" holds "3.19")
    v = "Does Valgrind 3.19 or 1.0.2 run there, or Python 3.11?"
    assert absent_names(v, "Valgrind 3.19.0 runs; Python 3.12") == ["1.0.2", "3.11"]
    assert absent_names("Is it 10.5 million?", "It is $10.5 million.") == []
    # a number with one dot is a release only after a product's name; else a quantity
    assert absent_names("Who hit 0.300 in 7 seasons, 2.5 times?", "a .300 hitter") == []
    assert absent_names("Is core.excludesFile or foo::bar() set?", "nothing") == [
        "core.excludesFile",
        "foo::bar",
    ]
