// 연습 문제 1.6.2: naive 행렬 곱 C = A @ B, fp32, row-major(A는 M x K, B는 K x N, C는 M x N).
// thread 하나가 C[row, col] 하나를 길이 K의 내적으로 계산하고, 값은 global memory에서 바로 읽습니다. 랩 1.6의
// mm_02와 같습니다. Launch(검사기의 launch): (16, 16) thread block, grid (ceil(N / 16), ceil(M / 16)). block (bx, by)는
// C의 16 x 16 tile, 곧 행 16 by .. 16 by + 15, 열 16 bx .. 16 bx + 15를 맡습니다.
// warp는 block에서 연속된 thread 32개이고 threadIdx.x가 가장 빨리 변합니다. 곧 threadIdx.y의 두 값에서
// threadIdx.x = 0 .. 15입니다. 이 커널은 모든 M, N, K에서 맞지만 마땅한 속도보다 몇 배 느립니다.
extern "C" __global__ void mm_tile16(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                     int M, int N, int K)
{
    int row = blockIdx.y * 16 + threadIdx.y;     // warp 하나: 2행 ...
    int col = blockIdx.x * 16 + threadIdx.x;     // ... 의 연속된 16열. threadIdx.x가 C의 행을 따라감
    if (row >= M || col >= N) return;
    float acc = 0.f;
    for (int k = 0; k < K; ++k) {
        acc += A[(long long)row * K + k] * B[(long long)k * N + col];
    }
    C[(long long)row * N + col] = acc;
}
