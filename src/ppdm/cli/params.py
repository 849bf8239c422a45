"""``-p key=value``: the text of a mechanism parameter read as the type its class declares.

The text of ``-p symmetric=False`` is not JSON, and kept as a string it counts as true: each value is read
by the annotation of the mechanism's ``__init__`` (``bool``: true/false/yes/no, ``int``: an integer, ...),
and a value that fits none of the declared types is refused, naming the parameter and what it takes.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ppdm.exceptions import ParameterError

__all__ = ["declared_kinds", "parse_params", "parse_value"]

_TRUE = {"true", "yes"}
_FALSE = {"false", "no"}
_NONE = {"none", "null"}
_INT = re.compile(r"[+-]?\d+")

#: the kinds read from text here, with what they take in words; other kinds (lists, objects) are read as JSON
_TAKES = {"bool": "true or false (or yes/no)", "int": "an integer", "float": "a number", "str": "text",
          "None": "none"}


def declared_kinds(method: str, key: str) -> list[str] | None:
    """The types ``method``'s class declares for parameter ``key``, as the names in its annotation.

    Parameters
    ----------
    method : str
        A registered mechanism (:mod:`ppdm.registry`).
    key : str
        A parameter name.

    Returns
    -------
    list of str or None
        E.g. ``['int', 'None']`` for ``int | None``; ``['any']`` when the parameter has no annotation; None
        when the class has no such parameter (:func:`ppdm.registry.build` then names the ones it has).
    """
    from ppdm.registry import get

    params = inspect.signature(get(method).load().__init__).parameters
    if key == "self" or key not in params:
        return None
    ann = params[key].annotation
    if ann is inspect.Parameter.empty:
        return ["any"]
    # the classes use postponed annotations (strings); a real type is formatted the same way
    text = ann if isinstance(ann, str) else inspect.formatannotation(ann)
    return [k.strip() for k in text.split("|")]


def parse_value(key: str, text: str, kinds: Sequence[str] | None) -> Any:
    """Read the text of ``-p key=text`` as one of the declared ``kinds`` (see :func:`declared_kinds`).

    Parameters
    ----------
    key : str
        The parameter, for the message.
    text : str
        The value as typed.
    kinds : sequence of str or None
        The declared types; None (an unknown parameter): JSON, else the text, as before.

    Returns
    -------
    object
        ``None``, a bool, an int, a float, the text, or a JSON value (lists, for list parameters).

    Raises
    ------
    ParameterError
        For an empty value, or one that fits none of the declared types (``rank=abc``, ``symmetric=maybe``).
    """
    t = text.strip()
    takes = " or ".join(_TAKES[k] for k in (kinds or ()) if k in _TAKES) or "a value"
    if not t:
        raise ParameterError(f"-p {key}= gives no value; {key} takes {takes}")
    low = t.lower()
    if kinds is None or any(k not in _TAKES for k in kinds):
        # lists and objects (levels=[2,3], random_state=5), or a name the class lacks: JSON, else the text
        if low in _TRUE | _FALSE and (kinds is None or "bool" in kinds):
            return low in _TRUE
        try:
            return json.loads(t)
        except json.JSONDecodeError:
            return t
    if "None" in kinds and low in _NONE:
        return None
    if "bool" in kinds and low in _TRUE | _FALSE:
        return low in _TRUE
    if "int" in kinds and _INT.fullmatch(t):
        return int(t)
    if "float" in kinds:
        try:
            return float(t)  # nan and inf too: the mechanism's own check names the range it takes
        except ValueError:
            pass
    if "str" in kinds:
        return t
    raise ParameterError(f"-p {key} takes {takes}; got '{t}'")


def parse_params(pairs: Sequence[str] | None, method: str, named: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The ``-p key=value`` pairs of a command, each read as its parameter's declared type.

    Parameters
    ----------
    pairs : sequence of str or None
        The ``-p`` values as typed.
    method : str
        The mechanism they configure.
    named : mapping, optional
        Parameters already set by an option of the command (parameter -> that option, e.g. ``rank`` ->
        ``--rank``): setting one again with ``-p`` is refused, as is one ``-p`` given twice (which of the two
        would win is not for ppdm to guess).

    Returns
    -------
    dict
        Parameter name (dashes as underscores) -> value.
    """
    named = dict(named or {})
    out: dict[str, Any] = {}
    given: dict[str, str] = {}
    for p in pairs or []:
        if "=" not in p or not p.split("=", 1)[0].strip():
            raise ParameterError(f"-p expects key=value, got '{p}'")
        k, v = p.split("=", 1)
        key = k.strip().replace("-", "_")
        if key in given:
            raise ParameterError(f"{key} is given twice, by -p {given[key]} and by -p {p}; give it once")
        if key in named:
            raise ParameterError(f"{key} is given twice, by {named[key]} and by -p {p}; give it once")
        given[key] = p
        out[key] = parse_value(key, v, declared_kinds(method, key))
    return out
