// 연습 문제 2.4.2: n개의 fp32 값에 y = alpha * x + beta (원소마다 4바이트 읽기, 4바이트 쓰기, 2 FLOP: memory-bound).
// 랩 2.4와 같은 grid-stride loop입니다. grid의 thread t는 원소 t, t + T, t + 2T, ...를 맡습니다(T = grid의 모든
// thread 수). 그래서 어떤 grid, 어떤 block 크기, 어떤 n에서도 답이 맞습니다.
// `#pragma unroll 1`은 한 번에 반복 하나만 돌게 하므로 thread마다 in-flight load가 정확히 하나입니다. 여기서는 4바이트입니다.
// 할 일: loop의 load와 store를 16바이트 폭으로 만듭니다(float4: SASS의 LDG.E.128 / STG.E.128). 여전히 한 번에 반복
// 하나씩, 여전히 모든 n에서 맞아야 합니다. x와 y는 16바이트 경계에서 시작합니다(cudaMalloc은 256바이트 경계를 줍니다).
// n이 4의 배수일 필요는 없습니다.
extern "C" __global__ void affine(const float* __restrict__ x, float* __restrict__ y, float alpha, float beta,
                                  long long n)
{
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long step = (long long)gridDim.x * blockDim.x;
#pragma unroll 1
    for (long long i = first; i < n; i += step) {
        y[i] = alpha * x[i] + beta;
    }
}
