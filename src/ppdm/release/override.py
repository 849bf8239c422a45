"""The data steward's choice: a candidate other than the policy's, released with the reason they gave.

The policy picks the most useful candidate within its limits; a steward may prefer another one that also
holds every limit (a simpler mechanism, a column kept, a formal guarantee). The sweep is the same, and the
record then names both choices and the steward's reason (``record["choice"]``); the chosen candidate's
release, state and report are made and published by the same output layer as the policy's would be.
"""

from __future__ import annotations

from typing import Any

from ppdm.exceptions import ParameterError

__all__ = ["MAX_REASON", "candidate_name", "choosable", "clean_reason", "apply_choice"]

#: the longest reason kept in the record (a paragraph, not a document)
MAX_REASON = 2000


def candidate_name(c: dict[str, Any]) -> str:
    """The name a steward chooses a candidate by: ``mdav(k=20)``, ``mdav(k=20)+pram(pd=0.5)``."""
    from ppdm.release.candidates import describe

    return describe(c["method"], c["params"])


def choosable(c: dict[str, Any], policy: Any) -> str | None:
    """Why a scored candidate cannot be chosen by a steward (None: it can).

    Only a candidate measured by every attack and utility that holds every limit of the policy can be: the
    policy's limits are the steward's to change (in the configuration), not to step over one release at a time.
    """
    from ppdm.release.select import policy_violations

    if "failed" in c:
        return f"it failed: {c['failed']}"
    if c.get("stage") == "first pass" or (c.get("measured_on") or {}).get("stage") == "screening":
        return ("it was not measured by the full battery (stopped after the sweep's first pass); run the sweep "
                "with the full battery (--full-battery) to measure it fully")
    why = policy_violations(c, policy)
    if why:
        return "it breaks the policy: " + "; ".join(why) + " (relax the policy's limits to allow it)"
    return None


def clean_reason(reason: str | None) -> str:
    """The steward's reason on one line (runs of spaces and line breaks as one space); refused when empty or
    longer than :data:`MAX_REASON`."""
    text = " ".join((reason or "").split())
    if not text:
        raise ParameterError("choosing a candidate other than the policy's needs the reason, in words "
                             "(--reason \"...\"); it is kept in the record")
    if len(text) > MAX_REASON:
        raise ParameterError(f"the reason is {len(text)} characters long; keep it under {MAX_REASON}")
    return text


def apply_choice(cands: list[dict[str, Any]], best: int, choose: str, reason: str | None,
                 policy: Any) -> tuple[int, dict[str, Any]]:
    """Mark the steward's candidate ``choose`` (its :func:`candidate_name`) as chosen in place of ``best``.

    Returns its index and the record's ``choice`` entry (the policy's choice, the steward's, the reason).
    Raises :class:`ParameterError` when the reason is missing, the name matches no scored candidate, or that
    candidate cannot be chosen (:func:`choosable`).
    """
    text = clean_reason(reason)
    names = [candidate_name(c) for c in cands]
    wanted = "".join(choose.split())
    matches = [i for i, n in enumerate(names) if "".join(n.split()) == wanted]
    if not matches:
        shown = ", ".join(n for n, c in zip(names, cands, strict=True) if choosable(c, policy) is None)
        raise ParameterError(f"no candidate of the sweep is named '{choose}'; those that can be chosen: {shown}")
    i = matches[0]
    refused = choosable(cands[i], policy)
    if refused is not None:
        raise ParameterError(f"candidate '{names[i]}' cannot be chosen: {refused}")
    choice = {"by": "steward" if i != best else "policy", "policy": names[best], "steward": names[i],
              "reason": text}
    if i != best:
        cands[best]["chosen"] = False
        policy_reason = str(cands[best]["verdict"]).removeprefix("chosen: ")
        cands[best]["verdict"] = f"the policy's choice ({policy_reason}); the steward chose {names[i]}"
        cands[i]["chosen"] = True
        cands[i]["verdict"] = f"chosen by the steward in place of the policy's {names[best]}: {text}"
    return i, choice
