"""The node hardware the simulator describes: GPU and HCA PCI addresses, rails, serials, as on DGX-class nodes.

Shared by the kernel lines, the probes and the NCCL lines so that they all name the same devices.
"""

from __future__ import annotations

from diagagent.sim.plan import Env

_H100_BUS = ("18", "2a", "3a", "5d", "9a", "ab", "ba", "db")
_A100_BUS = ("07", "0f", "47", "4e", "87", "90", "b7", "bd")
_H100_HCA_BUS = ("19", "2b", "3b", "5e", "9b", "ac", "bb", "dc")
_A100_HCA_BUS = ("0c", "12", "4b", "54", "8d", "94", "bc", "c3")


def gpu_bus(env: Env, gpu: int) -> str:
    """`3a` for GPU 2: the PCI bus of a local GPU."""
    table = _H100_BUS if env.gpu_short == "H100" else _A100_BUS
    return table[gpu % len(table)] if gpu < len(table) else f"{0x20 + gpu:02x}"


def gpu_pci(env: Env, gpu: int) -> str:
    """`0000:3a:00` as NVRM's Xid lines print it."""
    return f"0000:{gpu_bus(env, gpu)}:00"


def gpu_pci_full(env: Env, gpu: int) -> str:
    """`00000000:3A:00.0` as nvidia-smi -q prints it."""
    return f"00000000:{gpu_bus(env, gpu).upper()}:00.0"


def hca_pci(env: Env, hca: int) -> str:
    table = _H100_HCA_BUS if env.gpu_short == "H100" else _A100_HCA_BUS
    bus = table[hca % len(table)] if hca < len(table) else f"{0x60 + hca:02x}"
    return f"0000:{bus}:00.0"


def hca_name(hca: int) -> str:
    return f"mlx5_{hca}"


def rails(gpus_per_node: int) -> int:
    """How many compute HCAs a node has: one per GPU (rail-optimized), at most eight."""
    return min(max(gpus_per_node, 1), 8)


def rail_of_gpu(gpu: int, gpus_per_node: int) -> int:
    return gpu % rails(gpus_per_node)
