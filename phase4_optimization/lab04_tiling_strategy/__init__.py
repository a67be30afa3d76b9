"""Lab 4.4 - tiling strategy (lab.py: the models and the contract on lab 4.3's two GEMMs; bench.py: sweeps, plots)."""
