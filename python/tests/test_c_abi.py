"""The package's use of the library's public C ABI, without a GPU and without PyTorch: the status
codes and the exceptions made from them, and the descriptors and options as the ops pack them
(every field read where the library expects it, the device hint included)."""

from __future__ import annotations

import ctypes
import subprocess
import textwrap

import pytest

import tropical_gemm as tg
from tropical_gemm import _native, _nvrtc

# Never dereferenced: every call below fails its checks, or has no work, before memory is touched.
A, B, C = 0x10000, 0x20000, 0x30000


def matrix(data, rows, cols, ld=None, layout=_native.ROW_MAJOR, batch_stride=0):
    return _native.MATRIX.pack(data, rows, cols, cols if ld is None else ld, layout, batch_stride)


def options(device_hint=1, stream=0, accumulate=0):
    return _native.OPTIONS.pack(stream, accumulate, device_hint)


def gemm(a, b, c, batch=1, opts=None, semiring=0, dtype=0):
    """tropical_gemm called as the ops call it: no argtypes, descriptors as bytes, batch as c_int64."""
    status = _native.undeclared("tropical_gemm")(semiring, dtype, a, b, c, ctypes.c_int64(batch),
                                                 options() if opts is None else opts)
    return _native.library_error(status) if status else None


# --- status codes -----------------------------------------------------------------------------


def test_every_status_of_the_library_has_its_exception():
    names = _native.status_names()
    assert names[0] == "Success" and len(names) >= 10
    assert _native.lib.tropical_status_name(len(names)) is None
    assert _native.lib.tropical_status_name(-1) is None
    for value, name in names.items():
        if value == 0:
            continue
        cls = _native.exception_for(value)
        assert cls.__name__ == (name if name.endswith("Error") else name + "Error")
        assert cls.status == value and issubclass(cls, tg.TropicalError)
        assert getattr(tg, cls.__name__) is cls  # exported


def test_exception_classes_keep_their_bases():
    assert issubclass(tg.InvalidArgumentError, ValueError)
    assert issubclass(tg.UnsupportedError, NotImplementedError)
    assert issubclass(tg.OutOfMemoryError, MemoryError)
    assert issubclass(tg.TropicalError, RuntimeError)
    names = _native.status_names()
    assert tg.TropicalError.status == tg.InternalError.status == next(v for v, n in names.items() if n == "Internal")
    assert tg.InvalidArgumentError("x").status == tg.InvalidArgumentError.status
    assert tg.TropicalError("x", status=42).status == 42


def test_an_unknown_status_still_raises():
    err = _native.library_error(999)
    assert type(err) is tg.TropicalError and err.status == 999


# --- the descriptors and options, as the library reads them -----------------------------------


def test_an_empty_product_with_a_device_hint_needs_no_driver():
    # Nothing to compute: the call succeeds without touching the driver (there is none here).
    assert gemm(matrix(0, 0, 3), matrix(B, 3, 4), matrix(0, 0, 4)) is None


def test_every_field_is_read_where_the_library_expects_it():
    err = gemm(matrix(A, 2, 3), matrix(B, 4, 5), matrix(C, 2, 5))
    assert isinstance(err, tg.InvalidArgumentError) and "B is 4x5 but must be 3x5" in str(err)
    err = gemm(matrix(A, 2, 3, ld=2), matrix(B, 3, 5), matrix(C, 2, 5))
    assert "A is row-major with 3 columns, so its leading dimension must be at least 3; it is 2" in str(err)
    err = gemm(matrix(A, 2, 3), matrix(B, 3, 5), matrix(C, 2, 5, layout=3))
    assert "C has an unknown layout (3)" in str(err)
    err = gemm(matrix(A, 2, 3, batch_stride=-5), matrix(B, 3, 5), matrix(C, 2, 5))
    assert "A has a negative batch stride (-5)" in str(err)
    err = gemm(matrix(0, 2, 3), matrix(B, 3, 5), matrix(C, 2, 5))
    assert "A is a null pointer but has 2x3 elements" in str(err)
    err = gemm(matrix(A, 2, 3), matrix(B, 3, 5), matrix(C, 2, 5), batch=-1)  # the int64 batch count
    assert "the batch count is -1" in str(err)
    err = gemm(matrix(A, 2, 3), matrix(B, 3, 5), matrix(C, 2, 5), semiring=99)
    assert isinstance(err, tg.InvalidArgumentError) and "unknown semiring (99)" in str(err)
    err = gemm(matrix(A, 2, 3), matrix(B, 3, 5), matrix(C, 2, 5), dtype=9)
    assert "unknown element type (9)" in str(err)


def test_a_negative_device_hint_is_refused():
    err = gemm(matrix(A, 2, 3), matrix(B, 3, 5), matrix(C, 2, 5), opts=options(device_hint=-1))
    assert isinstance(err, tg.InvalidArgumentError)
    assert "options.device_hint is -1: it is 0 (no hint) or TROPICAL_DEVICE_HINT(d) = d + 1" in str(err)


def test_backward_of_integers_is_unsupported():
    x = matrix(A, 4, 4)
    fn = _native.undeclared("tropical_gemm_backward_a")
    status = fn(0, 2, x, matrix(B, 4, 4), None, None, matrix(C, 4, 4), ctypes.c_int64(1), options())
    err = _native.library_error(status, "tropical.gemm_backward_a: ")
    assert isinstance(err, tg.UnsupportedError) and isinstance(err, NotImplementedError)
    assert str(err).startswith("tropical.gemm_backward_a: backward is implemented for f32 and f64")


def test_the_declared_functions_agree():
    # The argtypes-declared handles (for everything but the ops' hot path) read the same structs.
    status = _native.lib.tropical_gemm(0, 0, matrix(A, 2, 3), matrix(B, 4, 5), matrix(C, 2, 5), 1, options())
    assert "B is 4x5 but must be 3x5" in str(_native.library_error(status))


def test_a_hinted_call_without_a_driver_says_so(python, subprocess_env):
    # A valid, non-empty product: the hint sends it straight to that device's context, which needs
    # the driver. Pointed at a driver that does not exist (also on a GPU machine), it says so.
    env = dict(subprocess_env, TROPICAL_GEMM_CUDA_DRIVER="/nonexistent/libcuda.so.1")
    code = textwrap.dedent(f"""
        import ctypes
        import tropical_gemm as tg
        from tropical_gemm import _native
        M = _native.MATRIX.pack
        status = _native.undeclared("tropical_gemm")(0, 0, M({A}, 2, 3, 3, 0, 0), M({B}, 3, 5, 5, 0, 0),
                                                      M({C}, 2, 5, 5, 0, 0), ctypes.c_int64(1),
                                                      _native.OPTIONS.pack(0, 0, 1))
        err = _native.library_error(status)
        print(type(err).__name__, err.status, str(err).splitlines()[0])
        """)
    r = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"NoDriverError {tg.NoDriverError.status} no usable CUDA driver"), r.stdout


@pytest.mark.parametrize("size", [1, 3])
def test_nvrtc_search_path_needs_room(size):
    # The library says how much room it needs; the package's wrapper grows its buffer.
    buffer = ctypes.create_string_buffer(size)
    status = _native.lib.tropical_nvrtc_search_path(buffer, size)
    err = _native.library_error(status)
    assert isinstance(err, tg.InvalidArgumentError) and "bytes but" in str(err)
    assert _nvrtc.search_path()
