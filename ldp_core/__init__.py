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

Construction: every design and oracle is a frozen dataclass whose fields are its
defining parameters, checked in ``__post_init__``. The one exception is a parameter
that shares its name with a quantity the base class derives (ε of ``EpsilonRR``,
``GRR`` and ``OLH``; p and q of ``UnaryEncoding``): a dataclass field cannot have
that name, because ``dataclasses`` would take the inherited property for the
field's default. Those classes store the parameter as ``<name>_param`` and write
their ``__init__`` and ``__repr__`` by hand, so that they are still called as
``EpsilonRR(epsilon=1.0)`` and shown that way.
"""

from .binary import (
    BinaryDesign,
    DieRR,
    EpsilonRR,
    ForcedResponse,
    GammaRR,
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
from .numeric import (
    DEVICE_CELLS,
    NUMERIC_NAMES,
    REPORT_TAIL,
    DuchiMechanism,
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
from .plausibility import (
    ALPHA,
    Plausibility,
    binary_plausibility,
    chi2_sf,
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

__all__ = [
    "ALPHA",
    "BinaryCounts",
    "BinaryDesign",
    "BinaryEstimate",
    "CategoricalCounts",
    "DEVICE_CELLS",
    "DieRR",
    "DuchiMechanism",
    "EpsilonRR",
    "ErrorSummary",
    "ForcedResponse",
    "FrequencyOracle",
    "GRR",
    "GammaRR",
    "LaplaceMechanism",
    "LikelihoodProfile",
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
    "TwoCoinRR",
    "UnaryEncoding",
    "WarnerRR",
    "binary_design_from_params",
    "binary_plausibility",
    "categorical_oracle_from_params",
    "central_mean_sd",
    "central_numeric_sd",
    "chi2_1_quantile",
    "chi2_sf",
    "clip_counts",
    "composed_epsilon",
    "empirical_channel",
    "epsilon_to_gamma",
    "error_order",
    "error_summary",
    "gamma_to_epsilon",
    "grr_em",
    "laplace_mechanism",
    "likelihood_profile",
    "local_mean_sd",
    "local_n_for_central_accuracy",
    "majority_reveal_probability",
    "max_error_scale",
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
    "privacy_ratio",
    "randomized_round",
    "recommend_numeric",
    "recommend_oracle",
    "repeated_posterior",
    "report_probability",
    "sequential_composition",
    "share_estimates",
    "subsample_counts",
    "t_quantile",
    "ue_plausibility",
    "unbiased_coefficients",
    "worst_variance_unit",
    "yes_count_distribution",
    "z_quantile",
]
