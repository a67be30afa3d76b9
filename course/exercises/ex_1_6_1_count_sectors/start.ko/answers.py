"""연습 문제 1.6.1: 랩 1.6의 naive matmul(C = A @ B, fp32, row-major: A는 M x K, B는 K x N, 둘 다 256바이트 경계에서
시작)에서 warp 하나의 load가 건드리는 32바이트 sector를 셉니다.

warp 0은 dot-product loop의 step k에서 C의 출력 32개를 계산합니다. load 명령 두 개가 A[row, k]와 B[k, col]을 읽고,
lane마다 주소 하나(각 4바이트)입니다:
  "uncoalesced" (mm_01): threadIdx.x가 행을 따라감. lane l은 C[l, 0]을 계산하고 A[l, k]와 B[k, 0]을 읽음
  "coalesced"   (mm_02): threadIdx.x가 열을 따라감. lane l은 C[0, l]을 계산하고 A[0, k]와 B[k, l]을 읽음
sector는 정렬된 32바이트 메모리 조각입니다. load 하나의 주소 32개가 서로 다른 sector 몇 개에 들어가는지 셉니다.
"""
# (mapping, M, N, K, k) -> (warp 0의 A load가 건드리는 sector 수, B load가 건드리는 sector 수)
SECTORS = {
    ("uncoalesced", 4096, 4096, 4096, 0): (None, None),
    ("coalesced", 4096, 4096, 4096, 0): (None, None),
    ("uncoalesced", 4096, 4096, 2, 0): (None, None),
    ("coalesced", 4096, 4100, 4096, 1): (None, None),
    ("coalesced", 4096, 4100, 4096, 2): (None, None),
}

# 랩이 예측하는 time(mm_01) / time(mm_02): k step마다의 sector 수(A + B)를 uncoalesced 대 coalesced로 나눈 값,
# loop의 처음 8 step 평균
RATIO = {
    (4096, 4096, 4096): None,
    (4096, 4100, 4096): None,
}
