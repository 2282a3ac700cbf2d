"""Hold a GPU the way an inference server does, with nothing but libcuda through ctypes: a
CUDA context and an allocation of --mib MiB on the first visible device (set
CUDA_VISIBLE_DEVICES to a GPU or MIG UUID), until SIGTERM frees them and exits, or, with
--ignore-term, until SIGKILL (a process left running). Prints 'holding' once it holds."""

import argparse
import ctypes
import signal
import sys
import time


def check(code: int, what: str) -> None:
    if code != 0:
        sys.exit(f"cuda_hold: {what} failed with CUresult {code}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=1024)
    parser.add_argument("--ignore-term", action="store_true")
    args = parser.parse_args()
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError as exc:
        sys.exit(f"cuda_hold: no libcuda: {exc}")
    device, context, pointer = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_uint64()
    check(cuda.cuInit(0), "cuInit")
    check(cuda.cuDeviceGet(ctypes.byref(device), 0), "cuDeviceGet")
    check(cuda.cuCtxCreate_v2(ctypes.byref(context), 0, device), "cuCtxCreate")
    size = ctypes.c_size_t(args.mib << 20)
    check(cuda.cuMemAlloc_v2(ctypes.byref(pointer), size), "cuMemAlloc")
    check(cuda.cuMemsetD8_v2(pointer, ctypes.c_ubyte(1), size), "cuMemsetD8")  # really resident

    def release(*_):
        cuda.cuMemFree_v2(pointer)
        cuda.cuCtxDestroy_v2(context)
        sys.exit(0)

    signal.signal(signal.SIGTERM, signal.SIG_IGN if args.ignore_term else release)
    print("holding", flush=True)
    while True:
        time.sleep(1)


if __name__ == "__main__":
    main()
