"""Borrowed array views: the same data without reference counting.

numba counts references to every array a kernel holds: a called kernel
increments the count of each array argument on entry and decrements it on
exit, each an atomic instruction on the array's shared ``MemInfo``.  The
node loop makes such calls per candidate projection with a dozen arrays
each, and the atomic updates (``NRT_incref`` / ``NRT_decref`` under
``perf``) were a large share of a tree's fit (figures in
``docs/engine.md``).

:func:`borrowed` returns views without a ``MemInfo``, as numba gives arrays
over foreign memory (``numba.carray``); its reference counting skips them.  A
view does not keep its data alive, so the kernel that takes it must hold the
array it came from until the view's last use: an argument of the kernel, or
an array it passes to :func:`keep_alive` after that use.  Views must not be
returned or stored beyond that.
"""

from __future__ import annotations

from numba.core import cgutils, types
from numba.extending import intrinsic


def _borrowable(ty) -> bool:
    """Arrays, and tuples of arrays and plain values (nothing else is reference-counted)."""
    if isinstance(ty, types.BaseTuple):
        return all(_borrowable(t) for t in ty)
    return isinstance(ty, types.Array | types.Number | types.Boolean | types.NoneType)


def _view(context, builder, ty, value):
    if isinstance(ty, types.Array):
        view = cgutils.create_struct_proxy(ty)(context, builder, value=value)
        view.meminfo = cgutils.get_null_value(view.meminfo.type)
        view.parent = cgutils.get_null_value(view.parent.type)
        return view._getvalue()
    if isinstance(ty, types.BaseTuple):
        items = [
            _view(context, builder, t, builder.extract_value(value, i)) for i, t in enumerate(ty)
        ]
        return context.make_tuple(builder, ty, items)
    return value


@intrinsic
def borrowed(typingctx, arr):
    """``arr`` (an array, or a tuple of arrays and scalars) as views numba does not count."""
    if not _borrowable(arr):
        return None

    def codegen(context, builder, signature, args):
        return _view(context, builder, arr, args[0])

    return arr(arr), codegen


@intrinsic
def keep_alive(typingctx, owners):
    """A use of ``owners`` (no code): numba keeps a variable alive until its last use."""

    def codegen(context, builder, signature, args):
        return context.get_dummy_value()

    return types.none(owners), codegen
