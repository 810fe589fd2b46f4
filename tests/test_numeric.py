"""The shared logistic and softmax: the plain forms' values, and no numpy warning for any
finite input (a prune over 10,000 passages printed "overflow encountered in exp")."""

from __future__ import annotations

import warnings

import numpy as np

from ragsieve.numeric import sigmoid, softmax


def test_sigmoid_never_overflows_and_keeps_the_plain_values() -> None:
    x = np.array([-1e6, -800.0, -745.5, -30.0, -1.0, 0.0, 1.0, 30.0, 800.0, 1e6])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any numpy RuntimeWarning fails the test
        got = sigmoid(x)
        assert float(sigmoid(-1000.0)) == 0.0 and sigmoid(np.float32(2.0)).shape == ()
        s = softmax(np.array([[1000.0, 0.0, -1000.0], [1.0, 1.0, 1.0]]), axis=1)
    assert got[0] == 0.0 and got[-1] == 1.0 and got[5] == 0.5
    assert np.all(np.diff(got) >= 0)
    mid = np.array([-30.0, -1.0, 0.0, 1.0, 30.0])
    assert np.allclose(sigmoid(mid), 1.0 / (1.0 + np.exp(-mid)), rtol=1e-15, atol=0)
    assert np.array_equal(sigmoid(mid[2:]), 1.0 / (1.0 + np.exp(-mid[2:])))  # x >= 0: bit-equal
    assert np.allclose(s, [[1.0, 0.0, 0.0], [1 / 3, 1 / 3, 1 / 3]])
    assert sigmoid(np.zeros((2, 3))).shape == (2, 3)
