"""The widget-state guard keeps exactly the states a page's own controls send.

The controls are registered by Streamlit itself (an AppTest run of a small page), and
each gets the state its browser side sends (Streamlit's frontend: an integer number
input fills ``int_value``, a float one ``double_value``, a slider
``double_array_value``, ...) and the states it never sends. The first must pass, the
second must not: a guard that refused an integer input's own state refused it on every
live refresh of the dashboard, and one that let any number through would not be exact.
"""

from __future__ import annotations

import math

import pytest
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.testing.v1 import AppTest

from ui.widget_guard import acceptable, sent_type


def _page() -> None:
    import streamlit as st

    st.number_input("whole", 1, 5000, 40, key="whole")
    st.number_input("whole, empty", min_value=0, value=None, key="whole_empty")
    st.number_input("real", min_value=0.1, max_value=100.0, value=3.0, step=0.1,
                    key="real")
    st.number_input("real, empty", value=None, key="real_empty")
    st.slider("slider", 0.0, 1.0, 0.5, key="slider")
    st.checkbox("box", key="box")
    st.button("go", key="go")
    st.selectbox("pick", ["a", "b"], key="pick")
    st.text_input("text", key="text")


def _state(widget_id: str, kind: str) -> WidgetState:
    state = WidgetState(id=widget_id)
    if kind == "int_value":
        state.int_value = 7
    elif kind == "double_value":
        state.double_value = 7.0
    elif kind == "double_array_value":
        state.double_array_value.data.extend([0.25])
    elif kind == "bool_value":
        state.bool_value = True
    elif kind == "trigger_value":
        state.trigger_value = True
    elif kind == "string_value":
        state.string_value = "b"
    return state


#: What each control's browser side sends (Streamlit 1.67's frontend widgets).
SENDS = {"whole": "int_value", "whole_empty": "int_value", "real": "double_value",
         "real_empty": "double_value", "slider": "double_array_value", "box": "bool_value",
         "go": "trigger_value", "pick": "string_value", "text": "string_value"}
KINDS = sorted(set(SENDS.values()))


@pytest.fixture(scope="module")
def metadata():
    at = AppTest.from_function(_page).run()
    assert not at.exception
    state = at.session_state._state._state  # the SessionState behind the test's proxy
    by_key = {}
    for widget_id, meta in state._new_widget_state.widget_metadata.items():
        key = state._key_id_mapper.get_key_from_id(widget_id)
        by_key[key] = meta
    assert set(by_key) == set(SENDS)
    return by_key


@pytest.mark.parametrize("key", sorted(SENDS))
def test_each_control_gets_exactly_the_kind_its_browser_sends(metadata, key):
    meta = metadata[key]
    assert sent_type(meta) == SENDS[key]
    for kind in KINDS:
        ok = acceptable(_state(meta.id, kind), sent_type(meta))
        assert ok == (kind == SENDS[key]), (key, kind)


def test_numbers_stay_finite_and_unknown_ids_stay_out(metadata):
    real = metadata["real"]
    assert not acceptable(WidgetState(id=real.id, double_value=math.inf), sent_type(real))
    assert not acceptable(WidgetState(id="nobody", int_value=3), sent_type(None))
