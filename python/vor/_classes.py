"""@vor.all_functions: every method of a class profiled, as with @vor.profile on each.

Kept in Python because it runs once, when the class is made; the scopes it creates are
the C decorator's (vor._vor.profile), so calls cost the same as with @vor.profile.
"""

import inspect

from ._vor import profile

__all__ = ["all_functions"]


def _skipped(func):
    return getattr(func, "__vor_skip__", False) is True


def _profile_function(func):
    if not inspect.isfunction(func) or _skipped(func):
        return func
    return profile(func)


def _profile_member(member):
    """The class attribute `member` with its functions profiled (the same object if none)."""
    if isinstance(member, (staticmethod, classmethod)):
        inner = member.__func__
        profiled = _profile_function(inner)
        return member if profiled is inner else type(member)(profiled)
    if isinstance(member, property):
        accessors = [_profile_function(f) if f is not None else None for f in (member.fget, member.fset, member.fdel)]
        if all(a is b for a, b in zip(accessors, (member.fget, member.fset, member.fdel))):
            return member
        return type(member)(*accessors, member.__doc__)
    return _profile_function(member)


def all_functions(cls):
    """Class decorator: every function defined in the class body (methods, static and
    class methods, property accessors) becomes a @vor.profile'd one, named
    module.Class.method. Functions marked with @vor.skip, and functions already profiled,
    are left as they are. Subclasses and nested classes are not affected."""
    if not isinstance(cls, type):
        raise TypeError(f"vor.all_functions decorates a class, not {type(cls).__name__}")
    for name, member in list(vars(cls).items()):
        profiled = _profile_member(member)
        if profiled is not member:
            setattr(cls, name, profiled)
    return cls
