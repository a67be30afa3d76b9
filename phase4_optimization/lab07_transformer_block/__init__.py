"""Lab 4.7 - a transformer block from the course's own kernels (lab.py: the block, reference, peers; bench.py)."""
