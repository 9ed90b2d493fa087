"""The public surface of ldp_core: its names, its dependencies, its documentation."""

from __future__ import annotations

import ast
import inspect
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ldp_core

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "ldp_core"
FIVE_MINUTES = ROOT / "docs" / "ldp-core-in-five-minutes.md"

#: The public names. Adding or removing one is an API change: update this list
#: deliberately, together with ldp_core.__all__.
EXPECTED_ALL = [
    "ALPHA",
    "AUDIT_TAIL",
    "AuditDistribution",
    "BinaryCounts",
    "BinaryDesign",
    "BinaryEstimate",
    "CategoricalCounts",
    "DELTA_MIN",
    "DEVICE_CELLS",
    "DieRR",
    "DuchiMechanism",
    "EpsilonRR",
    "ErrorSummary",
    "ForcedResponse",
    "FrequencyOracle",
    "GRR",
    "GammaRR",
    "HYBRID_EPSILON_STAR",
    "HybridMechanism",
    "INTERVAL_METHODS",
    "LaplaceMechanism",
    "LikelihoodProfile",
    "MemoRR",
    "ModelSDs",
    "ModelShares",
    "NUMERIC_NAMES",
    "NumericDesign",
    "NumericEstimate",
    "NumericMechanism",
    "NumericRange",
    "OLH",
    "OLHReports",
    "ORACLE_NAMES",
    "POSTPROCESSING",
    "PiecewiseMechanism",
    "Plausibility",
    "Posterior",
    "REPORT_TAIL",
    "SURVEY_MODES",
    "ShuffleGuarantee",
    "StuffedClass",
    "SurveyDesign",
    "SurveyPrivacy",
    "TwoCoinRR",
    "UnaryEncoding",
    "WarnerRR",
    "alpha_round",
    "audit_distribution",
    "audit_epsilon",
    "audit_runs_needed",
    "binary_design_from_params",
    "binary_plausibility",
    "blind_zone",
    "categorical_oracle_from_params",
    "central_mean_sd",
    "central_numeric_sd",
    "chi2_1_quantile",
    "chi2_sf",
    "clip_counts",
    "clones_closed_form",
    "clones_closed_form_limit",
    "clones_delta",
    "clones_epsilon",
    "composed_epsilon",
    "coverage_shares",
    "design_from_params",
    "empirical_channel",
    "epsilon_to_gamma",
    "error_order",
    "error_summary",
    "exact_interval",
    "expected_width",
    "fake_channel",
    "fake_report",
    "fake_report_gain",
    "fakes_until_alarm",
    "false_present_rate",
    "federated_share_sd",
    "feldman_cousins_interval",
    "gamma_to_epsilon",
    "grr_em",
    "grr_plausibility",
    "interval_coverage",
    "laplace_mechanism",
    "likelihood_profile",
    "local_mean_sd",
    "local_n_for_central_accuracy",
    "majority_reveal_probability",
    "max_error_scale",
    "model_share_sds",
    "needed_class_size",
    "norm_sub",
    "numeric_crossover",
    "numeric_design_from_params",
    "numeric_mechanism",
    "numeric_plausibility",
    "oracle",
    "pm1_mean_abs_error",
    "pm1_mean_estimate",
    "posterior_bounds",
    "posterior_true_yes",
    "presence_threshold",
    "privacy_ratio",
    "randomized_round",
    "rappor_epsilons",
    "recommend_numeric",
    "recommend_oracle",
    "repeated_posterior",
    "report_probability",
    "rr_variance_unit",
    "rs_fd_epsilon",
    "sd_with_se",
    "sequential_composition",
    "share_estimates",
    "share_intervals",
    "shuffle_delta",
    "shuffle_epsilon",
    "shuffle_guarantee",
    "shuffle_local_epsilon",
    "simulate_audit",
    "simulate_model_shares",
    "simulate_numeric_series",
    "simulate_series",
    "simulate_stuffing",
    "simulate_survey",
    "smallest_detectable_share",
    "split_wins_above",
    "stuffing_alarm_probability",
    "stuffing_shift",
    "subsample_counts",
    "survey_channel",
    "survey_design_from_params",
    "survey_estimates",
    "survey_privacy",
    "survey_variance_unit",
    "t_quantile",
    "target_channel",
    "ue_plausibility",
    "unbiased_coefficients",
    "worst_variance_unit",
    "yes_count_distribution",
    "z_quantile",
]

ALLOWED_IMPORTS = {"numpy", "math", "dataclasses", "fractions", "typing", "numbers",
                   "statistics", "functools", "__future__", "collections", "itertools", "abc"}


def test_all_is_exactly_the_expected_sorted_list() -> None:
    assert EXPECTED_ALL == sorted(EXPECTED_ALL)
    assert ldp_core.__all__ == EXPECTED_ALL


def test_every_public_name_is_importable_and_documented() -> None:
    namespace: dict[str, object] = {}
    exec("from ldp_core import *", namespace)
    for name in EXPECTED_ALL:
        obj = getattr(ldp_core, name)
        assert namespace[name] is obj
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert obj.__doc__ and obj.__doc__.strip(), f"{name} has no docstring"


def test_submodule_all_lists_are_re_exported() -> None:
    for path in sorted(PACKAGE.glob("[!_]*.py")):
        module = __import__(f"ldp_core.{path.stem}", fromlist=["__all__"])
        for name in getattr(module, "__all__", []):
            if name in EXPECTED_ALL:
                assert getattr(ldp_core, name) is getattr(module, name)


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("path", sorted(PACKAGE.glob("*.py")), ids=lambda p: p.name)
def test_ldp_core_imports_only_numpy_and_the_standard_library(path: Path) -> None:
    assert _imports(path) <= ALLOWED_IMPORTS, path.name


