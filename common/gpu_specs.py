"""GPU specifications the course uses when it needs a number it cannot read off the device.

Two tables, data only:
  * ARCH_LIMITS: per compute capability, the occupancy and shared-memory limits of the CUDA Programming Guide
    (threads, blocks, registers, shared memory per SM and per block, the bytes reserved per block, the L1/shared
    carve-outs, the unified L1 + shared size).
  * PROFILES: one GPU a learner may have per entry: what the driver reports (name, SMs, L2, bus, clocks, memory) and
    datasheet peaks (memory bandwidth; dense, no-sparsity TFLOP/s). Tensor figures are FP32-accumulate where the
    datasheet distinguishes; None where the GPU has no such unit.

Every figure is cited in its entry's "source"/"sources" string: NVIDIA's document and URL, and where the NVIDIA text
was read through a copy or a secondary source (TechPowerUp, deviceQuery logs in public repositories), that source
too. A figure that could not be checked is marked "(unverified: why)". mem_clock_mhz is the value that makes
2 x clock x bus / 8 reproduce the datasheet bandwidth (within 1%); where the driver reports another clock, the
source says so. total_mem_bytes is what cudaGetDeviceProperties reports (approximately: it varies by driver).
"""

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB

ARCH_LIMITS = {
    "sm_75": {
        "family": "Turing", "max_threads_per_sm": 1024, "max_blocks_per_sm": 16, "regs_per_sm": 65536,
        "max_regs_per_block": 65536, "max_regs_per_thread": 255, "smem_per_sm": 64 * KiB,
        "smem_per_block_optin": 64 * KiB, "smem_reserved_per_block": 0, "smem_carveouts_kib": (32, 64),
        "l1_smem_kib": 96,
        "source": "CUDA Programming Guide (CUDA 13), 5.1 Compute Capabilities, Tables 30-32, https://docs.nvidia.com/"
                  "cuda/cuda-programming-guide/05-appendices/compute-capabilities.html; reserved 0: per-SM and "
                  "per-block maxima are both 64 KB and CUDA 13.1 C++ Programming Guide 20.6.4 says a Turing block "
                  "can address the full 64 KB (https://docs.nvidia.com/cuda/cuda-c-programming-guide/)"},
    "sm_80": {
        "family": "Ampere", "max_threads_per_sm": 2048, "max_blocks_per_sm": 32, "regs_per_sm": 65536,
        "max_regs_per_block": 65536, "max_regs_per_thread": 255, "smem_per_sm": 164 * KiB,
        "smem_per_block_optin": 163 * KiB, "smem_reserved_per_block": 1 * KiB,
        "smem_carveouts_kib": (0, 8, 16, 32, 64, 100, 132, 164), "l1_smem_kib": 192,
        "source": "CUDA Programming Guide (CUDA 13), 5.1, Tables 30-32 (URL as sm_75); 1 KB reserved per block: "
                  "CUDA 13.1 C++ Programming Guide 20.7.3 Shared Memory (compute capability 8.x)"},
    "sm_86": {
        "family": "Ampere", "max_threads_per_sm": 1536, "max_blocks_per_sm": 16, "regs_per_sm": 65536,
        "max_regs_per_block": 65536, "max_regs_per_thread": 255, "smem_per_sm": 100 * KiB,
        "smem_per_block_optin": 99 * KiB, "smem_reserved_per_block": 1 * KiB,
        "smem_carveouts_kib": (0, 8, 16, 32, 64, 100), "l1_smem_kib": 128,
        "source": "CUDA Programming Guide (CUDA 13), 5.1, Tables 30-32; CUDA 13.1 C++ Programming Guide 20.7.3 "
                  "(1 KB reserved); RTX 3090/A10 deviceQuery report 1536 threads, 102400 B shared per SM"},
    "sm_89": {
        "family": "Ada Lovelace", "max_threads_per_sm": 1536, "max_blocks_per_sm": 24, "regs_per_sm": 65536,
        "max_regs_per_block": 65536, "max_regs_per_thread": 255, "smem_per_sm": 100 * KiB,
        "smem_per_block_optin": 99 * KiB, "smem_reserved_per_block": 1 * KiB,
        "smem_carveouts_kib": (0, 8, 16, 32, 64, 100), "l1_smem_kib": 128,
        "source": "CUDA Programming Guide (CUDA 13), 5.1, Tables 30-32; CUDA 13.1 C++ Programming Guide 20.7.3 "
                  "(1 KB reserved); Ada Tuning Guide 1.4.1.1 (48 warps, 24 blocks, 100 KB/SM, 99 KB/block), "
                  "https://docs.nvidia.com/cuda/ada-tuning-guide/ (read via a quotation in a public repository)"},
    "sm_90": {
        "family": "Hopper", "max_threads_per_sm": 2048, "max_blocks_per_sm": 32, "regs_per_sm": 65536,
        "max_regs_per_block": 65536, "max_regs_per_thread": 255, "smem_per_sm": 228 * KiB,
        "smem_per_block_optin": 227 * KiB, "smem_reserved_per_block": 1 * KiB,
        "smem_carveouts_kib": (0, 8, 16, 32, 64, 100, 132, 164, 196, 228), "l1_smem_kib": 256,
        "source": "CUDA Programming Guide (CUDA 13), 5.1, Tables 30-32; CUDA 13.1 C++ Programming Guide 20.8.1 "
                  "(256 KB unified cache) and 20.8.3 (carve-outs, 227 KB per block, 1 KB reserved)"},
    "sm_100": {
        "family": "Blackwell", "max_threads_per_sm": 2048, "max_blocks_per_sm": 32, "regs_per_sm": 65536,
        "max_regs_per_block": 65536, "max_regs_per_thread": 255, "smem_per_sm": 228 * KiB,
        "smem_per_block_optin": 227 * KiB, "smem_reserved_per_block": 1 * KiB,
        "smem_carveouts_kib": (0, 8, 16, 32, 64, 100, 132, 164, 196, 228), "l1_smem_kib": 256,
        "source": "CUDA Programming Guide (CUDA 13), 5.1, Tables 30-32 (10.0 with 9.0: 64 warps, 32 blocks, 228/227 "
                  "KB; 10.x: 256 KB unified cache); CUDA 13.1 C++ Programming Guide 20.9.1/20.9.3 (1 KB reserved); "
                  "Blackwell Tuning Guide 1.4.1.1, https://docs.nvidia.com/cuda/blackwell-tuning-guide/"},
    "sm_103": {
        "family": "Blackwell Ultra", "max_threads_per_sm": 2048, "max_blocks_per_sm": 32, "regs_per_sm": 65536,
        "max_regs_per_block": 65536, "max_regs_per_thread": 255, "smem_per_sm": 228 * KiB,
        "smem_per_block_optin": 227 * KiB, "smem_reserved_per_block": 1 * KiB,
        "smem_carveouts_kib": (0, 8, 16, 32, 64, 100, 132, 164, 196, 228), "l1_smem_kib": 256,
        "source": "CUDA Programming Guide (CUDA 13), 5.1, Table 30 (10.3 shares 9.0/10.0's 64 warps, 32 blocks), "
                  "Tables 31-32 (10.x: 228 KB/SM, 227 KB/block, 256 KB unified cache, same carve-outs); reserved "
                  "1 KB = 228 - 227 (the guide has no separate 10.3 shared-memory section)"},
    "sm_120": {
        "family": "Blackwell", "max_threads_per_sm": 1536, "max_blocks_per_sm": 24, "regs_per_sm": 65536,
        "max_regs_per_block": 65536, "max_regs_per_thread": 255, "smem_per_sm": 100 * KiB,
        "smem_per_block_optin": 99 * KiB, "smem_reserved_per_block": 1 * KiB,
        "smem_carveouts_kib": (0, 8, 16, 32, 64, 100), "l1_smem_kib": 128,
        "source": "CUDA Programming Guide (CUDA 13), 5.1, Tables 30-32 (12.x: 48 warps, 24 blocks, 100/99 KB, 128 KB "
                  "unified cache); CUDA 13.1 C++ Programming Guide 20.10.3 (carve-outs, 1 KB reserved); an RTX 5090 D "
                  "v2 reports 24 blocks, 1536 threads, 100 KB/SM. Blackwell Tuning Guide 1.4.1.1 says 32 blocks and "
                  "'128KB' shared for 12.0, and C++ guide 20.10.1 says a 100 KB unified cache: both contradict the "
                  "tables and the RTX Blackwell whitepaper (128 KB L1/shared per SM)"},
}

