"""Lab 4.1 - the roofline (lab.py: the k-FMA kernel's contract and the roofline model; bench.py and its steps)."""
