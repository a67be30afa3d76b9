"""연습 문제 2.4.1: wave, Little의 법칙, 덜 찬 마지막 wave의 tail을 손으로 계산합니다.

커널은 H200에서 도는 랩 2.4의 scale_grid_stride_float4입니다(y = alpha x, thread마다 in-flight 16바이트 load 하나).
H200은 sm_90, SM 132개이고, SM마다 thread 2048개, block 32개, register 65536개입니다(register는 warp 단위로 256개씩
나눔). compile report에 따르면 이 커널은 sm_90에서 thread당 register 24개를 씁니다(python -m
phase2_cuda.lab04_launch_config --quick). wave는 GPU 전체가 한 번에 담는 block 수입니다.

랩 2.4가 쓰는 Little의 법칙: in-flight load = 상주 thread 수 x 16 B이고, 읽기는 scale이 옮기는 바이트의 절반이므로
GB/s = min(ceiling, 2 x 상주 thread 수 x 16 B / latency)입니다.
H200에 맞춘 latency 0.557 us와 HBM 한계 4341 GB/s를 씁니다(phase2_lab04_launch_config.json).
"""
# block당 thread 수 -> SM당 상주 block 수
BLOCKS_PER_SM = {32: None, 128: None, 256: None, 1024: None}

# (block당 thread 수, grid의 block 수) -> wave 단위의 grid 크기(분수: 0.5는 wave 절반)
WAVES = {(256, 1320): None, (256, 528): None, (128, 2112): None, (1024, 330): None, (32, 1048576): None}

# (block당 thread 수, grid의 block 수) -> Little의 법칙이 예측하는 GB/s(grid의 모든 block이 한 번에 상주)
GBPS = {(256, 132): None, (256, 264): None, (256, 1056): None}

# 256-thread block으로 된 w wave 크기의 grid이고, block마다 일의 양이 같습니다. grid 전체의 시간을 가득 찬 wave 하나의
# 시간 단위로, 세 모델로 씁니다: (quantized: 덜 찬 wave도 모든 wave가 가득 찬 wave의 시간이 듦. fluid: 시간이 일의
# 양에 비례. Little의 법칙: 가득 찬 wave는 가득 찬 wave의 대역폭으로, 덜 찬 wave는 자기 block만 상주한 채 그 thread
# 수로 Little의 법칙이 주는 대역폭으로)
TAIL = {1.25: (None, None, None), 1.1: (None, None, None), 2.5: (None, None, None)}
