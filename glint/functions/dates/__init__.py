"""The date and time functions: DATE columns (:mod:`.days`) and TIMESTAMP
columns (:mod:`.timestamps`)."""
