"""ldp_core: the mathematics of local differential privacy for the classroom.

Pure numpy, no Streamlit and no I/O. Designs store their defining parameters
once; channels, privacy loss, estimators and variances are derived from them.

Randomness, as numpy's SPEC 7 asks: every randomized function takes keyword-only
``size=None`` (where it draws many) and ``rng=None`` (a ``numpy.random.Generator``,
a seed or None, normalised with ``numpy.random.default_rng``); there is no
module-level generator. Names say what is drawn: ``sample_*`` draws an exact
aggregate (how many "yes" reports, the support counts) from its distribution, at
a cost independent of n; ``perturb`` and ``simulate_*`` randomize each
respondent. These simulators exist for teaching. A real
report is randomized on the student's device from the operating system's
CSPRNG (``crypto.getRandomValues`` in the browser), never here.

Vocabulary: ``epsilon`` is always the exact privacy loss of a design's channel, derived
from its probabilities or densities (for ``GRR`` and ``OLH``, whose channel's ratio is
e^ε by construction, the parameter itself); the ε a numeric mechanism is built with is
its setting, and its ``epsilon`` the loss that setting gives, equal up to rounding.

Construction: every design and oracle is a frozen dataclass whose fields are its
defining parameters, checked when it is built. A parameter that shares its name with a
quantity the class derives (ε of ``EpsilonRR``, ``GRR``, ``OLH`` and the numeric
mechanisms; p and q of ``UnaryEncoding``) is stored once, privately, as ``_<name>``
behind that property, as Tumult Core keeps its parameters; those classes write their
``__init__`` and ``__repr__`` by hand, so that they are still called as
``EpsilonRR(epsilon=1.0)`` and shown that way. :func:`design_from_params` builds any of
them back from its ``params()``.
"""

from .audit import (
    AUDIT_TAIL,
    AuditDistribution,
    audit_distribution,
    audit_epsilon,
    audit_runs_needed,
    simulate_audit,
)
from .binary import (
    BinaryDesign,
    DieRR,
    EpsilonRR,
    ForcedResponse,
    GammaRR,
    MemoRR,
    TwoCoinRR,
    WarnerRR,
    binary_design_from_params,
    epsilon_to_gamma,
    gamma_to_epsilon,
    report_probability,
)
from .categorical import (
    GRR,
    OLH,
    ORACLE_NAMES,
    FrequencyOracle,
    OLHReports,
    UnaryEncoding,
    categorical_oracle_from_params,
    max_error_scale,
    oracle,
    recommend_oracle,
)
from .central import (
    central_mean_sd,
    laplace_mechanism,
    local_mean_sd,
    local_n_for_central_accuracy,
    randomized_round,
    sequential_composition,
)
from .estimate import (
    BinaryCounts,
    BinaryEstimate,
    CategoricalCounts,
    chi2_1_quantile,
    pm1_mean_abs_error,
    pm1_mean_estimate,
    t_quantile,
    z_quantile,
)
from .explore import (
    ErrorSummary,
    LikelihoodProfile,
    Posterior,
    empirical_channel,
    error_order,
    error_summary,
    likelihood_profile,
    posterior_bounds,
    posterior_true_yes,
    share_estimates,
    subsample_counts,
)
from .formulas import privacy_ratio, unbiased_coefficients, worst_variance_unit
from .intervals import (
    INTERVAL_METHODS,
    coverage_shares,
    exact_interval,
    expected_width,
    feldman_cousins_interval,
    interval_coverage,
    share_intervals,
)
from .manipulation import (
    StuffedClass,
    blind_zone,
    fake_report,
    fake_report_gain,
    fakes_until_alarm,
    simulate_stuffing,
    stuffing_alarm_probability,
    stuffing_shift,
    target_channel,
)
from .memo import alpha_round, rappor_epsilons, simulate_numeric_series, simulate_series
from .numeric import (
    DEVICE_CELLS,
    HYBRID_EPSILON_STAR,
    NUMERIC_NAMES,
    REPORT_TAIL,
    DuchiMechanism,
    HybridMechanism,
    LaplaceMechanism,
    NumericDesign,
    NumericEstimate,
    NumericMechanism,
    NumericRange,
    PiecewiseMechanism,
    central_numeric_sd,
    numeric_crossover,
    numeric_design_from_params,
    numeric_mechanism,
    recommend_numeric,
)
from .params import design_from_params
from .planning import needed_class_size, presence_threshold, smallest_detectable_share
from .plausibility import (
    ALPHA,
    Plausibility,
    binary_plausibility,
    chi2_sf,
    grr_plausibility,
    numeric_plausibility,
    ue_plausibility,
)
from .postprocess import POSTPROCESSING, clip_counts, grr_em, norm_sub
from .repeated import (
    composed_epsilon,
    majority_reveal_probability,
    repeated_posterior,
    yes_count_distribution,
)
from .shuffle import (
    DELTA_MIN,
    ShuffleGuarantee,
    clones_closed_form,
    clones_closed_form_limit,
    clones_delta,
    clones_epsilon,
    shuffle_delta,
    shuffle_epsilon,
    shuffle_guarantee,
    shuffle_local_epsilon,
)
from .survey import (
    SURVEY_MODES,
    SurveyPrivacy,
    fake_channel,
    rr_variance_unit,
    rs_fd_epsilon,
    simulate_survey,
    split_wins_above,
    survey_channel,
    survey_estimates,
    survey_privacy,
    survey_variance_unit,
)
from .trust import (
    ModelSDs,
    ModelShares,
    federated_share_sd,
    model_share_sds,
    sd_with_se,
    simulate_model_shares,
)

__all__ = [
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
