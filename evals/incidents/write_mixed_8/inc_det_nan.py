"""Determined AI trial logs (`[ts] <container> [rank=N] || LEVEL: ...`), DeepSpeed ZeRO-2 bf16, loss goes NaN ~200 steps
after the run resumed with a new data mixture."""
import datetime as dt
from common import Bundle, yaml_job, iso

ID = "determined-deepspeed-nan-after-datamix-2node"
NODES = [("det-agent-a100-05", "10.8.12.5", "7c1e9a42"), ("det-agent-a100-06", "10.8.12.6", "e03b5d17")]
RESUME = 24000
FIRST_NAN = 24213
ABORT = FIRST_NAN + 2
STEP_S = 1.62


def build(out):
    b = Bundle(out, seed=3)
    r = b.rng
    t0 = dt.datetime(2026, 1, 22, 3, 9, 40)
    last = {}

    def D(n, sec, rank, lvl, text, mark=False):
        t = t0 + dt.timedelta(seconds=sec, microseconds=r.randint(0, 999999))
        if n in last and t <= last[n]:
            t = last[n] + dt.timedelta(microseconds=r.randint(50, 3000))
        last[n] = t
        rk = f" [rank={rank}]" if rank is not None else ""
        return b.add(f"logs/{NODES[n][0]}/trial-8812.log", f"[{t:%Y-%m-%dT%H:%M:%S.%f}Z] {NODES[n][2]}{rk} || {lvl}: {text}", mark)

    ds = lambda s: (t0 + dt.timedelta(seconds=s)).strftime("%Y-%m-%d %H:%M:%S,") + f"{r.randint(0, 999):03d}"
    for n in range(2):
        D(n, 0, None, "INFO", f"Pulling image determinedai/pytorch-ngc:0.38.0 (cached) on agent {NODES[n][0]}")
        D(n, 1, None, "INFO", "+ test -f startup-hook.sh")
        D(n, 1, None, "INFO", "+ source startup-hook.sh")
        D(n, 2, None, "INFO", "+ pip install -q -r requirements.txt")
        D(n, 19, None, "WARNING", "WARNING: Running pip as the 'root' user can result in broken permissions and conflicting behaviour with the system package manager. It is recommended to use a virtual environment instead: https://pip.pypa.io/warnings/venv")
        D(n, 20, None, "INFO", "+ exec python3 -m determined.launch.deepspeed -- python3 train_ds.py --config configs/pretrain_3b.yaml")
        for k in range(8):
            rank = 8 * n + k
            D(n, 27 + 0.05 * k, rank, "INFO", f"[{ds(27)}] [INFO] [real_accelerator.py:254:get_accelerator] Setting ds_accelerator to cuda (auto detect)")
            D(n, 29 + 0.05 * k, rank, "WARNING", "/opt/conda/lib/python3.10/site-packages/transformers/utils/hub.py:105: FutureWarning: Using `TRANSFORMERS_CACHE` is deprecated and will be removed in v5 of Transformers. Use `HF_HOME` instead.")
        if n == 0:
            D(n, 31, 0, "INFO", f"[{ds(31)}] [INFO] [comm.py:652:init_distributed] cdb=None")
            D(n, 31, 0, "INFO", f"[{ds(31)}] [INFO] [comm.py:683:init_distributed] Initializing TorchBackend in DeepSpeed with backend nccl")
            D(n, 33, 0, "INFO", "data: building blended dataset 'pretrain-mix-v3' from configs/data/mix_v3.yaml")
            for src, w, toks in [("web/fineweb-edu-dedup", 0.55, "1.21T"), ("code/stack-v2-permissive", 0.30, "402B"), ("math/openwebmath+proofpile2", 0.15, "61B")]:
                D(n, 33, 0, "INFO", f"data:   {src:<32s} weight={w:.2f}  tokens={toks}")
            D(n, 34, 0, "INFO", "data: mixture changed since checkpoint (checkpoint was written with 'pretrain-mix-v2'); data loader state will be reset")
            D(n, 34, 0, "INFO", f"[{ds(34)}] [INFO] [logging.py:128:log_dist] [Rank 0] DeepSpeed info: version=0.15.4, git-hash=unknown, git-branch=unknown")
            D(n, 35, 0, "INFO", f"[{ds(35)}] [INFO] [logging.py:128:log_dist] [Rank 0] DeepSpeed Flops Profiler Enabled: False")
            D(n, 35, 0, "INFO", f"[{ds(35)}] [INFO] [logging.py:128:log_dist] [Rank 0] Using client Optimizer as basic optimizer")
            D(n, 35, 0, "INFO", f"[{ds(35)}] [INFO] [logging.py:128:log_dist] [Rank 0] Creating BF16 optimizer")
            D(n, 36, 0, "INFO", f"[{ds(36)}] [INFO] [utils.py:781:see_memory_usage] begin bf16_optimizer")
            D(n, 36, 0, "INFO", f"[{ds(36)}] [INFO] [utils.py:782:see_memory_usage] MA 5.62 GB         Max_MA 5.62 GB         CA 5.81 GB         Max_CA 6 GB ")
            D(n, 41, 0, "INFO", f"[{ds(41)}] [INFO] [config.py:1001:print] DeepSpeedEngine configuration:")
            for k, v in [("bfloat16_enabled", "True"), ("gradient_clipping", "1.0"), ("train_batch_size", "512"),
                         ("train_micro_batch_size_per_gpu", "4"), ("gradient_accumulation_steps", "8"), ("zero_optimization_stage", "2")]:
                D(n, 41, 0, "INFO", f"[{ds(41)}] [INFO] [config.py:1005:print]   {k} {'.' * (28 - len(k))} {v}")
            D(n, 42, 0, "INFO", f"loading checkpoint 3f6c0b7e-22d1-4b9f-9a51-0c4e7d1f8a63 (steps_completed={RESUME})")
            D(n, 42, 0, "INFO", f"[{ds(42)}] [INFO] [torch_checkpoint_engine.py:27:load] [Torch] Loading checkpoint from /determined_shared_fs/checkpoints/3f6c0b7e-22d1-4b9f-9a51-0c4e7d1f8a63/global_step{RESUME}/mp_rank_00_model_states.pt...")
            D(n, 71, 0, "INFO", f"[{ds(71)}] [INFO] [engine.py:3068:_get_all_zero_checkpoint_state_dicts] successfully read 16 ZeRO state_dicts for rank 0")
            D(n, 73, 0, "INFO", f"[{ds(73)}] [INFO] [engine.py:3018:_load_zero_checkpoint] loading 16 zero partition checkpoints for rank 0")
            D(n, 74, 0, "INFO", f"resumed at step {RESUME}")
    # training: rank 0 prints every 10 steps; loss spikes then NaN
    ts = 75
    for st in range(RESUME + 10, ABORT + 1):
        sec = ts + (st - RESUME) * STEP_S
        if st < 24170:
            loss = 2.012 + r.uniform(-0.03, 0.03)
            gn = 0.28 + r.uniform(-0.04, 0.05)
        elif st < FIRST_NAN:
            x = (st - 24170) / (FIRST_NAN - 24170)
            loss = 2.05 + 7.5 * x ** 3 + r.uniform(0, 0.08)
            gn = 0.4 + 60 * x ** 4 + r.uniform(0, 0.2)
        else:
            loss = gn = float("nan")
        if st % 10 == 0 or st >= 24200:
            lstr = "nan" if loss != loss else f"{loss:.4f}"
            gstr = "nan" if gn != gn else f"{gn:.3f}"
            mark = st == FIRST_NAN
            if st % 10 == 0:
                D(0, sec, 0, "INFO", f"[{ds(sec)}] [INFO] [logging.py:128:log_dist] [Rank 0] step={st}, skipped=0, lr=[{3e-4 * (1 - st / 60000):.8f}], mom=[(0.9, 0.95)]")
            D(0, sec, 0, "INFO", f"train step={st} loss={lstr} grad_norm={gstr} lr={3e-4 * (1 - st / 60000):.3e} tokens/s={41200 + r.randint(-600, 600)}", mark)
        if st == 24200 and False:
            pass
    # abort on every rank
    sa = ts + (ABORT - RESUME) * STEP_S + 0.4
    for n in range(2):
        for k in range(8):
            rank = 8 * n + k
            tb = ["Traceback (most recent call last):",
                  '  File "/run/determined/workdir/train_ds.py", line 412, in <module>',
                  "    main()",
                  '  File "/run/determined/workdir/train_ds.py", line 398, in main',
                  "    trainer.fit()",
                  '  File "/run/determined/workdir/trainer.py", line 233, in fit',
                  "    self._check_finite(loss, step)",
                  '  File "/run/determined/workdir/trainer.py", line 151, in _check_finite',
                  "    raise FloatingPointError(",
                  f"FloatingPointError: non-finite loss for 3 consecutive steps (first at step {FIRST_NAN}, now step {ABORT}); aborting instead of writing a NaN checkpoint"]
            for j, x in enumerate(tb):
                D(n, sa + 0.01 * k, rank, "ERROR", x, mark=(rank == 0 and j == len(tb) - 1))
        D(n, sa + 3, None, "ERROR", f"[{ds(sa + 3)}] [ERROR] [launch.py:322:sigkill_handler] ['/opt/conda/bin/python3', '-u', 'train_ds.py', '--local_rank=7', '--config', 'configs/pretrain_3b.yaml'] exits with return code = 1")
        D(n, sa + 4, None, "ERROR", "crashed: resources failed with non-zero exit code: container failed with non-zero exit code: 1 (exit code 1)")
    t_end = t0 + dt.timedelta(seconds=sa + 6)
    job = {
        "job_id": "8812", "name": "exp-1187-pretrain-3b", "framework": "deepspeed", "status": "failed",
        "started_at": iso(t0), "ended_at": iso(t_end), "exit_code": 1, "gpus_per_node": 8,
        "parallelism": {"tp": 1, "pp": 1, "dp": 16, "cp": 1, "ep": 1},
        "scheduler": "determined (experiment 1187, trial 8812)",
        "nodes": [{"host": h, "ip": ip, "container": c, "ranks": list(range(8 * n, 8 * n + 8))} for n, (h, ip, c) in enumerate(NODES)],
        "code": [{"commit": "a93d2e0", "at": "2026-01-09T13:20:00Z", "message": "pretrain 3b: zero-2 bf16, lr 3e-4"},
                 {"commit": "f1c8e44", "at": "2026-01-21T22:47:00Z", "message": "data: switch to pretrain-mix-v3 (code 0.30, math 0.15)"}],
        "checkpoints": [{"step": 23000, "at": "2026-01-21T20:12:05Z", "path": "/determined_shared_fs/checkpoints/0b9e14f2-7d3a-4c21-8e0f-5a6b2c9d1e07", "valid": True},
                        {"step": 23500, "at": "2026-01-21T20:26:40Z", "path": "/determined_shared_fs/checkpoints/91d2a5c8-3e6f-47b0-b1d4-8c0e2f7a6b35", "valid": True},
                        {"step": 24000, "at": "2026-01-21T20:40:22Z", "path": "/determined_shared_fs/checkpoints/3f6c0b7e-22d1-4b9f-9a51-0c4e7d1f8a63", "valid": True}],
        "spares": 0, "history": ["8790"],
    }
    truth = {
        "fault": "nan_loss_divergence", "category": "data",
        "root_cause": f"the trial resumed from step {RESUME} with the new data mixture pretrain-mix-v3 (commit f1c8e44); loss and grad norm blew up from ~step 24170 and the loss became NaN at step {FIRST_NAN}, after which the trainer's finite-loss guard aborted every rank",
        "faulty_nodes": [], "stage": "training", "iteration": FIRST_NAN,
        "actions": [{"kind": "restart", "from_step": RESUME}],
    }
    b.mark_find(f"logs/{NODES[0][0]}/trial-8812.log", "data: mixture changed since checkpoint")
    return b.write(yaml_job(job), truth)
