"""연습 문제 1.5.2: Little의 법칙. phase 1의 streaming 커널 네 개가 SM마다 load 바이트를 얼마나 in flight로 유지하는지,
그리고 그중 어느 커널이 HBM latency를 가릴 만큼 유지하는지 셉니다.

모든 커널은 sm_90(H200: SM 132개, SM마다 thread 2,048개와 register 65,536개)에서 256-thread block으로 launch합니다.
SM에는 occupancy 규칙(랩 1.5)이 허락하는 만큼 block이 상주합니다. thread당 register 수는 각 랩의 compile report에
있습니다(`python -m phase1_architecture.lab02_vector_add` 등, GPU가 없어도 됩니다). thread 하나가 처음 기다리는 순간에
보냈지만 아직 받지 못한 global LOAD의 바이트를 셉니다(store는 thread를 기다리게 하지 않습니다).
"""
# SM 하나에서 in flight인 load 바이트: SM당 상주 thread 수 x thread마다 기다리는 load 바이트
BYTES_IN_FLIGHT_PER_SM = {
    "vadd_01_one_thread_per_element": None,   # 랩 1.2: c[i] = a[i] + b[i], thread마다 원소 하나
    "vadd_03_float4": None,                   # 랩 1.2: thread마다 a의 float4 하나와 b의 float4 하나
    "mem_02_read_sweep_float4": None,         # 랩 1.4: 첫 덧셈 전에 UNROLL = 4개의 float4 load를 보냄
    "occ_02_scale_float4_ilp": None,          # 랩 1.5: 첫 곱셈 전에 UNROLL = 4개의 float4 load를 보냄
}

# Little의 법칙: in-flight 바이트 = 대역폭 x latency. 4.8 TB/s(H200의 datasheet)를 latency 0.6 us(부하가 걸린 HBM
# 왕복)에서 내려면 SM 132개가 저마다 몇 바이트를 in flight로 유지해야 합니까?
NEEDED_PER_SM = None

# 어느 커널이 NEEDED_PER_SM 이상을 in flight로 유지합니까? (커널마다 True 또는 False)
COVERS = {
    "vadd_01_one_thread_per_element": None,
    "vadd_03_float4": None,
    "mem_02_read_sweep_float4": None,
    "occ_02_scale_float4_ilp": None,
}
