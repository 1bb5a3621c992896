"""DNS failure resolving MASTER_ADDR on two nodes; DeepSpeed launcher, per-node logs with relative-seconds timestamps."""
import random
from common import Bundle, Ind, hhmmss

IID = "deepspeed-relsec-dns-master-two-nodes"
HOSTS = ["dsw-01", "dsw-02", "dsw-03", "dsw-04"]
IPS = ["192.168.40.11", "192.168.40.12", "192.168.40.13", "192.168.40.14"]
BAD = ["dsw-03", "dsw-04"]
MASTER = "train-master.dsw.cluster.internal"
T0 = 8 * 3600 + 30 * 60 + 4

def build(root):
    b = Bundle(root, IID)
    rnd = random.Random(53)
    for n, h in enumerate(HOSTS):
        rel = [1.912]
        def R(msg, dt=0.0):
            rel[0] += dt
            return f"[{rel[0]:8.3f}s] {msg}"
        def wall(dt=0.0):
            x = T0 + 0.431 + rel[0] + dt
            return f"2026-11-25 {hhmmss(x)},{int(x*1000)%1000:03d}"
        L = [R(f"[{wall()}] [INFO] [real_accelerator.py:219:get_accelerator] Setting ds_accelerator to cuda (auto detect)"),
             R(f"[{wall()}] [INFO] [launch.py:146:main] WORLD INFO DICT: {{'dsw-01': [0, 1, 2, 3, 4, 5, 6, 7], 'dsw-02': [0, 1, 2, 3, 4, 5, 6, 7], 'dsw-03': [0, 1, 2, 3, 4, 5, 6, 7], 'dsw-04': [0, 1, 2, 3, 4, 5, 6, 7]}}", 0.004),
             R(f"[{wall()}] [INFO] [launch.py:152:main] nnodes=4, num_local_procs=8, node_rank={n}", 0.001),
             R(f"[{wall()}] [INFO] [launch.py:163:main] global_rank_mapping=defaultdict(<class 'list'>, {{'dsw-01': [0, 1, 2, 3, 4, 5, 6, 7], 'dsw-02': [8, 9, 10, 11, 12, 13, 14, 15], 'dsw-03': [16, 17, 18, 19, 20, 21, 22, 23], 'dsw-04': [24, 25, 26, 27, 28, 29, 30, 31]}})", 0.001),
             R(f"[{wall()}] [INFO] [launch.py:164:main] dist_world_size=32", 0.0),
             R(f"[{wall()}] [INFO] [launch.py:168:main] Setting CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", 0.0),
             R(f"[{wall()}] [INFO] [launch.py:256:main] process {4410+n*3} spawned with command: ['/usr/bin/python3', '-u', 'finetune.py', '--local_rank=0', '--deepspeed', 'ds_z3.json', '--model', 'Llama-3.1-70B']", 0.002)]
        for g in range(8):
            L.append(R(f"/usr/local/lib/python3.10/dist-packages/transformers/utils/hub.py:128: FutureWarning: Using `TRANSFORMERS_CACHE` is deprecated and will be removed in v5 of Transformers. Use `HF_HOME` instead.", rnd.uniform(3.1, 3.4) if g == 0 else 0.011))
        for g in range(8):
            L.append(R(f"[{wall()}] [INFO] [comm.py:652:init_distributed] cdb=None", 0.9 if g == 0 else 0.003))
        L.append(R(f"[{wall()}] [INFO] [comm.py:683:init_distributed] Initializing TorchBackend in DeepSpeed with backend nccl", 0.001) if n == 0 else R(f"[{wall()}] [INFO] [comm.py:652:init_distributed] cdb=None", 0.001))
        if h in BAD:
            for k in range(3):
                dt = 0.02 if k == 0 else 10.0 + rnd.uniform(0, 0.3)
                for fam in ("IPv6", "IPv4"):
                    line = f"[W1125 {hhmmss(T0 + rel[0] + dt)}.{rnd.randint(100000000,999999999)} socket.cpp:752] [c10d] The {fam} network addresses of ({MASTER}, 29500) cannot be retrieved (gai error: -2 - Name or service not known)."
                    L.append(Ind(R(line, dt)) if (k == 0 and fam == "IPv4") else R(line, dt))
                    dt = 0.0
            L.append(R("[rank%d]: Traceback (most recent call last):" % (8 * n), 1770.4))
            L += [R(f"[rank{8*n}]:   File \"/workspace/sft/finetune.py\", line 88, in <module>"),
                  R(f"[rank{8*n}]:     deepspeed.init_distributed(dist_backend=\"nccl\")"),
                  R(f"[rank{8*n}]:   File \"/usr/local/lib/python3.10/dist-packages/deepspeed/comm/comm.py\", line 684, in init_distributed"),
                  R(f"[rank{8*n}]:     cdb = TorchBackend(dist_backend, timeout, init_method, rank, world_size)"),
                  R(f"[rank{8*n}]:   File \"/usr/local/lib/python3.10/dist-packages/torch/distributed/rendezvous.py\", line 189, in _create_c10d_store"),
                  R(f"[rank{8*n}]:     return TCPStore("),
                  R(f"[rank{8*n}]: torch.distributed.DistNetworkError: The client socket has timed out after 1800000ms while trying to connect to ({MASTER}, 29500).")]
            L.append(R(f"[{wall()}] [INFO] [launch.py:319:sigkill_handler] Killing subprocess {4410+n*3}", 0.8))
            L.append(R(f"[{wall()}] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python3', '-u', 'finetune.py', '--local_rank=7', '--deepspeed', 'ds_z3.json', '--model', 'Llama-3.1-70B'] exits with return code = 1", 0.2))
        else:
            L.append(R(f"{h}:{4410+n*3}:{4410+n*3} [0] NCCL INFO Bootstrap : Using bond0:{IPS[n]}<0>", 1.2))
            if n == 0:
                L.append(R(f"[rank0]: Traceback (most recent call last):", 1798.1))
                L.append(R(f"[rank0]:   File \"/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py\", line 1520, in init_process_group"))
                L.append(R(f"[rank0]: torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. 16/32 clients joined."))
            L.append(R(f"[{wall()}] [INFO] [launch.py:319:sigkill_handler] Killing subprocess {4410+n*3}", 1.6 if n == 0 else 1800.9))
            L.append(R(f"[{wall()}] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python3', '-u', 'finetune.py', '--local_rank=7', '--deepspeed', 'ds_z3.json', '--model', 'Llama-3.1-70B'] exits with return code = 1", 0.2))
        b.write(f"logs/{h}/node.log", L)
    for n, h in enumerate(HOSTS):
        if h in BAD:
            D = ["", f"; <<>> DiG 9.18.28-0ubuntu0.22.04.1-Ubuntu <<>> {MASTER}", ";; global options: +cmd", ";; Got answer:",
                 Ind(f";; ->>HEADER<<- opcode: QUERY, status: NXDOMAIN, id: {rnd.randint(1000,65000)}"),
                 ";; flags: qr rd ra ad; QUERY: 1, ANSWER: 0, AUTHORITY: 1, ADDITIONAL: 1", "", ";; QUESTION SECTION:",
                 f";{MASTER}.\tIN\tA", "", ";; AUTHORITY SECTION:",
                 ".\t\t\t86400\tIN\tSOA\ta.root-servers.net. nstld.verisign-grs.com. 2026112500 1800 900 604800 86400", "",
                 ";; Query time: 11 msec", ";; SERVER: 1.1.1.1#53(1.1.1.1) (UDP)", ";; WHEN: Wed Nov 25 09:12:41 UTC 2026", ";; MSG SIZE  rcvd: 133", ""]
        else:
            D = ["", f"; <<>> DiG 9.18.28-0ubuntu0.22.04.1-Ubuntu <<>> {MASTER}", ";; global options: +cmd", ";; Got answer:",
                 f";; ->>HEADER<<- opcode: QUERY, status: NOERROR, id: {rnd.randint(1000,65000)}",
                 ";; flags: qr aa rd ra; QUERY: 1, ANSWER: 1, AUTHORITY: 0, ADDITIONAL: 1", "", ";; QUESTION SECTION:",
                 f";{MASTER}.\tIN\tA", "", ";; ANSWER SECTION:", f"{MASTER}. 300 IN\tA\t192.168.40.11", "",
                 ";; Query time: 0 msec", ";; SERVER: 192.168.40.2#53(192.168.40.2) (UDP)", ";; WHEN: Wed Nov 25 09:12:40 UTC 2026", ";; MSG SIZE  rcvd: 74", ""]
        b.write(f"probes/{h}/dig.txt", D)
        rc = ["# This is /run/systemd/resolve/resolv.conf managed by man:systemd-resolved(8).", "# Generated by NetworkManager" if h not in BAD else "# DHCP lease on eno1 (cloud-init netplan 50-cloud-init.yaml)", "search dsw.cluster.internal",
              "nameserver 1.1.1.1" if h in BAD else "nameserver 192.168.40.2"]
        b.write(f"probes/{h}/resolv.conf.txt", rc)
    b.job(f"""
job_id: "ds-sft-70b-1125a"
name: llama3.1-70b-sft-zero3
framework: deepspeed
status: failed
started_at: 2026-11-25T{hhmmss(T0)}Z
ended_at: 2026-11-25T{hhmmss(T0+1815)}Z
exit_code: 1
gpus_per_node: 8
master_addr: {MASTER}
parallelism: {{tp: 1, pp: 1, dp: 32, cp: 1, ep: 1}}
nodes:
""" + "".join(f"  - {{host: {h}, ip: {IPS[i]}, ranks: [{', '.join(str(r) for r in range(8*i, 8*i+8))}]}}\n" for i, h in enumerate(HOSTS)) + """code:
  - {commit: 27c41ee, at: 2026-11-19T17:30:00Z, message: "sft: chat template v2"}
checkpoints:
  - {step: 600, at: 2026-11-24T21:05:00Z, path: /data/ckpt/sft-70b/global_step600, valid: true}
  - {step: 800, at: 2026-11-25T03:44:00Z, path: /data/ckpt/sft-70b/global_step800, valid: true}
spares: 2
""")
    b.truth(fault="dns_resolution_failure", category="infrastructure",
            root_cause=f"dsw-03 and dsw-04 had their resolver switched to a public one (1.1.1.1, from a DHCP lease) that does not know the internal zone, so their ranks could not resolve MASTER_ADDR {MASTER} (gai error -2, Name or service not known) and never joined the TCPStore; rank 0 timed out with 16/32 clients",
            faulty_nodes=BAD, stage="init", iteration=None,
            actions=[{"kind": "evict", "nodes": BAD}, {"kind": "restart", "from_step": 800}])
    return b