@pytest.mark.parametrize("path", sorted(PACKAGE.glob("*.py")), ids=lambda p: p.name)
def test_no_module_level_random_generator(path: Path) -> None:
    """Streamlit shares modules between all users: randomness must come from ``rng``."""
    tree = ast.parse(path.read_text())
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) or (
                isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
            code = ast.unparse(node)
            assert not re.search(r"default_rng|Generator\(|RandomState|seed\(", code), code
    source = path.read_text()
    # The types a ``rng`` argument accepts are named, never called.
    legacy = re.findall(r"np\.random\.(?!default_rng|Generator|BitGenerator\b|SeedSequence\b)\w+",
                        source)
    assert not legacy, f"{path.name} uses the global numpy generator: {legacy}"


def test_importing_ldp_core_loads_no_streamlit_or_scipy() -> None:
    code = (
        "import sys, pkgutil, importlib, ldp_core\n"
        "for m in pkgutil.iter_modules(ldp_core.__path__):\n"
        "    importlib.import_module('ldp_core.' + m.name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('streamlit', 'scipy', 'pandas', 'altair'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True, timeout=120)
    assert out.stdout.strip() == ""


def _python_blocks(markdown: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", markdown, flags=re.S | re.M)


def test_five_minutes_page_code_runs() -> None:
    text = FIVE_MINUTES.read_text()
    blocks = _python_blocks(text)
    assert len(blocks) >= 5
    assert "CSPRNG" in text
    namespace: dict[str, object] = {"__name__": "five_minutes"}
    for i, block in enumerate(blocks):
        exec(compile(block, f"{FIVE_MINUTES.name}[block {i}]", "exec"), namespace)


def test_docstrings_cite_their_sources() -> None:
    text = "\n".join(p.read_text() for p in PACKAGE.glob("*.py"))
    for source in ("Warner (1965)", "Wang, Blocki, Li & Jha 2017", "Wang et al. 2017",
                   "Wang, Lopuhaä-Zwakenberg, Li, Skoric & Li (2020)", "CS208"):
        assert source in text, source


#: One design of every name ``params()`` can carry: the yes/no designs, the frequency
#: oracles (unary encoding as SUE and OUE) and every numeric mechanism.
EVERY_DESIGN = [
    ldp_core.EpsilonRR(1.0), ldp_core.GammaRR(0.2), ldp_core.DieRR(4, 3), ldp_core.TwoCoinRR(),
    ldp_core.WarnerRR(0.3), ldp_core.ForcedResponse(0.5, 0.25), ldp_core.MemoRR(0.5, 0.25, 0.75),
    ldp_core.SurveyDesign("sample", 1.0, 3),
    ldp_core.GRR(5, 1.0), ldp_core.oracle("sue", 5, 1.0), ldp_core.oracle("oue", 5, 1.0),
    ldp_core.OLH(5, 1.0),
    *(ldp_core.numeric_design_from_params({"design": name, "epsilon": 1.5, "lo": 0, "hi": 12})
      for name in ldp_core.NUMERIC_NAMES),
    *(ldp_core.numeric_mechanism(name, 1.5) for name in ldp_core.NUMERIC_NAMES),
]


@pytest.mark.parametrize("design", EVERY_DESIGN, ids=repr)
def test_one_privacy_vocabulary(design: object) -> None:
    """``epsilon`` is the exact privacy loss everywhere: no second name for it, and no
    parameter stored under a public name beside the property that derives it."""
    assert not hasattr(design, "privacy_loss")
    public = [name for name in vars(design) if not name.startswith("_")]
    assert not [name for name in public if name.endswith("_param")]
    assert "epsilon" not in vars(design)  # the property, never a second stored copy
    eps = design.epsilon  # type: ignore[attr-defined]
    assert math.isfinite(eps) and eps > 0


@pytest.mark.parametrize("design", [d for d in EVERY_DESIGN
                                    if not isinstance(d, ldp_core.NumericMechanism)], ids=repr)
def test_design_from_params_reads_every_design_back(design: object) -> None:
    params = design.params()  # type: ignore[attr-defined]
    again = ldp_core.design_from_params(params)
    assert again == design
    assert again.params() == params


def test_numeric_epsilon_is_the_channel_loss_not_the_setting() -> None:
    """The setting a numeric mechanism is built with stays private; its ``epsilon`` is the
    loss of the channel, tight against the setting (Duchi et al.: ln((c + 1) / (c - 1)))."""
    duchi = ldp_core.DuchiMechanism(epsilon=1.0)
    c = duchi.c_epsilon
    assert duchi.epsilon == math.log((c + 1) / (c - 1))
    assert duchi.epsilon == pytest.approx(1.0, rel=1e-12)
    assert duchi.params() == {"design": "duchi", "epsilon": 1.0}
    assert repr(duchi) == "DuchiMechanism(epsilon=1.0)"


def test_design_from_params_names_an_unknown_design() -> None:
    with pytest.raises(ValueError, match="unknown design 'dice'; known: .*'die'.*'duchi'"):
        ldp_core.design_from_params({"design": "dice"})
    with pytest.raises(ValueError, match="'design' key"):
        ldp_core.design_from_params({"faces": 4})
