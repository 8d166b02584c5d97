"""What exchanges cost: the analytical model of "Terabyte-scale analytics in
the blink of an eye" (§3), in units of one GPU's link bandwidth.

N ranks on V hosts, k = N / V per host; ``network`` is a host's network
bandwidth relative to a GPU's links inside the host (B_n / B_g). For a
relation of S bytes spread evenly over the ranks:

- broadcast (ring): (N - 1) * S / N / min(B_n, B_g) (§3.2, also for V = 1 with B_g);
- shuffle: S (N - 1) / (N^2 B_g) on one host, S (V - 1) / (V^2 B_n) across
  hosts (§3.3);
- gather to one rank: S (N - 1) / N over that rank's links.

Broadcasting the small side R of a join beats shuffling both sides when
|S| / |R| > (N - 1) / (N - k) * V - 1 (eq. 3; |S| / |R| > N - 1 on one host).

>>> m = ExchangeCost(4)
>>> m.broadcast(100) < m.shuffle(100 + 400), m.broadcast(100) < m.shuffle(100 + 200)
(True, False)
>>> broadcast_beats_shuffle(100, 400, 4), broadcast_beats_shuffle(100, 200, 4)
(True, False)
>>> ExchangeCost(1).shuffle(10**9)
0.0
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ExchangeCost:
    ranks: int
    hosts: int = 1
    network: float = 1.0  # B_n / B_g

    def _link(self) -> float:
        return 1.0 if self.hosts <= 1 else min(self.network, 1.0)

    def broadcast(self, nbytes: float) -> float:
        """Every rank's part of a spread relation to every other rank."""
        n = self.ranks
        return (n - 1) * nbytes / n / self._link() if n > 1 else 0.0

    def broadcast_from_root(self, nbytes: float) -> float:
        """One rank's rows to all (a pipelined ring moves them about once)."""
        return nbytes / self._link() if self.ranks > 1 else 0.0

    def shuffle(self, nbytes: float) -> float:
        n, v = self.ranks, self.hosts
        if n <= 1:
            return 0.0
        if v <= 1:
            return nbytes * (n - 1) / (n * n)
        return nbytes * (v - 1) / (v * v * self.network)

    def gather(self, nbytes: float) -> float:
        n = self.ranks
        return nbytes * (n - 1) / n / self._link() if n > 1 else 0.0


def broadcast_beats_shuffle(small: float, large: float, ranks: int, hosts: int = 1) -> bool:
    """Eq. 3: broadcasting ``small`` is cheaper than shuffling both sides."""
    m = ExchangeCost(ranks, hosts)
    return m.broadcast(small) < m.shuffle(small + large)
