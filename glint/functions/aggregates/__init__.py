"""The aggregate functions' computations over grouped rows: quantiles
(:mod:`.quantile`) and STRING_AGG (:mod:`.string_agg`)."""
