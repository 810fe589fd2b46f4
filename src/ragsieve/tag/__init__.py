"""The evidence tagger as a question runs it: input windows (``encode.py``), the ONNX model
(``model.py``, ``graph.py``), the answer span (``span.py``), the stacked keep decision
(``stack.py``, ``verdict.py``) and pruning (``prune.py``). Its training: :mod:`ragsieve.tag.fit`.
"""
