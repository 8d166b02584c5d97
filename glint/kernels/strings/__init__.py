"""String kernels over Arrow-layout bytes held in torch tensors.

Every kernel works on :class:`~glint.kernels.strings.pieces.Pieces`: strings
as byte ranges ``data[starts[i] : starts[i] + lengths[i]]`` of one uint8
buffer. A VARCHAR column's dictionary gives one piece per entry; gathering
the starts and lengths by the row codes gives one piece per row without
copying bytes, so the same kernel serves per-entry and per-row work.

One idea per module:

- :mod:`.pieces`: the Pieces view, chunking for the torch paths;
- :mod:`.backend`: when a Triton kernel runs instead of the torch code;
- :mod:`.gather`: copy pieces into a fresh Arrow-layout buffer (Triton);
- :mod:`.hashing`: a 64-bit content hash of each piece (Triton);
- :mod:`.counting`: per-piece byte counts: code points, non-ASCII bytes (Triton);
- :mod:`.search`: anchored compares and leftmost literal search (Triton: a
  flat scan for a dictionary's contiguous entries, a per-string one otherwise);
- :mod:`.equality`: byte equality of piece pairs (Triton) and exact dense ids;
- :mod:`.order`: byte-wise (memcmp) ranks and comparison with a literal;
- :mod:`.like`: LIKE patterns compiled to anchored runs and literal searches;
- :mod:`.case`: ASCII upper / lower case of bytes;
- :mod:`.codepoints`: code-point positions to byte positions (SUBSTRING);
- :mod:`.columns`: VARCHAR columns as pieces (per entry or per used entry),
  and their per-row keys: ``hash64``, ``equality_keys``, ``order_ranks``.

Each Triton kernel has a torch implementation that computes the same result
and is what runs on the CPU; the tests compare both (the Triton kernels under
``TRITON_INTERPRET=1`` on the CPU, and on CUDA when present).
"""
