"""The size of the graphical model Private-PGM would build on a set of cliques, without building it.

AIM keeps only the candidate marginals whose addition leaves the model within a size cap, so a round of picks
asks the size of the model with each of hundreds of candidates. Private-PGM answers by building the junction
tree (a graph, a greedy elimination order, a triangulation and its maximal cliques, all through networkx): about
15 ms a candidate on a table of forty columns, seconds a round. The same construction on a small adjacency
matrix answers in a fraction of that; a test checks it against Private-PGM's own size on random models.

The construction follows Private-PGM's: the graph joins the columns of every clique; a tree is eliminated leaf by
leaf (no fill-in: its maximal cliques are its edges); any other graph in the greedy order that eliminates next
the column whose neighbourhood (itself included) has the fewest cells, the first such column in the domain's
order on ties; the model's size is the number of cells of the triangulated graph's maximal cliques, at 8 bytes
a cell.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["model_size_mb"]


def model_size_mb(sizes: Sequence[int], cliques: Sequence[Sequence[int]]) -> float:
    """Megabytes of the junction tree's tables for ``cliques`` (column positions) over columns of ``sizes`` cells.

    Parameters
    ----------
    sizes : sequence of int
        Each column's number of codes, in the domain's order.
    cliques : sequence of sequences of int
        The model's cliques, each as positions of its columns.
    """
    sizes = [int(s) for s in sizes]
    d = len(sizes)
    # the graph as one bit mask of neighbours per column: a round of AIM asks thousands of sizes, and bit
    # operations on Python integers cost a fraction of array operations on a graph of a few dozen columns
    adj = [0] * d
    for cl in cliques:
        mask = 0
        for j in cl:
            mask |= 1 << int(j)
        for j in cl:
            adj[int(j)] |= mask & ~(1 << int(j))
    n_edges = sum(m.bit_count() for m in adj) // 2
    if n_edges == d - 1 and n_edges > 0 and _connected(adj):  # a tree: its edges are the maximal cliques
        cells = sum(sizes[i] * sizes[j] for i in range(d) for j in _bits(adj[i]) if j > i)
        return cells * 8 / 2**20
    return sum(math.prod(sizes[j] for j in cl) for cl in _maximal_cliques(adj, sizes)) * 8 / 2**20


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _connected(adj: list[int]) -> bool:
    seen = frontier = 1
    while frontier:
        reach = 0
        for j in _bits(frontier):
            reach |= adj[j]
        frontier = reach & ~seen
        seen |= frontier
    return seen == (1 << len(adj)) - 1


def _maximal_cliques(adj: list[int], sizes: Sequence[int]) -> list[list[int]]:
    """The maximal cliques of the graph triangulated by the greedy elimination order."""
    import heapq

    d = len(adj)
    work = list(adj)
    alive = (1 << d) - 1
    # the cells of each column's neighbourhood (itself included) in the graph left; exact integers, so that ties
    # fall to the domain's order as in Private-PGM (a heap of (cells, column); entries a change made stale are
    # skipped when they come up)
    cost = [_cells(work[j], j, sizes) for j in range(d)]
    heap = [(c, j) for j, c in enumerate(cost)]
    heapq.heapify(heap)
    later: list[int] = []
    while heap:
        c, a = heapq.heappop(heap)
        if not alive >> a & 1 or c != cost[a]:
            continue
        nbrs = work[a] & alive
        later.append(nbrs | 1 << a)  # the clique the elimination of a leaves in the triangulated graph
        alive &= ~(1 << a)
        for j in _bits(nbrs):
            # fill-in: the neighbours of an eliminated column become a clique; j loses a and gains the others
            added = nbrs & ~(1 << j) & ~work[j]
            work[j] |= added
            cost[j] = cost[j] // int(sizes[a]) * math.prod(int(sizes[k]) for k in _bits(added))
            heapq.heappush(heap, (cost[j], j))
    return [_bits(c) for c in later if not any(c != other and c & other == c for other in later)]


def _cells(row: int, j: int, sizes: Sequence[int]) -> int:
    return int(sizes[j]) * math.prod(int(sizes[k]) for k in _bits(row))
