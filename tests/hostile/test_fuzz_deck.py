"""The fuzz suite's short run still uses every mutation: the deck deals shuffled rounds."""

from __future__ import annotations

import random
from collections import Counter
from itertools import islice

from tests.hostile.fuzz.mutate import MUTATIONS, deck
from tests.hostile.fuzz.runner import SHORT_CASES


def test_a_short_run_deals_every_mutation_its_share() -> None:
    rounds = SHORT_CASES // len(MUTATIONS)
    for seed in range(20):
        dealt = Counter(islice(deck(random.Random(seed)), rounds * len(MUTATIONS)))
        assert dealt == Counter({m: n * rounds for m, n in Counter(MUTATIONS).items()})
    assert rounds >= 10  # the short default still uses each kind ten times or more per service


def test_the_deal_repeats_with_the_seed() -> None:
    first = list(islice(deck(random.Random(7)), 50))
    assert first == list(islice(deck(random.Random(7)), 50))
    assert first != list(islice(deck(random.Random(8)), 50))
