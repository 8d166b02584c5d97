"""ASCII upper and lower case of UTF-8 bytes, elementwise on the device.

Only the bytes 'a'..'z' / 'A'..'Z' change; every byte of a multi-byte code
point is >= 0x80 and stays as it is. This is the exact Unicode mapping
(DuckDB's utf8proc) for strings that are pure ASCII; strings with other
code points take the host path (see glint.functions.strings).

>>> d = torch.tensor(list("Héllo, World!".encode()), dtype=torch.uint8)
>>> bytes(ascii_upper(d).tolist()).decode(), bytes(ascii_lower(d).tolist()).decode()
('HéLLO, WORLD!', 'héllo, world!')
"""

from __future__ import annotations

import torch


def ascii_upper(data: torch.Tensor) -> torch.Tensor:
    return torch.where((data >= 0x61) & (data <= 0x7A), data - 0x20, data)


def ascii_lower(data: torch.Tensor) -> torch.Tensor:
    return torch.where((data >= 0x41) & (data <= 0x5A), data + 0x20, data)
