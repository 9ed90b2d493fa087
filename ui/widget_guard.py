"""Refuse widget states that no page control sent, before Streamlit reads them.

A browser tells the server the value of every control on its page (``BackMsg``
widget states). Streamlit trusts their type: a slider's id carrying a string, a
radio's carrying a list, or a JSON value nested 10,000 deep makes the value's
deserializer raise while the session state is prepared, before the page runs,
and a full traceback lands in the server log for every such message.

:func:`install` puts a check in front of that step. A state is kept only if the
previous run of the same session registered a control with its id, the value is
of the type that control's browser side sends (:func:`sent_type`), its numbers
are finite and its JSON parses within :data:`MAX_JSON_DEPTH`. Anything else is
dropped, counted in one warning line (never the values) and, in a session that
had controls, reported to that session with a short message (:func:`take_refused`).
A browser that reconnects to a new session after a restart sends its old states
to a session without controls yet; those are dropped quietly and the page starts
from its defaults.

Every rerun the browser asks for, a full run after a click or the live panel's
2-second fragment rerun, carries the state of EVERY control on the page (the
frontend's ``WidgetStateManager.createWidgetStatesMsg``), not only the fragment's.
So one control whose state the check misjudges trips it on every refresh.

Streamlit offers no hook for this; the check wraps
``SessionState.on_script_will_rerun`` and reads ``widget_metadata``. A future
Streamlit without them leaves the wrapper out (see :func:`install`).
"""

from __future__ import annotations

import functools
import json
import logging
import math
from typing import Any

from streamlit.proto.NumberInput_pb2 import NumberInput

from web import json_depth

__all__ = ["MAX_JSON_DEPTH", "REFUSED_KEY", "acceptable", "among_options", "install", "sent_type",
           "take_refused"]

MAX_JSON_DEPTH = 32
#: Session-state key holding how many states were refused since the page last said so.
REFUSED_KEY = "_ldp_refused_widget_states"
_LOG = logging.getLogger(__name__)


def _json_ok(text: str) -> bool:
    # A cheap bound first: json.loads recurses once per bracket.
    if text.count("[") + text.count("{") > 100_000:
        return False
    try:
        return json_depth(json.loads(text)) <= MAX_JSON_DEPTH
    except (ValueError, RecursionError):
        return False


def acceptable(state: Any, value_type: str | None) -> bool:
    """True when a widget state could have come from a control of ``value_type``
    (Streamlit's name of the ``WidgetState`` field it uses, e.g. ``"double_array_value"``).

    >>> from streamlit.proto.WidgetStates_pb2 import WidgetState
    >>> acceptable(WidgetState(id="s", double_value=0.5), "double_value")
    True
    >>> acceptable(WidgetState(id="s", string_value="0.5"), "double_value")
    False
    >>> acceptable(WidgetState(id="s", double_value=float("nan")), "double_value")
    False
    >>> acceptable(WidgetState(id="s", json_value="[" * 99 + "]" * 99), "json_value")
    False
    >>> acceptable(WidgetState(id="s"), "double_array_value")  # a slider with no value
    False
    """
    kind = state.WhichOneof("value")
    if value_type is None or kind != value_type:
        return False
    if kind == "double_value":
        return math.isfinite(state.double_value)
    if kind == "double_array_value":
        # Only a slider sends an array of doubles: its value, or its range's two ends.
        values = state.double_array_value.data
        return len(values) in (1, 2) and all(math.isfinite(x) for x in values)
    if kind in ("json_value", "json_trigger_value"):
        return _json_ok(getattr(state, kind))
    return True


