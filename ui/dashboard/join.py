"""The join panel: the code, the link and the QR code students use."""

from __future__ import annotations

import html
import io
from urllib.parse import urlsplit

import streamlit as st

from ui import session


def _request_base_url() -> str | None:
    """``scheme://host[:port][/base path]`` as the browser sees this app, if known."""
    try:
        url = st.context.url
    except Exception:  # noqa: BLE001 - no browser context (AppTest, bare mode)
        url = None
    prefix = str(st.get_option("server.baseUrlPath") or "").strip("/")
    suffix = f"/{prefix}" if prefix else ""
    if isinstance(url, str) and url.startswith(("http://", "https://")):
        parts = urlsplit(url)
        if parts.netloc:
            return f"{parts.scheme}://{parts.netloc}{suffix}"
    try:
        headers = st.context.headers
        host = headers.get("x-forwarded-host") or headers.get("host")
        proto = headers.get("x-forwarded-proto") or "http"
    except Exception:  # noqa: BLE001 - no request context (bare mode, AppTest): no address
        return None
    if isinstance(host, str) and host and isinstance(proto, str):
        return f"{proto.split(',')[0].strip()}://{host.split(',')[0].strip()}{suffix}"
    return None


def _join_url(code: str) -> tuple[str, str | None]:
    """The student join link and, when phones may not reach it, a warning."""
    note = None
    base = session.settings().public_url  # checked at start: a malformed one stops it
    if not base:
        base = _request_base_url()
        if base is None:
            base = "http://localhost:8501"
            note = ("This server's address is unknown here; set LDP_CLASSROOM_PUBLIC_URL to "
                    "the address students can reach.")
        elif (urlsplit(base).hostname or "") in ("localhost", "127.0.0.1", "::1"):
            note = ("This address works only on this computer. For phones, open the dashboard "
                    "through the network address printed in the terminal, or set "
                    "LDP_CLASSROOM_PUBLIC_URL.")
    return f"{base.rstrip('/')}/join/{code}", note


def _qr_png(url: str) -> bytes:
    import segno

    buf = io.BytesIO()
    segno.make(url, error="m").save(buf, kind="png", scale=10, border=2, dark="#000000",
                                    light="#ffffff")
    return buf.getvalue()


def join_panel(poll, *, big: bool) -> None:
    url, note = _join_url(poll.join_code)
    host = urlsplit(url).netloc
    st.markdown(
        f"<div class='ldp-join'><div class='ldp-join-label'>Join at "
        f"<b>{html.escape(host)}</b> with the code</div>"
        f"<div class='ldp-join-code' data-testid='ldp-join-code'>"
        f"{html.escape(poll.join_code)}</div></div>", unsafe_allow_html=True)
    # On the projector the CSS sizes the QR code to the screen (ui.dashboard.style).
    st.image(_qr_png(url), width="content" if big else 170,
             caption=None if big else "Scan to join", alt=f"QR code of {url}")
    st.code(url, language=None, wrap_lines=True)
    if not big:
        st.caption("The copy icon on the link copies it.")
    if note:
        # The projector says only what is wrong; the desk view gives the whole advice.
        st.caption(f"⚠️ {note.split('. ')[0].rstrip('.')}." if big else f"⚠️ {note}")
