"""A STAND-IN for PyTorch (tests/sim/fake_torch/torch): just enough of torch's API for
tests/gpu/torch_memory.py to run without a GPU, its tensors' memory from the SIMULATED
libc10_cuda.so (tests/sim/c10_cuda.c, through ctypes): so that scripts/gpu-torch-memory can be
tried here (tests/e2e/torch_gpu_script.sh). Not PyTorch: no arithmetic happens; a "training step"
makes and frees tensors of the sizes a real one would. SIMTORCH_LIB names the library (default:
tests/bin/simtorch/libc10_cuda.so)."""
import ctypes
import os
import sys
import traceback

__version__ = "0.0-stand-in"
_here = os.path.dirname(os.path.abspath(__file__))
_lib = ctypes.CDLL(os.environ.get("SIMTORCH_LIB", os.path.join(_here, "../../../bin/simtorch/libc10_cuda.so")))
_lib.simtorch_alloc.restype = ctypes.c_void_p
_lib.simtorch_alloc.argtypes = [ctypes.c_size_t, ctypes.c_void_p]
_lib.simtorch_free.argtypes = [ctypes.c_void_p]
_lib.simtorch_allocated.restype = ctypes.c_longlong
_lib.simtorch_reserved.restype = ctypes.c_longlong
_lib.simtorch_live_blocks.restype = ctypes.c_size_t
_lib.simtorch_live_blocks.argtypes = [ctypes.POINTER(ctypes.c_uint64)] * 3 + [ctypes.c_size_t]
_STREAM = 0x5000
_history = None     # address -> frames, while memory history is recorded
uint8, float32 = 1, 4


def _own(frame):
    return os.path.abspath(frame.filename).startswith(_here)


class Tensor:
    def __init__(self, nbytes, numel):
        self._numel = numel
        self._ptr = _lib.simtorch_alloc(max(nbytes, 1), _STREAM)
        if not self._ptr:
            raise MemoryError("CUDA out of memory (simulated)")
        if _history is not None:
            _history[self._ptr] = [{"filename": f.filename, "line": f.lineno, "name": f.name}
                                   for f in reversed(traceback.extract_stack()) if not _own(f)]

    def __del__(self):
        if getattr(self, "_ptr", None):
            _lib.simtorch_free(self._ptr)
            if _history is not None:
                _history.pop(self._ptr, None)
            self._ptr = None

    def numel(self):
        return self._numel

    def backward(self):
        pass

    def __float__(self):
        return 0.0


def _tensor(shape, dtype=float32):
    n = 1
    for s in shape:
        n *= s
    return Tensor(n * dtype, n)


def empty(*shape, dtype=float32, device=None):
    return _tensor(shape, dtype)


def randn(*shape, device=None):
    return _tensor(shape)


def device(name):
    return name


def manual_seed(seed):
    pass


class _Module:
    def to(self, dev):
        return self

    def parameters(self):
        return []

    def __call__(self, x):
        return self.forward(x)


class _Linear(_Module):
    def __init__(self, a, b):
        self.weight, self.bias, self.shape = _tensor((b, a)), _tensor((b,)), (a, b)

    def parameters(self):
        return [self.weight, self.bias]

    def forward(self, x):
        return _tensor((256, self.shape[1]))


class _ReLU(_Module):
    def forward(self, x):
        return _tensor((256, x.numel() // 256))


class _Sequential(_Module):
    def __init__(self, *layers):
        self.layers = layers

    def parameters(self):
        return [p for layer in self.layers for p in layer.parameters()]

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class _Functional:
    @staticmethod
    def mse_loss(a, b):
        return _tensor((1,))


class nn:  # noqa: N801 (torch.nn)
    Linear, ReLU, Sequential, functional = _Linear, _ReLU, _Sequential, _Functional


class _Adam:
    def __init__(self, params, lr=0):
        self.params, self.state = list(params), None

    def step(self):
        if self.state is None:  # exp_avg, exp_avg_sq: made at the first step, as Adam's
            self.state = [(_tensor((p.numel(),)), _tensor((p.numel(),))) for p in self.params]
        scratch = [_tensor((p.numel(),)) for p in self.params]
        del scratch

    def zero_grad(self, set_to_none=True):
        pass


class optim:  # noqa: N801
    Adam = _Adam


def compile(model, mode=None):  # noqa: A001
    return model


class compiler:  # noqa: N801
    @staticmethod
    def cudagraph_mark_step_begin():
        pass


class _Memory:
    @staticmethod
    def _record_memory_history(max_entries=0):
        global _history
        _history = {}

    @staticmethod
    def _snapshot():
        n = _lib.simtorch_live_blocks(None, None, None, 0)
        arr = [(ctypes.c_uint64 * max(n, 1))() for _ in range(3)]
        n = _lib.simtorch_live_blocks(arr[0], arr[1], arr[2], n)
        segments = []
        for i in range(n):
            block = {"address": arr[0][i], "size": arr[1][i], "requested_size": arr[2][i],
                     "state": "active_allocated"}
            if _history is not None and arr[0][i] in _history:
                block["frames"] = _history[arr[0][i]]
            segments.append({"device": 0, "address": arr[0][i], "blocks": [block]})
        return {"segments": segments}


class cuda:  # noqa: N801
    memory = _Memory

    @staticmethod
    def is_available():
        return True

    @staticmethod
    def synchronize():
        pass

    @staticmethod
    def current_device():
        return 0

    @staticmethod
    def memory_allocated(device=0):
        return _lib.simtorch_allocated()

    @staticmethod
    def memory_reserved(device=0):
        return _lib.simtorch_reserved()


sys.modules.setdefault("torch.nn", nn)
