"""A two-hop toy question the tagger tests share: the film names the actress, her own passage
holds the answer, and the Eiffel Tower says nothing about either."""

from typing import Any

from ragsieve.tag.settings import TaggerSettings

FILM = [
    "Kiss and Tell is a 1945 American comedy film starring Shirley Temple as Corliss Archer.",
    "It was directed by Richard Wallace.",
]
TEMPLE = [
    "Shirley Temple Black was an American actress, singer, dancer and diplomat.",
    "As an adult she served as Chief of Protocol of the United States.",
]
OTHER = ["The Eiffel Tower was completed in 1889 for the World's Fair in Paris."]
QUESTION = (
    "What government position was held by the woman who portrayed Corliss Archer in the film "
    "Kiss and Tell?"
)
PASSAGES = [("Eiffel Tower", OTHER), ("Kiss and Tell", FILM), ("Shirley Temple", TEMPLE)]


def bare(**settings: Any) -> TaggerSettings:
    """The tagger's settings with ``settings`` set and carrying off (no leads, no links): the
    pruner's mechanics alone, as these tests read them."""
    return TaggerSettings(**{"lead": False, "link": False, **settings})
