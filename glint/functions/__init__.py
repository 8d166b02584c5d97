"""Scalar SQL functions over columns: strings (dictionary-encoded VARCHAR) and dates."""
