"""The aggregate functions: their registry entries (:mod:`.definitions`,
:mod:`.definitions_extra`), their states and computations over grouped rows
(:mod:`.states`; :mod:`.picks` for ARG_MAX / FIRST / LAST; :mod:`.statistics`
for CORR, COVAR_*, REGR_*, SKEWNESS, KURTOSIS; :mod:`.reductions` for PRODUCT,
BIT_*, MODE, ENTROPY; :mod:`.approx` for the sketches; :mod:`.quantile`,
:mod:`.string_agg`), and their window forms (:mod:`.windowed`)."""
