"""HF accelerate on two machines (--main_process_ip), resume with accelerator.load_state fails on every process:
the model code was refactored (fused gate/up projection) so the saved safetensors keys no longer match."""
import datetime as dt
from common import Bundle, yaml_job, iso, torchrun_child_failed

ID = "accelerate-2machine-resume-missing-keys"
NODES = [("ml-a100-21", "10.1.4.21"), ("ml-a100-22", "10.1.4.22")]
SP = "/opt/venv/lib/python3.11/site-packages"
CKPT = "/mnt/shared/dpo-runs/polaris-7b-dpo/checkpoint-6000"


def keys(kind):
    out = []
    for layer in range(32):
        if kind == "missing":
            out.append(f'"model.layers.{layer}.mlp.gate_up_proj.weight"')
        else:
            out.append(f'"model.layers.{layer}.mlp.gate_proj.weight"')
            out.append(f'"model.layers.{layer}.mlp.up_proj.weight"')
    return ", ".join(out)


def build(out):
    b = Bundle(out, seed=21)
    r = b.rng
    t0 = dt.datetime(2026, 2, 17, 14, 2, 40)
    for m, (h, ip) in enumerate(NODES):
        f = f"logs/{h}/accelerate-machine{m}.log"
        A = lambda x, mark=False: b.add(f, x, mark)
        T = lambda s: (t0 + dt.timedelta(seconds=s)).strftime("%m/%d/%Y %H:%M:%S")
        A(f"+ accelerate launch --config_file configs/fsdp_off_ddp.yaml --num_machines 2 --num_processes 16 --machine_rank {m} --main_process_ip 10.1.4.21 --main_process_port 29500 --mixed_precision bf16 train_dpo.py --model_config configs/polaris_7b.json --resume_from_checkpoint {CKPT} --output_dir /mnt/shared/dpo-runs/polaris-7b-dpo")
        A("The following values were not passed to `accelerate launch` and had defaults used instead:")
        A("\t`--dynamo_backend` was set to a value of `'no'`")
        A("To avoid this warning pass in values for each of the problematic parameters or run `accelerate config`.")
        for k in range(8):
            pi = 8 * m + k
            A(f"{T(14)} - INFO - __main__ - Distributed environment: MULTI_GPU  Backend: nccl")
            A("Num processes: 16")
            A(f"Process index: {pi}")
            A(f"Local process index: {k}")
            A(f"Device: cuda:{k}")
            A("")
            A("Mixed precision type: bf16")
            A("")
        A(f"{SP}/transformers/tokenization_utils_base.py:1617: FutureWarning: `clean_up_tokenization_spaces` was not set. It will be set to True by default. This behavior will be depracted in transformers v4.45, and will be then set to False by default. For more details check this issue: https://github.com/huggingface/transformers/issues/31884")
        A("  warnings.warn(")
        if m == 0:
            A(f"{T(33)} - INFO - __main__ - Building PolarisForCausalLM from configs/polaris_7b.json (fused_mlp=True)")
            A(f"{T(41)} - INFO - __main__ - Loaded 412,880 preference pairs from /mnt/shared/data/prefs-v5 (train) and 4,096 (eval)")
            A(f"Resumed from checkpoint: {CKPT}")
            A(f"{T(49)} - INFO - accelerate.accelerator - Loading states from {CKPT}")
        for k in ([0, 4] if m == 0 else [0, 7]):
            pi = 8 * m + k
            tb = [f"[rank{pi}]: Traceback (most recent call last):",
                  f'[rank{pi}]:   File "/home/mlops/polaris/train_dpo.py", line 583, in <module>',
                  f"[rank{pi}]:     main()",
                  f'[rank{pi}]:   File "/home/mlops/polaris/train_dpo.py", line 402, in main',
                  f"[rank{pi}]:     accelerator.load_state(args.resume_from_checkpoint)",
                  f'[rank{pi}]:   File "{SP}/accelerate/accelerator.py", line 3196, in load_state',
                  f"[rank{pi}]:     load_accelerator_state(",
                  f'[rank{pi}]:   File "{SP}/accelerate/checkpointing.py", line 215, in load_accelerator_state',
                  f"[rank{pi}]:     load_model(model, input_model_file, device=str(map_location), **load_model_func_kwargs)",
                  f'[rank{pi}]:   File "{SP}/safetensors/torch.py", line 219, in load_model',
                  f"[rank{pi}]:     raise RuntimeError(error)",
                  f"[rank{pi}]: RuntimeError: Error(s) in loading state_dict for PolarisForCausalLM:",
                  f"[rank{pi}]:     Missing key(s) in state_dict: {keys('missing')}",
                  f"[rank{pi}]:     Unexpected key(s) in state_dict: {keys('unexpected')}"]
            for j, x in enumerate(tb):
                A(x, mark=(k == 0 and j in ((11, 12) if m == 0 else (11,))))
        ag = 30911 + 1000 * m
        A(f"W0217 14:03:31.{402000 + m * 17:06d} {ag} torch/distributed/elastic/multiprocessing/api.py:897] Sending process {ag + 62} closing signal SIGTERM")
        A(f"E0217 14:03:32.{118000 + m * 17:06d} {ag} torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: 0 (pid: {ag + 61}) of binary: /opt/venv/bin/python")
        summ = torchrun_child_failed("train_dpo.py", "2026-02-17_14:03:31", h,
                                     [{"rank": 8 * m + k, "local_rank": k, "exitcode": 1, "pid": ag + 61 + k, "traceback": None} for k in (1, 2, 3)],
                                     {"rank": 8 * m, "local_rank": 0, "exitcode": 1, "pid": ag + 61, "traceback": None})
        head = ["Traceback (most recent call last):",
                '  File "/opt/venv/bin/accelerate", line 8, in <module>',
                "    sys.exit(main())",
                f'  File "{SP}/accelerate/commands/accelerate_cli.py", line 48, in main',
                "    args.func(args)",
                f'  File "{SP}/accelerate/commands/launch.py", line 1168, in launch_command',
                "    multi_gpu_launcher(args)",
                f'  File "{SP}/accelerate/commands/launch.py", line 803, in multi_gpu_launcher',
                "    distrib_run.run(args)"]
        body = summ[7:]
        for x in head + [y.replace("/usr/local/lib/python3.10/dist-packages", SP) for y in body]:
            A(x)
    job = {
        "job_id": "dpo-polaris-7b-r3", "name": "polaris-7b-dpo", "framework": "other", "status": "failed",
        "started_at": iso(t0), "ended_at": "2026-02-17T14:03:38Z", "exit_code": 1, "gpus_per_node": 8,
        "parallelism": {"tp": 1, "pp": 1, "dp": 16, "cp": 1, "ep": 1},
        "launcher": "accelerate launch --num_machines 2 --main_process_ip 10.1.4.21 (DDP)",
        "nodes": [{"host": h, "ip": ip, "ranks": list(range(8 * m, 8 * m + 8))} for m, (h, ip) in enumerate(NODES)],
        "code": [{"commit": "6e0b2d9", "at": "2026-02-10T09:00:00Z", "message": "dpo: beta 0.1, prefs-v5"},
                 {"commit": "c3a8f51", "at": "2026-02-16T18:25:00Z", "message": "model: fuse gate_proj/up_proj into gate_up_proj (fused_mlp)"}],
        "checkpoints": [{"step": 5500, "at": "2026-02-16T06:48:00Z", "path": "/mnt/shared/dpo-runs/polaris-7b-dpo/checkpoint-5500", "valid": True},
                        {"step": 6000, "at": "2026-02-16T08:05:00Z", "path": CKPT, "valid": True}],
        "spares": 0, "history": ["dpo-polaris-7b-r2"], "last_successful_run_ended_at": "2026-02-16T08:07:00Z",
    }
    truth = {
        "fault": "checkpoint_load_failure", "category": "user_code",
        "root_cause": "resuming with accelerator.load_state from checkpoint-6000 failed on all 16 processes: commit c3a8f51 replaced mlp.gate_proj/up_proj with a fused mlp.gate_up_proj, so the saved model.safetensors has unexpected keys and lacks the new ones (RuntimeError: Error(s) in loading state_dict for PolarisForCausalLM)",
        "faulty_nodes": [], "stage": "init", "iteration": None,
        "actions": [{"kind": "none"}],
    }
    return b.write(yaml_job(job), truth)
