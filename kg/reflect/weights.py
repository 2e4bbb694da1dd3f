"""Read the `kg reflect` model (rules/reflect_model.toml): one logistic regression per class, its weights checked
against the signals rules/reflect.toml defines, so a weight for a signal that does not exist is an error naming it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kg.core.policy import RuleReader

from .rules import DETECTORS, ClassModel, ReflectRulesError, Signals


def class_models(data: Mapping[str, Any] | None, signals: Signals, *, source: str) -> dict[str, ClassModel]:
    """The weights of each class, checked against the signals the rules define."""
    if data is None:
        return {}
    top = RuleReader(data, source, error=ReflectRulesError).known(("version", "trained", "classes"))
    if top.whole("version", int_only=True) != 1:
        raise top.fail("version", "unsupported version; this kg understands version 1")
    top.table("trained", {})  # provenance, free-form
    known = set(signals.names)
    out: dict[str, ClassModel] = {}
    classes = top.table("classes")
    for name in classes.data:
        if name not in DETECTORS:
            raise classes.fail(name, f"unknown class (known: {', '.join(DETECTORS)})")
        c = classes.table(name).known(("bias", "weights", "threshold"))
        w = c.table("weights")
        weights = {}
        for signal in w.data:
            if signal not in known:
                raise w.fail(signal, "not a signal of rules/reflect.toml [signals] (or a computed one)")
            weights[signal] = w.number(signal)
        threshold = c.number("threshold", 0.0, 1.0) if "threshold" in c.data else None
        out[name] = ClassModel(c.number("bias"), weights, threshold)
    return out
