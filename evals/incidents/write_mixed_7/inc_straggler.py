"""Megatron-LM (pretrain_gpt.py) with --log-straggler, plain per-node torchrun output, 4 nodes x 8 H100, TP 8 x PP 2 x DP 2.
GPU 6 of sea-h100-019 (rank 22) throttles thermally from iteration 3451: elapsed time per iteration goes from ~4.1 s
to ~5.6 s, the straggler detector names rank 22 (lowest clock, highest temperature, lowest Etpt) and nvidia-smi -q
shows its clocks event reasons. No error anywhere; the job is slow.
"""
import random
from datetime import timedelta

from common import Bundle, T, iso, nvsmi_q, gpu_list, dmesg_boot

ID = "megatron-straggler-thermal-gpu-4node"
HOSTS = ["sea-h100-017", "sea-h100-018", "sea-h100-019", "sea-h100-020"]
IPS = ["10.77.1.17", "10.77.1.18", "10.77.1.19", "10.77.1.20"]
BAD, BAD_LR = 2, 6
BAD_RANK = BAD * 8 + BAD_LR


def dt(t):
    return t.strftime("%Y-%m-%d %H:%M:%S")


def build(out_dir):
    random.seed(ID)
    b = Bundle(out_dir)
    t0 = T("2026-11-28T06:31:50")
    t_tr = T("2026-11-28T06:40:02")
    it_res, it_slow, it_last = 3300, 3451, 3490
    ok_ms, slow_ms = 4102.0, 5631.0
    gbs = 1024

    def t_at(it):
        s = (min(it, it_slow - 1) - it_res) * ok_ms / 1000 + max(0, it - it_slow + 1) * slow_ms / 1000
        return t_tr + timedelta(seconds=s)

    logs = {h: [] for h in HOSTS}
    r0 = logs[HOSTS[0]]
    last = logs[HOSTS[3]]
    r0 += ["using world size: 32, data-parallel size: 2, context-parallel size: 1, hierarchical context-parallel sizes: None, "
           "tensor-model-parallel size: 8, encoder-tensor-model-parallel size: 0, pipeline-model-parallel size: 2, "
           "encoder-pipeline-model-parallel size: 0",
           "WARNING: Setting args.overlap_p2p_comm and args.align_param_gather to False since non-interleaved schedule "
           "does not support overlapping p2p communication and aligned param AG",
           "using torch.bfloat16 for parameters ...",
           "------------------------ arguments ------------------------",
           "  log_interval .................................... 10",
           "  log_straggler ................................... True",
           "  straggler_ctrlr_port ............................ 65535",
           "  straggler_minmax_count .......................... 4",
           "  micro_batch_size ................................ 1",
           "  global_batch_size ............................... 1024",
           "  seq_length ...................................... 4096",
           "  save_interval ................................... 500",
           "-------------------- end of arguments ---------------------",
           "> building GPT2BPETokenizer tokenizer ...",
           " > padded vocab (size: 50257) with 943 dummy tokens (new size: 51200)",
           "> initializing torch distributed ...",
           "> initialized tensor model parallel with size 8",
           "> initialized pipeline model parallel with size 2",
           "> setting random seeds to 1234 ...",
           "> compiling dataset index builder ...",
           ">>> done with dataset index builder. Compilation time: 0.061 seconds",
           f"time to initialize megatron (seconds): 41.877",
           f"[after megatron is initialized] datetime: {dt(t0 + timedelta(seconds=44))} ",
           "building GPT model ...",
           f" > number of parameters on (tensor, pipeline) model parallel rank (0, 0): 5394096128",
           "INFO:megatron.core.distributed.distributed_data_parallel:Setting up DistributedDataParallel with config "
           "DistributedDataParallelConfig(grad_reduce_in_fp32=True, overlap_grad_reduce=True, overlap_param_gather=True, "
           "align_param_gather=False, use_distributed_optimizer=True, num_distributed_optimizer_instances=1, "
           "check_for_nan_in_grad=True, bucket_size=40000000, average_in_collective=False, fp8_param_gather=False)",
           f" loading distributed checkpoint from /lustre/ckpt/gpt-175b-proxy at iteration {it_res}",
           f"  successfully loaded checkpoint from /lustre/ckpt/gpt-175b-proxy [ t 1/8, p 1/2 ] at iteration {it_res}",
           "(min, max) time across ranks (ms):",
           "    load-checkpoint ................................: (61203.11, 61220.84)",
           f"[after model, optimizer, and learning rate scheduler are built] datetime: {dt(t_tr - timedelta(seconds=40))} ",
           "> building train, validation, and test datasets ...",
           " > datasets target sizes (minimum size):",
           "    train:      256000000",
           "    validation: 2570240",
           "    test:       10240",
           "INFO:megatron.core.datasets.blended_megatron_dataset_builder:Building dataset splits with cls=GPTDataset, "
           "sizes=(256000000, 2570240, 10240), and config=GPTDatasetConfig(random_seed=1234, sequence_length=4096, ...)",
           "> finished creating GPT datasets ...",
           f"[after dataloaders are built] datetime: {dt(t_tr - timedelta(seconds=3))} ",
           "done with setup ...",
           "(min, max) time across ranks (ms):",
           "    model-and-optimizer-setup ......................: (64931.20, 64990.71)",
           "    train/valid/test-data-iterators-setup ..........: (1702.44, 1921.07)",
           "training ...",
           "INFO:megatron.core.utils:Controller ready to recv commands on port 65535. Current state ON",
           f"[before the start of training step] datetime: {dt(t_tr)} "]
    for n, h in enumerate(HOSTS):
        if n:
            logs[h] += [f"/usr/local/lib/python3.12/dist-packages/transformer_engine/pytorch/cpp_extensions/gemm.py:85: "
                        f"UserWarning: Unsupported gemm config, fallback to cublas" if n == 2 else
                        "/usr/local/lib/python3.12/dist-packages/torch/distributed/c10d_logger.py:83: FutureWarning: "
                        "`torch.distributed._all_gather_base` is a private function and will be deprecated. Please use "
                        "`torch.distributed.all_gather_into_tensor` instead."]
    for it in range(it_res + 10, it_last + 1, 10):
        slow = it >= it_slow
        ms = (slow_ms if slow else ok_ms) + random.uniform(-9, 9)
        tflops = 447.3 * ok_ms / ms
        loss = 2.21 - (it - 3000) * 0.00012 + random.uniform(-0.015, 0.015)
        last.append(f" [{dt(t_at(it))}] iteration {it:8d}/  250000 | consumed samples: {it * gbs:12d} | elapsed time per "
                    f"iteration (ms): {ms:.1f} | throughput per GPU (TFLOP/s/GPU): {tflops:.1f} | learning rate: "
                    f"{2.8125e-4 * (1 - (it - 2000) / 248000):.6E} | global batch size:  {gbs:4d} | lm loss: {loss:.6E} | "
                    f"loss scale: 1.0 | grad norm: {0.81 + random.uniform(-0.05, 0.05):.3f} | number of skipped "
                    f"iterations:   0 | number of nan iterations:   0 |")
        fb_max = ms - 58
        fb_min = fb_max - (random.uniform(2, 6) if not slow else random.uniform(3, 9))
        last += ["(min, max) time across ranks (ms):",
                 f"    forward-backward ...............................: ({fb_min:.2f}, {fb_max:.2f})",
                 f"    optimizer ......................................: ({55.1 + random.uniform(0, 1):.2f}, {56.3 + random.uniform(0, 1):.2f})"]
        # straggler report on rank 0
        if slow:
            mn_rtt, mx_rtt = ms - 1.9, ms + 0.4
            mx_rtt_r = BAD_RANK
            mn_clk, mn_clk_r = random.choice([1095, 1110, 1125]), BAD_RANK
            mx_tmp, mx_tmp_r = random.choice([90, 91, 91, 92]), BAD_RANK
            mn_pwr, mn_pwr_r = random.randint(391000, 412000), BAD_RANK
            mn_e, mn_e_r = tflops * 0.71, BAD_RANK
            mn_util_r = random.choice([3, 11, 29])
        else:
            mn_rtt, mx_rtt = ms - 3.2, ms + 1.1
            mx_rtt_r = random.choice([7, 19, 26, 30])
            mn_clk, mn_clk_r = 1980, random.choice([0, 5, 12])
            mx_tmp, mx_tmp_r = random.choice([66, 67, 68]), random.choice([13, 22, 27])
            mn_pwr, mn_pwr_r = random.randint(598000, 611000), random.choice([8, 17, 25])
            mn_e, mn_e_r = tflops * 0.996, random.choice([4, 16, 31])
            mn_util_r = random.choice([3, 11, 29])
        mx_e = tflops * 1.003
        r0.append(f"INFO:megatron.core.utils:[{dt(t_at(it))}] | MnRtt/Rnk: {mn_rtt:.2f}ms/{random.choice([0, 9, 18, 24])} | "
                  f"MxRtt/Rnk: {mx_rtt:.2f}ms/{mx_rtt_r} | MnPwr/Rnk: {mn_pwr}W/{mn_pwr_r} | MxPwr/Rnk: "
                  f"{random.randint(683000, 699000)}W/{random.choice([1, 20, 28])} | MnTmp/Rnk: {random.randint(51, 54)}C/"
                  f"{random.choice([0, 8])} | MxTmp/Rnk: {mx_tmp}C/{mx_tmp_r} | MnUtl/Rnk: 97%/{mn_util_r} | MxUtl/Rnk: "
                  f"100%/{random.choice([2, 14, 23])} | MnClk/Rnk: {mn_clk}MHz/{mn_clk_r} | MxClk/Rnk: 1980MHz/0 | "
                  f"MnDRtt/Rnk: {random.uniform(12, 15):.2f}ms/{random.choice([10, 21])} | MxDRtt/Rnk: "
                  f"{random.uniform(30, 41):.2f}ms/{random.choice([3, 27])} | MnEtpt/Rnk: {mn_e:.2f}TF/{mn_e_r} | "
                  f"MxEtpt/Rnk: {mx_e:.2f}TF/{random.choice([1, 9, 17, 30])}")
        others = random.sample([r for r in range(32) if r != BAD_RANK], 8)
        bottom = ([f"{mn_e:.2f}/{mn_e_r}"] if slow else [f"{mn_e:.2f}/{mn_e_r}"]) + \
                 [f"{tflops * random.uniform(0.997, 0.999):.2f}/{r}" for r in others[:3]]
        top = [f"{tflops * random.uniform(1.001, 1.003):.2f}/{r}" for r in others[4:8]]
        r0.append("INFO:megatron.core.utils:^^^^ Bottom 4 Ranks with lowest  Etpt(TF): " + ", ".join(bottom) + ",")
        r0.append("INFO:megatron.core.utils:^^^^ Top    4 Ranks with highest Etpt(TF): " + ", ".join(top) + ",")
    for n, h in enumerate(HOSTS):
        b.add(f"logs/{h}/megatron_train.log", logs[h])
    b.mark(f"logs/{HOSTS[0]}/megatron_train.log", f"MnClk/Rnk: ", (it_slow - it_res + 9) // 10)

    t_probe = t_at(it_last) + timedelta(seconds=75)
    for n, h in enumerate(HOSTS):
        per = {}
        if n == BAD:
            per = {BAD_LR: {"reasons": {"swthermal", "hw", "hwthermal"}, "temp": 91, "memtemp": 88, "sm_clock": 1110,
                            "video_clock": 1005, "power": 404.71}}
        gl = gpu_list(h, per=per)
        smi = nvsmi_q(t_probe, gl, sections=("perf", "temp", "clock"))
        b.add(f"probes/{h}/nvidia-smi.txt", smi)
        b.add(f"probes/{h}/dmesg.txt", dmesg_boot(h, T("2026-11-20T02:12:09")))
    bad_smi = f"probes/{HOSTS[BAD]}/nvidia-smi.txt"
    b.mark(bad_smi, "            HW Thermal Slowdown           : Active")
    b.mark(bad_smi, "        SW Thermal Slowdown               : Active")
    b.mark(bad_smi, "        GPU Current Temp                  : 91 C")
    b.mark(bad_smi, "        SM                                : 1110 MHz")

    job = f"""
job_id: "gpt175p-3318"
name: gpt-175b-proxy-pretrain
framework: megatron
status: slow
started_at: {iso(t0)}
gpus_per_node: 8
parallelism: {{tp: 8, pp: 2, dp: 2, cp: 1, ep: 1}}
scheduler: kubernetes
nodes:
""" + "".join(f"  - {{host: {h}, ip: {IPS[i]}, ranks: [{', '.join(str(i * 8 + k) for k in range(8))}]}}\n"
              for i, h in enumerate(HOSTS)) + """code:
  - {commit: 7f3a9d2, at: 2026-11-04T08:30:00Z, message: "mcore 0.10 + TE 1.12"}
checkpoints:
  - {step: 3000, at: 2026-11-27T23:12:40Z, path: /lustre/ckpt/gpt-175b-proxy/iter_0003000, valid: true}
  - {step: 3300, at: 2026-11-28T06:22:18Z, path: /lustre/ckpt/gpt-175b-proxy/iter_0003300, valid: true}
spares: 2
history: ["gpt175p-3290", "gpt175p-3301"]
"""
    truth = {
        "fault": "gpu_straggler",
        "category": "hardware",
        "root_cause": "GPU 6 of sea-h100-019 (rank 22) throttles thermally (SW/HW thermal slowdown active, 91 C, SM clock "
                      "1110 MHz): from iteration 3451 every iteration waits for it, 4.1 s -> 5.6 s per iteration",
        "faulty_nodes": [HOSTS[BAD]],
        "stage": "training",
        "iteration": it_slow,
        "actions": [{"kind": "evict", "nodes": [HOSTS[BAD]]}, {"kind": "restart", "from_step": 3300}],
    }
    return b.write(job, truth)
