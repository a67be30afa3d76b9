// 연습 문제 2.6.1: fp32 값 n개의 합. 랩 2.6의 rung 07 설계입니다. grid는 GPU 크기에 맞추고, thread마다 배열의 제 몫을
// 16바이트 load로 register 하나에 접어 넣습니다. 같은 커널을 두 번 launch합니다. 첫 launch는 block마다 partial 하나를
// 쓰고, 두 번째 launch(block 하나)는 partial들을 더해 결과를 냅니다.
// Launch: 256-thread block(32의 배수: block_allreduce의 shuffle은 모든 warp의 lane 32개를 모두 부름).
// grid: 많아야 GPU가 한 번에 담는 block 수이고, n이 작으면 더 적습니다.
// 16바이트 load로 본 배열: float4는 16바이트 경계에서 시작해야 합니다. 그래서 처음 `head`개 float(0에서 3개: view는
// 4바이트 경계 어디서나 시작할 수 있음)가 첫 float4 앞에 오고, 다음에 온전한 float4 `quads`개, 그다음에 마지막 온전한
// float4 뒤의 나머지가 옵니다.
#include "reduce.cuh"

extern "C" __global__ void sum_float4(const float* __restrict__ x, float* __restrict__ out, long long n)
{
    __shared__ float red[32];
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long threads = (long long)gridDim.x * blockDim.x;
    const unsigned misalign = (unsigned)((size_t)x & 15u);           // 마지막 16바이트 경계 뒤의 바이트 수
    const long long head = min(n, (long long)(((16u - misalign) & 15u) / 4u));
    const long long quads = (n - head) / 4;
    const float4* __restrict__ body = reinterpret_cast<const float4*>(x + head);
    float acc = 0.0f;
    for (long long q = t; q < quads; q += threads) {
        const float4 v = __ldg(body + q);                             // LDG.E.128
        acc += (v.x + v.y) + (v.z + v.w);
    }
    if (t < head) acc += x[t];
    const long long done = head + 4 * quads;
    if (t < n - done) acc += x[done + t];
    acc = block_allreduce<SumOp>(acc, red);
    if (threadIdx.x == 0) out[blockIdx.x] = acc;
}
