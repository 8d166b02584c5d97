"""The VARCHAR functions: the column functions (:mod:`.core`, :mod:`.host`),
LIKE (:mod:`.like`), regular expressions (:mod:`.regex`,
:mod:`.regex_syntax`), searching (:mod:`.text_search`) and building
(:mod:`.text_build`) strings."""