PROFILES = {
    "t4": {
        "name": "Tesla T4", "arch": "sm_75", "sms": 40, "l2_bytes": 4 * MiB, "mem_bus_bits": 256,
        "mem_clock_mhz": 5001, "sm_clock_mhz": 1590, "total_mem_bytes": 15843721216, "hbm_gbps": 320,
        "fp32_tflops": 8.1, "tf32_tflops": None, "bf16_tflops": None, "fp16_tflops": 65, "fp8_tflops": None,
        "sources": [
            "device (name, 40 SMs, 1590 MHz, 5001 MHz x 256-bit, L2 4194304 B, 15843721216 B = 14.8 GiB of the 16 "
            "GB): CUDA deviceQuery logs of Tesla T4s in public GitHub repositories; TechPowerUp data at "
            "https://sysrqmts.com/en/gpus/nvidia/tesla/t4 agrees",
            "320 GB/s, FP32 8.1, FP16 65 (mixed precision, FP16 in / FP32 accumulate): NVIDIA T4 datasheet, "
            "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/tesla-t4/"
            "t4-tensor-core-datasheet-951643.pdf "
            "(read via reproductions: tomshardware.co.uk, networkoutlet.com); no TF32/BF16/FP8 units: those arrive "
            "with sm_80/sm_89 (CUDA 13.1 C++ Programming Guide 20.7.1; Table 29: BF16 'No' on 7.x)",
        ],
    },
    "a100-sxm4-80gb": {
        "name": "NVIDIA A100-SXM4-80GB", "arch": "sm_80", "sms": 108, "l2_bytes": 40 * MiB, "mem_bus_bits": 5120,
        "mem_clock_mhz": 1593, "sm_clock_mhz": 1410, "total_mem_bytes": 85100068864, "hbm_gbps": 2039,
        "fp32_tflops": 19.5, "tf32_tflops": 156, "bf16_tflops": 312, "fp16_tflops": 312, "fp8_tflops": None,
        "sources": [
            "device (108 SMs, 1410 MHz, 1593 MHz x 5120-bit, L2 41943040 B, 85100068864 B): deviceQuery of an "
            "A100-SXM4-80GB, github.com/thamada/nvidia-smi gls/A100SXMx4_deviceQuery.py",
            "2039 GB/s, FP32 19.5, TF32 156, BF16/FP16 312 (dense; 2x with sparsity): NVIDIA A100 datasheet, "
            "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
            "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf "
            "(read via glennklockwood.com/garden/processors/A100); no FP8 (C++ Programming Guide 20.7.1)",
        ],
    },
    "rtx-3060": {
        "name": "NVIDIA GeForce RTX 3060", "arch": "sm_86", "sms": 28, "l2_bytes": 2304 * KiB, "mem_bus_bits": 192,
        "mem_clock_mhz": 7501, "sm_clock_mhz": 1777, "total_mem_bytes": 12884377600, "hbm_gbps": 360,
        "fp32_tflops": 12.7, "tf32_tflops": 12.7, "bf16_tflops": 25.5, "fp16_tflops": 25.5, "fp8_tflops": None,
        "sources": [
            "device, 12 GB model (28 SMs, 1777 MHz, 7501 MHz x 192-bit, 12884377600 B, L2 2359296 B): several "
            "deviceQuery logs in public GitHub repositories; the driver reports 2.25 MiB of L2 though TechPowerUp and "
            "others list 3 MB (the 8 GB model has a 128-bit bus: not this key)",
            "360 GB/s = 15 Gbps x 192 bit (NVIDIA RTX 3060 family specs via pcpartdb.com, rtechsl.com); FP32 12.7 = "
            "3584 cores x 2 x 1.777 GHz (NVIDIA quoted '13 shader TFLOPs', via techtaks.com)",
            "tensor (unverified: NVIDIA publishes only '101 tensor TFLOPs', FP16 with sparsity and FP16 accumulate, "
            "via techtaks.com): 101.9/2 dense, halved again for FP32 accumulate as on every GeForce GA10x (NVIDIA "
            "GA102 whitepaper appendix, "
            "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf); TF32 half "
            "of that; no FP8 (C++ Programming Guide 20.7.1)",
        ],
    },
    "rtx-3090": {
        "name": "NVIDIA GeForce RTX 3090", "arch": "sm_86", "sms": 82, "l2_bytes": 6 * MiB, "mem_bus_bits": 384,
        "mem_clock_mhz": 9751, "sm_clock_mhz": 1695, "total_mem_bytes": 25327697920, "hbm_gbps": 936,
        "fp32_tflops": 35.6, "tf32_tflops": 35.6, "bf16_tflops": 71, "fp16_tflops": 71, "fp8_tflops": None,
        "sources": [
            "device (82 SMs, 1695 MHz, 9751 MHz x 384-bit, L2 6291456 B, 25327697920 B): deviceQuery, "
            "github.com/thamada/nvidia-smi gls/RTX3090_deviceQuery.py",
            "936 GB/s, FP32 35.6, TF32 35.6, FP16 and BF16 with FP32 accumulate 71 (FP16 accumulate: 142): NVIDIA "
            "GA102 whitepaper, Appendix A (URL as rtx-3060; read via docslib.org copy and quotations); BF16 71.2 also "
            "in RTX Blackwell whitepaper Table 3; no FP8 (C++ Programming Guide 20.7.1)",
        ],
    },
    "l4": {
        "name": "NVIDIA L4", "arch": "sm_89", "sms": 58, "l2_bytes": 48 * MiB, "mem_bus_bits": 192,
        "mem_clock_mhz": 6251, "sm_clock_mhz": 2040, "total_mem_bytes": 23570219008, "hbm_gbps": 300,
        "fp32_tflops": 30.3, "tf32_tflops": 60, "bf16_tflops": 121, "fp16_tflops": 121, "fp8_tflops": 242.5,
        "sources": [
            "device (58 SMs, 2040 MHz, 6251 MHz x 192-bit, L2 50331648 B, 23570219008 B): deviceQuery, "
            "github.com/thamada/nvidia-smi gls/L4_deviceQuery.py",
            "300 GB/s, FP32 30.3, TF32 120 / BF16 242 / FP16 242 / FP8 485 with sparsity, halved here: NVIDIA L4 "
            "datasheet, https://resources.nvidia.com/en-us-data-center-overview/l4-gpu-datasheet (read via "
            "github.com/winston-zhang-orz/gpu-specs specs.md and a sourcecode.com store listing)",
        ],
    },
    "rtx-4090": {
        "name": "NVIDIA GeForce RTX 4090", "arch": "sm_89", "sms": 128, "l2_bytes": 72 * MiB, "mem_bus_bits": 384,
        "mem_clock_mhz": 10501, "sm_clock_mhz": 2520, "total_mem_bytes": 25386352640, "hbm_gbps": 1008,
        "fp32_tflops": 82.6, "tf32_tflops": 82.6, "bf16_tflops": 165.2, "fp16_tflops": 165.2, "fp8_tflops": 330.3,
        "sources": [
            "device (128 SMs, 2520 MHz, 10501 MHz x 384-bit, L2 75497472 B, 25386352640 B): deviceQuery, "
            "github.com/thamada/nvidia-smi gls/RTX4090_deviceQuery.py",
            "1008 GB/s, FP32 82.6, TF32 82.6, FP16/BF16 with FP32 accumulate 165.2 (FP16 accumulate 330.3), FP8 with "
            "FP32 accumulate 330.3 (FP16 accumulate 660.6; corrected in whitepaper v2.02): NVIDIA Ada GPU "
            "Architecture whitepaper, Appendix A Table 2, "
            "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf (read via "
            "quotations in public repositories)",
        ],
    },
    "h100-pcie": {
        "name": "NVIDIA H100 PCIe", "arch": "sm_90", "sms": 114, "l2_bytes": 50 * MiB, "mem_bus_bits": 5120,
        "mem_clock_mhz": 1563, "sm_clock_mhz": 1755, "total_mem_bytes": 79 * GiB, "hbm_gbps": 2000,
        "fp32_tflops": 51, "tf32_tflops": 378, "bf16_tflops": 756, "fp16_tflops": 756, "fp8_tflops": 1513,
        "sources": [
            "device (114 SMs, 1755 MHz, 5120-bit, L2 52428800 B, about 79 GiB): cudaDeviceQuery outputs of H100 PCIe "
            "cards in public GitHub repositories; the driver reports 1593 MHz (2039 GB/s), so 1563 here is the clock "
            "that gives the datasheet's 2000 GB/s",
            "2000 GB/s HBM2e, FP32 51, TF32 756 / BF16 1513 / FP16 1513 / FP8 3026 with sparsity, halved here: NVIDIA "
            "H100 datasheet, https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet (read "
            "via archive-lib.hpctech.co.jp/gpuproduct/nvidia-h100.html); the product brief PB-11133 says '> 2,000 "
            "GB/s'",
        ],
    },
    "h100-sxm": {
        "name": "NVIDIA H100 80GB HBM3", "arch": "sm_90", "sms": 132, "l2_bytes": 50 * MiB, "mem_bus_bits": 5120,
        "mem_clock_mhz": 2619, "sm_clock_mhz": 1980, "total_mem_bytes": 85045477376, "hbm_gbps": 3350,
        "fp32_tflops": 67, "tf32_tflops": 494, "bf16_tflops": 989, "fp16_tflops": 989, "fp8_tflops": 1979,
        "sources": [
            "device (132 SMs, 1980 MHz, 2619 MHz x 5120-bit, L2 52428800 B, 85045477376 B): deviceQuery, "
            "github.com/thamada/nvidia-smi nvsim/H100SXMx8_deviceQuery.py (other public logs agree)",
            "3350 GB/s, FP32 67, TF32 989 / BF16 1979 / FP8 3958 with sparsity: NVIDIA H100 datasheet (URL as "
            "h100-pcie, via hpctech.co.jp); dense BF16 989 and FP8 1979: NVIDIA exemplar-performance README 'Peak "
            "Theoretical Throughput', https://github.com/NVIDIA/exemplar-performance; dense TF32 494: NVIDIA GH200 "
            "datasheet",
        ],
    },
    "h200": {
        "name": "NVIDIA H200", "arch": "sm_90", "sms": 132, "l2_bytes": 60 * MiB, "mem_bus_bits": 6144,
        "mem_clock_mhz": 3125, "sm_clock_mhz": 1980, "total_mem_bytes": 143771 * MiB, "hbm_gbps": 4800,
        "fp32_tflops": 67, "tf32_tflops": 494, "bf16_tflops": 989, "fp16_tflops": 989, "fp8_tflops": 1979,
        "sources": [
            "4800 GB/s (141 GB HBM3e) and compute equal to H100 SXM (FP32 67, TF32 989 / BF16 1979 / FP8 3958 with "
            "sparsity): NVIDIA H200 datasheet, https://www.nvidia.com/en-us/data-center/h200/ (read via "
            "lzwjava.github.io and ai-hpc.github.io copies of its table)",
            "132 SMs and 1980 MHz: the 67 TFLOP/s FP32 = 132 x 128 x 2 x 1.98 GHz, as on H100 SXM; a public H200 "
            "cluster config lists max SM clock 1980 MHz and max memory clock 3201 MHz (the driver's clock: 4917 GB/s "
            "on 6144 bits; 3125 gives the datasheet 4800); 143771 MiB: nvidia-smi memory.total in public test data",
            "L2 62914560 B and 6144-bit bus (unverified: no H200 deviceQuery found; GH200 boards with the same "
            "six-stack GH100 report 62914560 B and 6144 bits in public deviceQuery logs)",
        ],
    },
    "b200": {
        "name": "NVIDIA B200", "arch": "sm_100", "sms": 148, "l2_bytes": 129536 * KiB, "mem_bus_bits": 8192,
        "mem_clock_mhz": 3760, "sm_clock_mhz": 1965, "total_mem_bytes": 182631 * MiB, "hbm_gbps": 7700,
        "fp32_tflops": 75, "tf32_tflops": 1100, "bf16_tflops": 2250, "fp16_tflops": 2250, "fp8_tflops": 4500,
        "sources": [
            "HGX/DGX B200 at 1000 W (the GB200 part at 1200 W is faster: BF16 2500, FP32 80): NVIDIA HGX B200 table, "
            "per GPU 180 GB HBM3E, 7.7 TB/s, FP32 75, TF32 2.2 / FP16 and BF16 4.5 / FP8 9 PFLOPS with sparsity, "
            "https://www.nvidia.com/en-us/data-center/hgx/ (read via zdszero.github.io copy); dense BF16 2250, FP8 "
            "4500 and 7.7 TB/s: NVIDIA exemplar-performance README (B200 reference architecture); DGX B200 marketing "
            "says 8 TB/s",
            "device (148 SMs, L2 132644864 B = 129536 KiB, max SM clock 1965 MHz, 182631 MiB): two B200 property "
            "dumps in public GitHub repositories; Blackwell Tuning Guide says L2 126 MB",
            "8192-bit bus and 3760 MHz (unverified: no B200 deviceQuery found; 8 HBM3e stacks x 1024 bits, clock "
            "chosen to give 7700 GB/s)",
        ],
    },
    "rtx-5090": {
        "name": "NVIDIA GeForce RTX 5090", "arch": "sm_120", "sms": 170, "l2_bytes": 96 * MiB, "mem_bus_bits": 512,
        "mem_clock_mhz": 14001, "sm_clock_mhz": 2407, "total_mem_bytes": 33668857856, "hbm_gbps": 1792,
        "fp32_tflops": 104.8, "tf32_tflops": 104.8, "bf16_tflops": 209.5, "fp16_tflops": 209.5, "fp8_tflops": 419,
        "sources": [
            "device (170 SMs, 2407 MHz, 14001 MHz x 512-bit, L2 100663296 B, 33668857856 B): deviceQuery logs of RTX "
            "5090s in public GitHub repositories",
            "1792 GB/s, 170 SMs, 2407 MHz, 96 MB L2, BF16 with FP32 accumulate 209.5 (sparse 419), FP8 with FP32 "
            "accumulate 419 (FP16 accumulate 838): NVIDIA RTX Blackwell GPU Architecture whitepaper, Table 3, "
            "https://images.nvidia.com/aem-dam/Solutions/geforce/blackwell/nvidia-rtx-blackwell-gpu-architecture.pdf "
            "(read via quotations in public repositories); FP32 104.8 = 21760 x 2 x 2.407 GHz",
            "FP16 with FP32 accumulate 209.5 (unverified: the stored quotations give only the BF16 row; equal to BF16 "
            "on every other GeForce table); TF32 104.8 (unverified: secondary github.com/lamonoai/gpumap: 105 dense)",
        ],
    },
}