def sent_type(metadata: Any) -> str | None:
    """The ``WidgetState`` field the browser fills for the control ``metadata`` describes
    (None when no control was registered).

    That is the ``value_type`` the control registered with, except for an integer
    ``st.number_input``: it registers ``"double_value"`` for both kinds, but its browser
    side sends ``int_value`` when the input holds whole numbers (Streamlit's
    ``NumberInput``: ``DataType.INT`` → ``setIntValue``, ``FLOAT`` → ``setDoubleValue``),
    and its deserializer takes either. Which kind it is, its deserializer's data type
    says. Streamlit itself copies the received field into the metadata once it reads the
    value, so a registration that already says ``"int_value"`` is taken as it is.

    >>> from types import SimpleNamespace as NS
    >>> sent_type(NS(value_type="bool_value", deserializer=bool))
    'bool_value'
    >>> sent_type(None) is None
    True
    """
    value_type = getattr(metadata, "value_type", None)
    if value_type == "double_value":
        serde = getattr(getattr(metadata, "deserializer", None), "__self__", None)
        if getattr(serde, "data_type", None) == NumberInput.DataType.INT:
            return "int_value"
    return value_type


def among_options(state: Any, metadata: Any) -> bool:
    """False when ``state`` names an option the control does not have: a select slider
    sends its options' labels, and Streamlit would take an unknown one as the default.

    >>> from types import SimpleNamespace as NS
    >>> from streamlit.proto.WidgetStates_pb2 import WidgetState
    >>> slider = NS(deserialize=NS(__self__=NS(formatted_option_to_index={"10": 0})))
    >>> state = WidgetState(id="s")
    >>> state.string_array_value.data.extend(["zz"])
    >>> among_options(state, NS(deserializer=slider.deserialize))
    False
    """
    serde = getattr(getattr(metadata, "deserializer", None), "__self__", None)
    labels = getattr(serde, "formatted_option_to_index", None)
    if not isinstance(labels, dict) or state.WhichOneof("value") != "string_array_value":
        return True
    return all(label in labels for label in state.string_array_value.data)


def _filter(session_state: Any, fresh: Any) -> None:
    metadata = session_state._new_widget_state.widget_metadata
    states = list(fresh.widgets)
    keep = [w for w in states if acceptable(w, sent_type(metadata.get(w.id)))
            and among_options(w, metadata.get(w.id))]
    refused = len(states) - len(keep)
    if not refused:
        return
    del fresh.widgets[:]
    fresh.widgets.extend(keep)
    if not metadata:  # a new session, e.g. a browser reconnecting after a restart
        return
    _LOG.warning("ignored %d widget state(s) that no control on the page could have sent",
                 refused)
    try:
        session_state[REFUSED_KEY] = int(session_state[REFUSED_KEY]) + refused \
            if REFUSED_KEY in session_state else refused
    except Exception:  # noqa: BLE001 - the message is a courtesy; the filtering is done
        pass


def install() -> bool:
    """Put the check in front of Streamlit's widget-state step (once per process).

    Returns False, leaving Streamlit as it is, if its internals are not the ones
    this check was written against.
    """
    try:
        from streamlit.runtime.state.session_state import SessionState
    except ImportError:
        return False
    original = getattr(SessionState, "on_script_will_rerun", None)
    if original is None:
        return False
    if getattr(original, "_ldp_guarded", False):
        return True

    @functools.wraps(original)
    def guarded(self: Any, fresh_widget_states: Any, *args: Any, **kwargs: Any) -> Any:
        if fresh_widget_states is not None:
            try:
                _filter(self, fresh_widget_states)
            except AttributeError:  # internals changed: let Streamlit handle the states
                pass
        return original(self, fresh_widget_states, *args, **kwargs)

    guarded._ldp_guarded = True  # type: ignore[attr-defined]  # a marker on the function
    SessionState.on_script_will_rerun = guarded  # type: ignore[method-assign]  # the hook
    return True


def take_refused() -> int:
    """How many widget states of this session were refused since the last call (then 0)."""
    import streamlit as st

    try:
        return int(st.session_state.pop(REFUSED_KEY, 0))
    except Exception:  # noqa: BLE001 - no session (bare mode)
        return 0
