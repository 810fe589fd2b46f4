"""The tagger's training, apart from what a question runs (:mod:`ragsieve.tag`).

* ``data.py``: the training examples and their sources, every split from ``shared/data``;
  ``junk.py``: layout lines added as negatives; ``pools.py``: the dev and training pools.
* ``net.py``: the network and its weights; ``recipe.py``: how it is trained; ``train.py``: the
  run's steps (``train-tagger``, or ``python -m ragsieve.tag.fit.train prepare | fit | export``
  for a GPU machine); ``card.py``: the trained folder's card and operating point.
* ``head.py``, ``span.py``, ``stack.py``: the refits on the CPU (``python -m
  ragsieve.tag.fit.head``, ``.span``, ``.stack``); ``args.py``: their one-line error contract.
"""
