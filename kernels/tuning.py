"""The kernels' tunable numbers: one int64 array, filled from
:meth:`facet.planner.config.Config.kernel_tuning`, passed to every kernel that
needs one (kernels hold no thresholds of their own).  No numba here, so the
config imports this without loading the JIT."""

#: the Config fields, in array order
TUNING_FIELDS = (
    "counting_sort_dense",
    "counting_sort_sparse",
    "counting_sort_max_codes",
    "count_histogram_span",
    "keyed_direct_codes",
    "nested_cost",
    "insertion_sort",
    "dictionary_partitions",
    "dictionary_few",
    "nested_order_cost",
    "nested_order_scale",
    "nested_tiny_pairs",
)
(
    CSORT_DENSE,
    CSORT_SPARSE,
    CSORT_MAX_CODES,
    HISTOGRAM_SPAN,
    KEYED_DIRECT_CODES,
    NESTED_COST,
    INSERTION_SORT,
    DICT_PARTITIONS,
    DICT_FEW,
    NESTED_ORDER_COST,
    NESTED_ORDER_SCALE,
    NESTED_TINY,
) = range(len(TUNING_FIELDS))
