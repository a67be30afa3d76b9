import sys, torch, torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
from phase4_optimization.lab06_attention import hopper_bwd as hb
who, causal = sys.argv[1], sys.argv[-1] == "causal"
B, H, S, D = 4, 32, 4096, 128

q, k, v, do = (torch.randn(B, H, S, D, dtype=torch.bfloat16).to("cuda") for _ in range(4))
if who == "ours":
    o = torch.randn_like(q); lse = torch.full((B, H, S), 8.0, device="cuda")
    hb.flash_attn_bwd_hopper(do, q, k, v, o, lse, causal, rung=sys.argv[2]); torch.cuda.synchronize()
    torch.cuda.nvtx.range_push("bwd"); hb.flash_attn_bwd_hopper(do, q, k, v, o, lse, causal, rung=sys.argv[2])
else:
    q.requires_grad_(); k.requires_grad_(); v.requires_grad_()
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        o = F.scaled_dot_product_attention(q, k, v, is_causal=causal); torch.cuda.synchronize()
        torch.cuda.nvtx.range_push("bwd"); o.backward(do)
torch.cuda.synchronize(); torch.cuda.nvtx.range_pop()
