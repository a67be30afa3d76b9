"""What every lab shares: device facts, kernel loading, Triton set-up, timing, correctness checks, reports.

Modules: device, cuda, triton_support, arrays, bench, check, report, cli, lab (the lab contract and phase runner).
Importing `common` imports nothing heavy; each module pulls in CuPy / Triton / torch only when it needs them.
"""
