# torch_cache.py — a PyTorch loop whose model keeps a growing cache of tensors, for gputop's
# call-stack check on the GPU (scripts/gpu-stacks). Each step runs a small Linear layer and
# appends a fresh 8 MiB tensor to the cache at the line marked "@site cache": PyTorch's caching
# allocator (libc10_cuda.so) then calls cudaMalloc for new blocks, and their stacks lead there.
# usage: torch_cache.py STEPS       Prints "torch_cache: ok steps=N cached_mib=M" at the end.
import sys

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 40
dev = torch.device("cuda")


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(1024, 1024)
        self.cache = []

    def forward(self, x):
        y = self.fc(x)
        self.cache.append(torch.empty(2 * 1024 * 1024, device=dev))  # @site cache
        return y


model = Model().to(dev)
x = torch.randn(64, 1024, device=dev)
for _ in range(steps):
    x = torch.tanh(model(x))
torch.cuda.synchronize()
print("torch_cache: ok steps=%d cached_mib=%d" % (steps, len(model.cache) * 8))
