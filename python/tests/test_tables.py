"""The package's semirings and element types are the library's table (tropical_semiring_facts_of,
tropical_dtype_facts_of), read through the C ABI: names, zeros and ones, the order (+) keeps, the
dtypes each takes. The expected values here are README.md's semantics table, written out."""

from __future__ import annotations

import math

import pytest

from tropical_gemm import _native

# README, "Semantics": (+), (x), and the one (x (x) one = x) for floats, int32 and booleans.
SEMANTICS = {
    "maxplus": ("max", "plus", 0.0, 0),
    "minplus": ("min", "plus", 0.0, 0),
    "maxmul": ("max", "mul", 1.0, 1),
    "maxmin": ("max", "min", math.inf, 2**31 - 1),
    "minmax": ("min", "max", -math.inf, -(2**31)),
}
# LogPlus (log-sum-exp, +): floats only; its one is 0 and its zero -inf.
LOGPLUS = ("log", "plus", 0.0, None)


def test_every_semiring_and_type_comes_from_the_library():
    assert list(_native.SEMIRING_FACTS) == ["maxplus", "minplus", "maxmul", "maxmin", "minmax", "counting", "orand",
                                            "logplus"]
    assert list(_native.ELEMENT_TYPES) == ["float32", "float64", "int32", "int64", "uint8", "bfloat16", "float16",
                                           "int16"]
    assert {n: t.size for n, t in _native.ELEMENT_TYPES.items() if t.size == 2} == {"bfloat16": 2, "float16": 2,
                                                                                    "int16": 2}
    assert _native.COUNTING == "counting"
    assert _native.SEMIRING_FACTS["counting"].dtypes == ("float32", "float64")
    assert _native.SEMIRING_FACTS["orand"].dtypes == ("uint8",)
    assert _native.SEMIRING_FACTS["logplus"].dtypes == ("float32", "float64")
    assert _native.GRADIENT_SEMIRINGS == frozenset(SEMANTICS) | {"logplus"}
    assert _native.READS_RESULT == frozenset({"logplus"})  # its backward reads C where the others read the argmax
    assert _native.SEMIRING_FACTS["logplus"].gradient == _native.GRADIENT_SOFTMAX
    assert _native.DTYPE_CODES["bool"] == _native.DTYPE_CODES["uint8"]
    for name, facts in _native.SEMIRING_FACTS.items():
        assert facts.selects == (name not in ("counting", "logplus"))  # the argmax exists where (+) selects a term
        assert facts.prefers_larger == (facts.plus != "min")


@pytest.mark.parametrize("name", sorted(SEMANTICS))
def test_semantics(name):
    plus, times, float_one, int_one = SEMANTICS[name]
    facts = _native.SEMIRING_FACTS[name]
    assert (facts.plus, facts.times) == (plus, times)
    assert _native.SEMIRING_ALIASES[f"{plus}_{times}"] == name


def test_logplus_row():
    facts = _native.SEMIRING_FACTS["logplus"]
    assert (facts.plus, facts.times) == LOGPLUS[:2]
    for alias in ("logplus", "log_plus", "log-plus"):
        assert _native.SEMIRING_ALIASES[alias] == "logplus"
    assert _native.GRADIENT_READS[facts.value, "a"] == (True, True)  # softmax weights read A and B
    assert _native.GRADIENT_READS[facts.value, "b"] == (True, True)
    # zero -inf, one 0, in both float types
    for dtype in facts.dtypes:
        bits = _native.identity_bits("logplus", dtype, "zero"), _native.identity_bits("logplus", dtype, "one")
        assert bits == ((0xFF800000, 0) if dtype == "float32" else (0xFFF0000000000000, 0))


def test_ones_are_exact():
    torch = pytest.importorskip("torch")
    from tropical_gemm._checks import ONES

    for name, (_, _, float_one, int_one) in SEMANTICS.items():
        assert ONES[name, torch.float32] == float_one
        assert ONES[name, torch.int32] == int_one
    assert ONES["maxmin", torch.int64] == 2**63 - 1
    assert ONES["minmax", torch.int64] == -(2**63)
    assert ONES["orand", torch.bool] is True
    assert ("orand", torch.float32) not in ONES  # only the pairs the table allows
    assert ONES["logplus", torch.float32] == 0.0 and ONES["logplus", torch.float64] == 0.0
    assert ("logplus", torch.int32) not in ONES


def test_distributed_reduction_follows_the_table():
    pytest.importorskip("torch")
    from tropical_gemm.distributed._keys import plus_is_max

    assert [s for s in _native.SEMIRINGS if not plus_is_max(s)] == ["minplus", "minmax"]
    # LogPlus's (+) keeps no one value: the distributed products refuse it (test_logplus.py)
    assert not _native.SEMIRING_FACTS["logplus"].selects
    assert plus_is_max("orand")  # or keeps true, the larger byte
