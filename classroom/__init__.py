"""classroom: polls, questions, rounds and randomized reports between ldp_core and the pages.

``PollService.on(Store())`` is the API the pages use: one object per use case
(``service.polls``, ``.running``, ``.reports``, ``.results``, ``.plans``; see
docs/architecture.md). Its packages: :mod:`.service` (the use cases), :mod:`.store` (the
only SQL), :mod:`.domain` (frozen objects and pure rules), :mod:`.kinds` (one module per
kind of question), :mod:`.basics` (errors and vocabulary, below domain and kinds); its
modules: :mod:`.estimates`, :mod:`.csvio`, :mod:`.designs`, :mod:`.display`,
:mod:`.privacy_numbers`, :mod:`.plans` (lesson plans), :mod:`.audits`, :mod:`.auth` (the
instructor's login) and :mod:`.config` (the settings).
No streamlit or starlette import: the app builds one ``Store`` and one ``PollService`` per
process from one ``config.Settings`` (its composition root, :mod:`web.composition`).
"""

from .config import data_dir, database_url, masked_url
from .domain import (
    BadInput,
    BadReport,
    CategoricalEstimate,
    ClassroomError,
    ConfigError,
    Conflict,
    DiskFull,
    NotFound,
    OverBudget,
    Poll,
    Question,
    QuestionClosed,
    QuestionEstimate,
    Receipt,
    Round,
    StoreUnavailable,
    UnknownPoll,
    UnknownQuestion,
    normalize_join_code,
)
from .service import PollService
from .store import Store, make_engine

__all__ = [
    "BadInput",
    "BadReport",
    "CategoricalEstimate",
    "ClassroomError",
    "ConfigError",
    "Conflict",
    "DiskFull",
    "NotFound",
    "OverBudget",
    "Poll",
    "PollService",
    "Question",
    "QuestionClosed",
    "QuestionEstimate",
    "Receipt",
    "Round",
    "Store",
    "StoreUnavailable",
    "UnknownPoll",
    "UnknownQuestion",
    "data_dir",
    "database_url",
    "make_engine",
    "masked_url",
    "normalize_join_code",
]
