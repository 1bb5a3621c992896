"""One log line -> its message without the structured header (time, host, pid, rank, level), its level, and its mask.

Knows the headers training clusters print (Python logging, Megatron, DeepSpeed, HF, NeMo, torchtitan, glog/c10d, NCCL,
torchrun, srun/mpirun/pdsh prefixes, syslog, dmesg, k8s CRI) and the framework markers of stage, iteration and loss.
"""

from __future__ import annotations

import math
import re
import signal
from dataclasses import dataclass
from typing import Literal

Level = Literal["debug", "info", "warning", "error", "fatal"]
LEVEL_RANK: dict[str, int] = {"debug": 0, "info": 1, "warning": 2, "error": 3, "fatal": 4}

_LEVEL_WORDS: dict[str, Level] = {
    "trace": "debug", "debug": "debug", "d": "debug",
    "info": "info", "notice": "info", "i": "info",
    "warn": "warning", "warning": "warning", "w": "warning",
    "error": "error", "err": "error", "e": "error", "abort": "error",
    "critical": "fatal", "crit": "fatal", "fatal": "fatal", "f": "fatal", "c": "fatal", "panic": "fatal",
    "emerg": "fatal", "alert": "fatal",
}
_LEVEL_NAMES = r"TRACE|DEBUG|INFO|NOTICE|WARNING|WARN|ERROR|ERR|CRITICAL|CRIT|FATAL|PANIC"

# --- headers, peeled from the front of a line one by one ---------------------------------------------------
_ISO_TS = r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"
# torchrun --tee / log_line_prefix_template: [rank3]: / [default3]: ; mpirun --tag-output: [1,3]<stdout>: ; horovodrun
# with Gloo: [0]<stderr>: (dev:pytorch-lightning-5155) ; torchx's role/replica and local rank: trainer/0 [1]:
# (dev:grl-image-restoration-27); torchrun's prefix with a role of another name, TorchX's "trainer": [trainer3]: and
# [trainer0|0]: (dev:nccl-1837); Determined's determined.launch.wrap_rank: [rank=0]  (dev:determined-4297); and a
# paste quoted in Markdown, "> " before every line of it (dev:c-3-framework-58 "> KeyError: 'net'", dev:nanogpt-215),
# one ">" only: not ">>> " (Megatron's own "> compiling ..." loses nothing by it); MPICH's and Intel MPI's
# -prepend-rank (and mpiexec -l), and MS-MPI's, rank before each line: "[13] Traceback (most recent call last):"
# (dev:deepmd-kit-1774, dev:cntk-913)
_LAUNCHER_PREFIX = re.compile(r"\[[a-z]*\d+(?:\|\d+)?\]:\s?|\[\d+(?:,\d+)?\]<std(?:out|err)>:\s?|"
                              r"[A-Za-z][\w-]*/\d+ \[\d+\]:\s?|\[rank=\d+\] |>(?=[ \t]|$) ?|\[\d{1,5}\] ")
# Ray's prefix on what a worker, actor or Ray's own process prints, as its log monitor forwards it to the driver:
# "(pid=4321)", "(TorchTrainer pid=439, ip=10.212.157.221)", "(MegatronPolicyWorker[rank=3] pid=21, ip=10.0.0.2)",
# "(raylet)", "(raylet, ip=10.0.0.2)", "(autoscaler +2m3s)"; nested when an actor forwards its own child's output:
# "(AsyncVLLMInferenceEngine pid=597306) (EngineCore_DP2 pid=598582)" (dev:skyrl-1398, dev:ray-51527, dev:verl-1420);
# SkyPilot's on a multi-node task: "(head, rank=0, pid=5634)", "(worker1, rank=1, pid=8, ip=10.0.0.3)"
# (dev:skypilot-4448)
_SGR = r"(?:\[\d{1,2}(?:;\d{1,2})*m)?"  # a colour code whose escape byte a paste lost: "[36m(pid=1)[0m" (dev:openrlhf-1139)
_RAY_PREFIX = re.compile(_SGR + r"\((?:[\w.:\[\]=-]+,? )?(?:rank=\d+, )?pid=\d+(?:, ip=[\d.:a-fA-F]+)?\)" + _SGR + r"\s?|"
                         + _SGR + r"\((?:raylet|gcs_server|dashboard|monitor|autoscaler)(?:,? (?:ip=)?[\w.:+-]+)?\)"
                         + _SGR + r"\s?")
# time stamps that a transport puts before each line a process printed, as it printed it: dmesg -T's "[Fri Nov 20
# 10:00:58 2026] " and dmesg's "[ 1234.567890] "; syslog's and journald's "Nov 20 10:00:58 node-002 kernel: " (with
# an optional weekday and year); ISO, Python logging, Megatron, DeepSpeed, US-style and Go-style dates, bracketed or
# not, with what separates them (and `kubectl logs --timestamps`' RFC 3339 "2026-11-27T10:15:35.700811773Z "); epoch
# seconds
_DMESG_TIME = re.compile(r"\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d \d{4}\]\s*"
                         r"|\[\s*\d+\.\d+\]\s*")
_SYSLOG_TIME = re.compile(r"(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) )?(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +"
                          r"\d{1,2} \d\d:\d\d:\d\d(?:\.\d+)?(?: \d{4})?\s+(?:[\w.-]+ [\w./-]+(?:\[\d+\])?:\s+)?")
_DATE_TIME = re.compile(r"\[?(?:" + _ISO_TS + r"|(?:\d\d/\d\d/\d{4}|\d{4}/\d\d/\d\d) \d\d:\d\d:\d\d(?:[.,]\d+)?)\]?"
                        r"(?:\s*[-|:,]\s*|\s+)")
_EPOCH_TIME = re.compile(r"\[?1[5-9]\d{8}(?:\.\d+)?\]?\s+")
# a line with only a transport's time stamp before it keeps its indentation: a traceback's frames and source lines
# under journald's or syslog's prefix, or the RFC 3339 time with its 'T' and zone that `kubectl logs --timestamps` and
# `docker logs -t` put before each line, are still a traceback (a logger's own header, its date, level or name, makes
# a logger's record, whose message indentation says nothing)
_TRANSPORT_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)\s")
_PREFIXES: list[tuple[re.Pattern[str], int | None]] = [  # (pattern, group holding a level or None)
    (_LAUNCHER_PREFIX, None),
    (_RAY_PREFIX, None),
    # k8s CRI container log: 2024-01-01T10:00:00.123456789Z stdout F
    (re.compile(_ISO_TS + r" std(?:out|err) [FP] "), None),
    # srun --label "12: "; pdsh's "node2: " before any line (dev:gpt-neox-1147), but never a step count ("iter100:
    # loss"); a host with a dash and no digit ("gpu-node: ") only before a header (a date, a bracket, an NCCL or glog
    # header); an address as the host, as gcloud's ssh to every TPU worker prints it: "34.16.214.62: I0515 ..."
    # (dev:levanter-584)
    (re.compile(r"\s*\d{1,6}: (?=\s*\S)|(?:(?!(?:step|iter|it|epoch|batch)\d)[a-z][\w.-]*\d[\w.-]*|"
                r"\d{1,3}(?:\.\d{1,3}){3}): (?=\S)|"
                r"[a-z][\w.]*-[\w.-]*: (?=\[|\d{4}-\d\d-\d\d|[\w.-]+:\d+:\d+ \[\d+\] NCCL |[IWEF]\d{4} \d\d:)"), None),
    # vLLM's logging format "%(levelname)s %(asctime)s [%(filename)s:%(lineno)d]" with "%m-%d %H:%M:%S" dates:
    # "ERROR 03-26 20:21:53 [core.py:1299] " (dev:skyrl-1398, dev:easyr1-207, dev:ms-swift-6962), before 0.6 without
    # the "[": "ERROR 06-13 13:24:49 worker_base.py:148] " (dev:vllm-5477, dev:lmm-r1-30); SkyPilot's, with a one-letter
    # level: "E 07-06 19:18:16 controller.py:137] " (dev:skypilot-955)
    (re.compile(r"(" + _LEVEL_NAMES + r"|[DIWEC]) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[?[\w./-]+:\d+\]\s*"), 1),
    # Ray's own C++ log lines (raylet, gcs_server, core_worker): "[2024-01-01 10:00:00,123 E 4321 4400] file.cc:55: "
    # (forwarded to the driver it names its process again: "...E 2687 2687] (raylet) node_manager.cc:3069: ",
    # dev:easyr1-50)
    (re.compile(r"\[" + _ISO_TS + r" ([IWEFD]) \d+ \d+\] (?:\(\w+\) )?[\w./-]+:\d+:\s*"), 1),
    # Ascend CANN: "[ERROR] 2024-06-28-13:05:55 (PID:11591, Device:0, RankID:-1) " (dev:llamafactory-4610)
    (re.compile(r"\[(" + _LEVEL_NAMES + r")\] \d{4}-\d\d-\d\d-\d\d:\d\d:\d\d(?:\.\d+)? \(PID:\d+[^)]*\)\s*"), 1),
    # an Ascend CANN error code opens the line that says what failed, after torch_npu's exception: 'EI0006: [PID:
    # 1292363] ... Getting socket times out. Reason: Remote Rank did not send the data in time.' (dev:vllm-ascend-486),
    # 'EZ9999: Inner Error!', 'EL0004: Failed to allocate memory.'
    (re.compile(r"(E)[A-Z0-9]\d{4}: "), 1),
    # a time of day, then the level: rich's log handler "[15:58:29] WARNING  " (dev:accelerate-1192), and
    # "00:28:21.238 [I] " (dev:openpi-566)
    (re.compile(r"\[\d\d:\d\d:\d\d\] +(?=(?:" + _LEVEL_NAMES + r") )|\d\d:\d\d:\d\d(?:\.\d+)? \[([IWEFD])\]\s*"), 1),
    # a logger named in the level's bracket: ms-swift's "[INFO:swift] " (dev:ms-swift-5109)
    (re.compile(r"\[(" + _LEVEL_NAMES + r"):[\w.-]+\]\s*"), 1),
    # NeMo: [NeMo W 2024-01-01 10:00:00 exp_manager:123]
    (re.compile(r"\[NeMo ([DIWEC]) \d{4}-\d\d-\d\d \d\d:\d\d:\d\d [\w.]+:\d+\]\s*"), 1),
    # HF: [INFO|trainer.py:1234] 2024-01-01 10:00:00,123 >>
    (re.compile(r"\[(" + _LEVEL_NAMES + r")\|[\w./-]+:\d+\] " + _ISO_TS + r" >> ", re.IGNORECASE), 1),
    # glog / c10d / klog: [E1120 10:01:02.123456 123 ProcessGroupNCCL.cpp:683] ; E1120 10:00:00.123 140 api.py:881]
    # ; [W socket.cpp:663]
    (re.compile(r"\[?([IWEFD])(?:\d{4} \d\d:\d\d:\d\d(?:\.\d+)?)?(?: +\d+)? ?[\w./<>-]+:\d+\]\s*"), 1),
    (_DMESG_TIME, None),
    (_SYSLOG_TIME, None),
    # Hydra's job logging: "[2024-01-01 10:00:00,123][__main__][ERROR] - " (its documented default format)
    (re.compile(r"\[" + _ISO_TS + r"\]\[[\w.-]+\]\[(" + _LEVEL_NAMES + r")\] - "), 1),
    (_DATE_TIME, None),
    (_EPOCH_TIME, None),
    # levels: [INFO] ; INFO: ; - INFO - ; INFO ; and a logger name after it ([megatron], [logging.py:96:log_dist])
    (re.compile(r"[-|]?\s*(\[(?i:" + _LEVEL_NAMES + r")\]|(?:" + _LEVEL_NAMES + r")\b)(?:\s*[-|:]\s*|\s+)"
                r"(?:\[[\w.:/-]+\]\s*)*"), 1),
    # a logger name then the level: "root - INFO - ", "torch.distributed - WARNING - "
    (re.compile(r"[\w.]+ - (" + _LEVEL_NAMES + r") - ", re.IGNORECASE), 1),
    # a logger name after the level ("INFO:torch.distributed.run:" is handled by the level rule then this one)
    (re.compile(r"(?:[a-z_][\w]*\.)+[\w]+:(?=\S)|(?:[a-z_]\w*\.)*[a-z_]\w* - (?=\S)"), None),
    # tags: [titan] [megatron] [c10d] [Rank 0] ahead of the message
    (re.compile(r"\[(?:titan|megatron|deepspeed|nemo|c10d|torchtitan|Rank \d+|PG \d+[^\]]*)\]:?\s*", re.IGNORECASE), None),
]
_FIRST_HEADER = 4  # _PREFIXES before this are launcher prefixes (rank, Ray, container, srun label), not headers
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # ECMA-48 control sequences: SGR colours, cursor moves, erases
_NCCL_HEAD = re.compile(r"([\w.-]+):(\d+):(\d+) \[(\d+)\] (?=NCCL\b)")
_NCCL_LEVEL = re.compile(r"NCCL (INFO|WARN|ERROR|TRACE|ABORT)\b")
_PROGRAM_LEVEL = re.compile(r"[\w./-]+: (error|warning|fatal|warn|info)\b", re.IGNORECASE)  # slurmstepd: error: ...

# --- what a message says about itself ---------------------------------------------------------------------
_EXCEPTION_LINE = re.compile(
    r"^(?:[A-Za-z_][\w]*\.)*(?:[A-Z][\w]*(?:Error|Exception|Exit|Interrupt|Failure|Fault|Timeout|Warning)"
    r"|ncclUnhandledCudaError|ncclSystemError|ncclInternalError|ncclInvalidUsage|ncclRemoteError|"
    r"ncclInvalidArgument)\b(?::|$)"
    r"|what\(\):\s"  # libstdc++'s "terminate called after throwing an instance of 'X'" then "  what():  <message>"
    # a class of any name behind its module's path, as Python prints an uncaught exception: Triton's
    # "triton.runtime.autotuner.OutOfResources: out of resource: shared memory, Required: ..." (dev:mamba-387)
    r"|(?:[a-z_][a-z0-9_]*\.){2,}[A-Z][A-Za-z0-9]*:\s")
# a frame: Python's, c10's "frame #3:", gdb's "#3 0x... in", Java's "at pkg.Class.method(", and rich.traceback's
# "/path/file.py:989 in to" or "in to:989" (rich's documented panel, once split_header has peeled its borders)
_FRAME = re.compile(r'^(?:File "[^"]*", line \d+|frame #\d+:|#\d+ +0x[0-9a-f]+ in |at [\w.$<>]+\(|'
                    r'\S+\.pyx?:\d+ in \S+$|in \S+:\d+$|[\w.<>]+ \([^()\s]+\.pyx?:\d+\)$)')  # (py-spy's "wait (threading.py:320)")
# a thread of a stack dump, innermost frame first: Python's faulthandler ("Thread 0x00007f07a6ffd640 (most recent call
# first):", "Current thread 0x... (most recent call first):"; dev:torchtitan-168, dev:lit-llama-306) and py-spy dump's
# 'Thread 3121 (active): "MainThread"' (its documented output)
_DUMP_THREAD = re.compile(r'^(?:(?:Current )?[Tt]hread 0x[0-9a-fA-F]+ (?:\[[^\]]*\] )?\(most recent call first\):|'
                          r'Thread (?:0x[0-9A-Fa-f]+|\d+) \((?:active|idle)[^)]*\)(?:: "[^"]*")?$)')
# a paste whose line breaks were lost: a frame with the rest of the traceback on the same line, up to its exception
# (dev:awsome-distributed-ai-192, `File "...distributed_c10d.py", line 1906, in broadcast 10: work = ... 10:
# torch.distributed.DistBackendError: NCCL error in: ...`) is the exception's line, not a frame
_RUN_TOGETHER = re.compile(r'^File "[^"]*", line \d+,? in \S+ .*?\b(?:[A-Z]\w*(?:Error|Exception)|nccl[A-Z]\w+):\s')
_CARET = re.compile(r"^[~^ ]*\^[~^ ]*$|^[╰─╯]+$")  # also the bottom border of a rich.traceback panel
# (and the DataLoader's re-raise of a worker's exception: "Original Traceback (most recent call last):",
# dev:pytorch-cyclegan-and-pix2pix-876)
_TRACEBACK = re.compile(r"^(?:(?:Original )?Traceback \(most recent call last\):?|terminate called after throwing an instance of|Stack trace:|Exception raised from |"
                        r"During handling of the above exception|The above exception was the direct cause)")
_FATAL_WORDS = re.compile(r"\b(?:fatal|panic|core dumped|segmentation fault|segfault|sigsegv|sigabrt|sigbus|"
                          r"unrecoverable|kernel bug|oops|dumped core|memory access fault|death signal)\b",
                          re.IGNORECASE)  # PALS:
# "rank 0 died from signal 11 and dumped core" (dev:ezpz-210); ROCm's "Memory access fault by GPU node-1 ... Reason:
# Page not present or supervisor privilege." that aborts the process (dev:tinygrad-3343); torch.distributed.elastic's
# agent on a signal it was sent: "Received Signals.SIGHUP death signal, shutting down workers", "Received 1 death
# signal" (its documented warning; a closed terminal in dev:llamafactory-5297, dev:chatglm-efficient-tuning-72)
_ERROR_WORDS = re.compile(
    r"\b(?:errors?|err|errno|exceptions?|fail(?:ed|ure|s|ing)?|abort(?:ed|ing)?|killed|oom|out of memory|timed? ?out|timeout|"
    r"died|uncorrectable|illegal|invalid|corrupt(?:ed|ion)?|denied|refused|unreachable|unable to|cannot|can't|"
    r"could not|no such|not found|lost|missing|mismatch|unhandled|crash(?:ed)?|hang|hung|stuck|deadlock(?:ed)?|xid|"
    r"fallen off|link down|port down|exited with|exit code|exitcode|non-zero|nonzero|traceback|assert(?:ion)?|"
    # a component that stopped answering: sample-factory's 'No heartbeat for components' (dev:sample-factory-285),
    # Ray's 'marked dead because the detector has missed too many heartbeats', TensorFlow's ShutdownHook 'lame workers
    # found: HeartbeatManager(/job:worker/...)' at INFO (session_support.py; dev:t5-japanese-1)
    r"no heartbeats?|lack of heartbeats?|missed (?:too many )?heartbeats?|lame workers found|"
    # MPI's word for the rank that failed: Open MPI's 'MPI_ABORT was invoked on rank 0 in communicator ...'
    # (dev:netket-1494), MS-MPI's '[1] process exited without calling finalize' (dev:cntk-913, dev:cntk-1047)
    r"MPI_ABORT was invoked|exited without calling finalize|"
    # Open MPI's help message when a peer vanished: 'An MPI communication peer process has unexpectedly
    # disconnected.' (its help-mpi-btl-tcp.txt; dev:horovod-1950)
    r"peer process has unexpectedly disconnected|"
    # and its launcher's refusal to start them: Open MPI's and PRRTE's help text 'There are not enough slots available in
    # the system to satisfy the 3 slots that were requested by the application' (dev:prrte-1152, dev:dstack-2451)
    r"not enough slots available)\b",
    re.IGNORECASE)
# an fp16 overflow is a warning whatever the header says: apex's 'Gradient overflow.  Skipping step' (no header,
# dev:apex-834), DeepSpeed's '[INFO] ... OVERFLOW! Rank 0 Skipping step' (dev:transformers-14531); so is a stall
# (Horovod's stall inspector: 'Stalled ops:', 'Stalled ranks:', dev:horovod-100, whose next sentence says 'which
# will cause deadlock', an error word)
# (guided-diffusion's fp16 trainer on a step it skips: 'Found NaN, decreased lg_loss_scale to -16199.354', with no
# header or other word, dev:guided-diffusion-50)
# (an object store's refusal for too many requests: GCS's 429 '"message": "The total number of changes to the object
# ... exceeds the rate limit', dev:kubeflow-examples-318; S3's 503 'SlowDown: Please reduce your request rate.')
_WARNING_WORDS = re.compile(r"\b(?:warn(?:ing)?s?|deprecated|retry(?:ing)?|retrying|slow(?:er)?|throttl\w*|"
                            r"degraded|unstable|overflow|stall(?:ed|ing)?|rate limit(?:ed)?|too many requests|"
                            r"reduce your request rate|found nan)\b", re.IGNORECASE)
# absl::Status in its text form ("CODE: message") is a failure whatever the logger's level: JAX's xla_bridge logs at
# INFO "Unable to initialize backend 'tpu': ABORTED: The TPU is already in use by process with pid 176028"
# (dev:jax-22070). The codes of absl/status/status.h that report a failure (not CANCELLED, UNKNOWN or OK)
# TensorFlow 2 before the codes' upper-case names listed each root error with its code in words: "2 root error(s)
# found.", then "  (0) Internal:  NCCL: unhandled system error." and "  (1) Data loss: corrupted record at 0"
# (dev:tensorflow-36802, dev:tensorflow-44637)
_STATUS_CODE = re.compile(r"\b(?:ABORTED|DEADLINE_EXCEEDED|RESOURCE_EXHAUSTED|FAILED_PRECONDITION|UNAVAILABLE|INTERNAL|"
                          r"DATA_LOSS|PERMISSION_DENIED|UNAUTHENTICATED|NOT_FOUND|INVALID_ARGUMENT|OUT_OF_RANGE|"
                          r"UNIMPLEMENTED|ALREADY_EXISTS): |^\(\d+\) (?:Internal|Invalid argument|Not found|Resource "
                          r"exhausted|Unavailable|Aborted|Failed precondition|Out of range|Unimplemented|Data loss|"
                          r"Permission denied|Unauthenticated|Deadline exceeded|Already exists): ")
# so is DeepSpeed's launcher tearing the job down once a rank exited, at INFO: '[INFO] [launch.py:315:sigkill_handler]
# Killing subprocess 156890' (all a paste may show of the failure, dev:yi-152, dev:baichuan-13b-148)
# and TensorFlow's Coordinator.request_stop logging, at INFO, the exception that stops the training threads: 'INFO
# (Thread-4-2183) Error reported to Coordinator: /dbfs/.../checkpoint.tmp...; Input/output error' (training/
# coordinator.py; dev:tensorflow-20090)
_ERROR_AT_INFO = re.compile(r"^Killing subprocess \d+|\bError reported to Coordinator: ")
# c10d's barrier at init logs at INFO, every 10 s while ranks are missing, 'Waiting in store based barrier to initialize
# process group for rank: 0, key: store_based_barrier_key:1 (world_size=2, worker_count=1, timeout=0:30:00)'
# (distributed_c10d._store_based_barrier; dev:rvt-18, dev:nemo-5819): a rank waits on peers that never came, a warning
_WARNING_AT_INFO = re.compile(r"\bWaiting in store based barrier to initialize process group\b")
_ZERO_COUNTS = re.compile(r"\b(?:errors?|fail(?:ed|ures?)|nan|skipped|timeouts?)[\w ]*[:=]\s*0\b", re.IGNORECASE)


def without_zero_counts(text: str) -> str:
    """A line without the counters that say nothing went wrong (Megatron's "number of nan iterations:   0")."""
    return _ZERO_COUNTS.sub("", text)

# the lines of torch.distributed.elastic's ChildFailedError summary that say nothing of their own (its documented
# output): its header "train.py FAILED" (as a template, the script's path masked: "<*> FAILED"), "Root Cause (first
# observed failure):", "error_file: <N/A>", "<NO_OTHER_FAILURES>"
ELASTIC_SUMMARY_PLACEHOLDERS = r"^(?:[\w./-]+|<\*>) FAILED$|first observed failure|^\s*error_file\s*:|<NO_OTHER_FAILURES>"
# what a rank prints when a peer failed: timeouts, lost peers, aborted communicators, the launcher's kill and summary
_CASCADE = re.compile(
    r"watchdog|timed? ?out\b|timeout|heartbeat|remote (?:process|peer|rank|end)|by peer|peer (?:closed|reset|"
    r"disconnected|exited)|connection (?:reset|closed|refused|lost|aborted)|broken pipe|ncclRemoteError|"
    r"communicator (?:was )?abort|abort(?:ed|ing)? (?:the )?(?:process group|communicator|nccl)|sigterm|sighup|"
    r"closing signal|death signal|signal 15|exitcode\b|exit code|exited with|terminat(?:ed|ing)\b|ChildFailedError|aborted\b|"
    r"core dumped|cancell?ed\b|"
    # Horovod on every rank once one failed: "Horovod has been shut down. This was caused by an exception on one of
    # the ranks ..." (dev:horovod-243)
    r"Horovod has been shut down|"
    # Open MPI's word on a peer that vanished (help-mpi-btl-tcp.txt: 'An MPI communication peer process has
    # unexpectedly disconnected.', dev:horovod-1950)
    r"peer process has unexpectedly disconnected|"
    # DeepSpeed's launcher killing every rank once one exited ('sigkill_handler] Killing subprocess 156890', dev:yi-152)
    r"Killing subprocess\b|"
    # systemd on a unit whose main process (the job's launcher) ended: "train.service: Main process exited,
    # code=exited, status=1/FAILURE", "train.service: Failed with result 'exit-code'." (its documented messages)
    r"Main process exited, code=|Failed with result '|"
    r"worker group|rendezvous|DistStoreError|DistNetworkError|exited prematurely|failed to (?:recv|send|receive)|"
    r"recv(?:ing)? .{0,40}failed|socket|"
    # the elastic agent's summary of a worker's failure (under ChildFailedError): the placeholders above, and "traceback :
    # Signal 9 (SIGKILL) received by PID 48213"
    + ELASTIC_SUMMARY_PLACEHOLDERS + r"|^\s*traceback\s*: ",
    re.IGNORECASE)


# a local InfiniBand verbs call that failed is this rank's own error, whatever errno it names: NCCL's ibvwrap.c
# 'NCCL WARN Call to ibv_modify_qp failed with error Connection timed out', then the '-> 2' trail (dev:nccl-749); so
# is a socket the rank could not even create (NCCL's socket code: 'WARN Socket creation failed : Address family not
# supported by protocol', a container with no usable interface, dev:nccl-tests-14)
# (and a port this rank could not bind, c10d's store server on a taken MASTER_PORT: 'The server socket has failed to
# bind to [::]:12355 (errno: 98 - Address already in use)', dev:mace-458)
_OWN_CALL = re.compile(r"\bCall to ibv_\w+ failed|\bSocket creation failed\b|\bAddress already in use\b|"
                       r"server socket has failed to (?:bind|listen)")
_INNER_ERROR = re.compile(r"(?:exception|error)\s*:\s*", re.IGNORECASE)
# Slurm's cancel that names its own reason for ending the job ('slurmstepd: error: *** JOB 918273 ON gpu-e05 CANCELLED
# AT 2026-11-24T06:00:12 DUE TO TIME LIMIT ***', its documented output; incident journald-lightning-slurm-timelimit):
# the cause, not the kill a failure elsewhere set off (a NODE FAILURE names the batch host, not the failed node)
_SCHEDULER_REASON = re.compile(r"CANCELLED AT \S+ DUE TO (?:TIME LIMIT|PREEMPTION)")


def is_cascade(message: str) -> bool:
    """Words of the cascade a failure sets off on healthy ranks (a peer's timeout, its lost connection, the kill).
    A line that wraps an error ("watchdog thread terminated with exception: NCCL error: X") is judged by X."""
    if _OWN_CALL.search(message) or _SCHEDULER_REASON.search(message):
        return False
    inner = _INNER_ERROR.split(message)[-1]
    return _CASCADE.search(inner or message) is not None


# --- framework markers of stage and progress ---------------------------------------------------------------
Marker = Literal["iteration", "ckpt_start", "ckpt_end", "eval_start", "eval_end", "train_start", "shutdown",
                 "ckpt_load", "straggler_report"]
_ITERATION = re.compile(  # fairseq counts optimizer steps as "| num_updates 10198 |" (dev:fairseq-512)
    # (a count: 'time/step=1.016501' is a step's time, dev:nscl-pytorch-release-23; NeMo prints its count as a float,
    # 'global_step=3619.0')
    r"(?:\b(?:iteration|iter|itr|step|global_step|steps|train_step|num_updates)\b\s*[:=]?\s*\[?(\d+)(?!\.\d*[1-9])(?!\d)"
    r"(?:\s*/\s*(\d+))?"
    # tqdm's bar, "{desc}: {percentage}%|{bar}| {n}/{total} [{elapsed}<{remaining}, {rate}{postfix}]", with no
    # description (HF Trainer's) or one that names training ("train:   0%|          | 2/100000 [00:46<644:59:38,
    # 23.22s/it, loss=11.2]", dev:levanter-584; Lightning's "Epoch 0:"), not a data map's or a shard load's bar
    # (a description may carry the epoch's metrics: 'Epoch 15 acc/qa=1.000000 loss=0.046158 ... time/step=1.016501:
    # 100%|####| 1006/1006', Jacinle's, dev:nscl-pytorch-release-23)
    r"|^(?:(?:train(?:ing)?|epoch|steps?|iter(?:ation)?s?|global[ _]step)\b[^|%:]{0,160}:)?\s*(\d+)%\|[^|]*\|"
    r"\s*(\d+)/(\d+) \[|\bit\s*[:=]\s*(\d+)"  # "it=7604"
    # pytorch/examples' ImageNet ProgressMeter, copied by many vision trainers: "Epoch: [1][  100/5005]" (the batch in
    # its epoch; dev:dali-2608)
    r"|\bEpoch: \[\d+\]\s*\[\s*(\d+)/(\d+)\]"
    # MMEngine's LoggerHook (OpenMMLab): "Epoch(train)  [1][ 100/1000]" and "Iter(train) [  100/10000]"; Composer's
    # "[batch=100/1000]"; torchtune's "1|100|Loss: 2.34"; MXNet's Speedometer "Epoch[0] Batch [100]"
    r"|\b(?:Epoch\(train\)\s*\[\d+\]|Iter\(train\))\s*\[\s*(\d+)/(\d+)\]|\[batch=(\d+)/(\d+)\]|^\d+\|(\d+)\|Loss:"
    r"|\bEpoch\[\d+\] Batch \[(\d+)\]"
    # Lightning's RichProgressBar: "Epoch 0/0 ━━━━━━━━━━╸━━━━━ 3170/12000 0:52:19 • 3:33:17 0.69it/s v_num: 3 ..."
    # (its columns in lightning/pytorch/callbacks/progress/rich_progress.py: bar, batches, time, speed, metrics)
    r"|^Epoch \d+(?:/\d+)?\s+\D*?(\d+)/(\d+) \d+:\d\d:\d\d"  # (the bar: no digits, any bytes)
    # Marian NMT's scheduler: "Ep. 1 : Up. 51000 : Sen. 77,303,338 : Cost 1.41794586 : Time 334.55s : ..."
    # (dev:translations-1002)
    r"|\bEp\. \d+ : Up\. (\d+) :)", re.IGNORECASE)
# the job's step count printed after the epoch's on one line: NeMo's progress printer, "Training epoch 0, iteration
# 666/38249 | lr: 0.0002872 | global_batch_size: 512 | global_step: 12417 | reduced_train_loss: 1.816" (its iteration
# counts the epoch's batches, global_step the trainer's steps; blind incident sbatch-srun-l-nemo-nccl-proxy-internal-4node)
_GLOBAL_STEP = re.compile(r"\bglobal_step\b\s*[:=]\s*(\d+)(?!\.\d*[1-9])(?!\d)")
# a bar's rate, tqdm's "1.78s/it" or "3.45it/s" (and the rich bar's): the step time where no line names one; a
# trainer's own, TensorFlow's CIFAR-10 tutorial's "(71.1 examples/sec; 3.600 sec/batch)" (dev:tensorflow-2987) and
# Hand4Whole's "speed: 0.72(0.65s r0.07)s/itr" (dev:hand4whole_release-31)
_RATE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?:\([^()]{0,40}\))?\s?(s/itr?|it/s|sec/batch)\b")
# else its samples a second, as the inverse of a step (a batch is a fixed number of samples): MXNet's Speedometer
# "Epoch[0] Batch [20]	Speed: 95.71 samples/sec" (dev:mxnet-ssd-75, dev:mxnet-4804)
_SAMPLE_RATE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?) (?:samples|examples)/sec\b")
_PROGRESS_WORDS = re.compile(r"loss|\blr\b|^Training: step|learning[ _]rate|grad[ _]?norm|tflop|tokens?/s|\btps\b|mfu|"
                             r"throughput|elapsed|it/s|s/it|samples/s|SamplesPerSec", re.IGNORECASE)  # DeepSpeed's
# timer: "epoch=0/micro_step=1200/global_step=1200, RunningAvgSamplesPerSec=41.2, CurrSamplesPerSec=40.9, ..."
_HF_METRICS = re.compile(r"^\{'(?:loss|train_loss|grad_norm|learning_rate)'")
_STAGE_RULES: list[tuple[Marker, re.Pattern[str]]] = [
    # (Lightning's checkpoint connector: "Restoring states from the checkpoint path at ...")
    ("ckpt_load", re.compile(r"\b(?:loading|loaded|load_checkpoint|resum\w*|restor\w*)\b.{0,80}checkpoint",
                             re.IGNORECASE)),
    ("ckpt_end", re.compile(
        r"successfully saved checkpoint|saved checkpoint|checkpoint \S+ is ready now|finished saving|"
        r"checkpoint saved|saving checkpoint .*(?:done|finished|completed)|done saving|checkpoint .* written", re.IGNORECASE)),
    ("ckpt_start", re.compile(
        r"saving (?:model |the |a |distributed |async )?checkpoint|about to be saved|save_checkpoint|"
        r"saving model (?:checkpoint|state|weights)|writing checkpoint|checkpointing at|dcp\.save|"
        r"start(?:ing)? (?:to )?sav(?:e|ing) checkpoint|"
        # latent-diffusion's main.py (Stable Diffusion's and taming-transformers' too) before melk() saves last.ckpt
        # on a crash or signal (dev:lambdalabsml-examples-41)
        r"^summoning checkpoint", re.IGNORECASE)),
    ("eval_end", re.compile(r"validation loss at|eval(?:uation)? (?:results|metrics|done|finished|complete)|"
                            r"\*+ eval metrics \*+|end of validation|finished evaluat", re.IGNORECASE)),
    ("eval_start", re.compile(r"running evaluation|^evaluating\b|start(?:ing)? (?:evaluation|validation)|"
                              r"\bvalidation dataloader\b|^validation\b|evaluating (?:on|iter)|"
                              # mmcv's ProgressBar in its EvalHook (dev:mmdetection-9759)
                              r"\d task/s, elapsed: |"
                              # a tqdm bar whose description names validation ('Epoch 15 (validation)
                              # validation/acc/qa=1.000000:   2%|#4   | 20/1094', dev:nscl-pytorch-release-23)
                              # (and Ultralytics' validator, its columns the bar's description: 'Class  Images
                              # Instances  Box(P  R  mAP50  mAP50-95):   0%|   | 0/21', dev:ultralytics-1238)
                              r"^[^|%]{0,160}\b(?:validation|validating|evaluation|evaluating|eval|testing|mAP50)\b"
                              r"[^|%]{0,160}:\s*\d+%\|", re.IGNORECASE)),
    # (not Ray Train's report after each of its iterations, 'Training finished iteration 1 at 2026-11-27 11:46:28. Total
    # running time: 46min 26s', ray/tune/experimental/output.py: the run goes on)
    ("shutdown", re.compile(r"training (?:is )?(?:done|finished(?! iteration \d)|complete(?:d)?)|after training is done|"
                            r"exiting program|finished training|max_steps\S* (?:reached|hit)|"
                            # fairseq_cli/train.py's 'done training in 162.1 seconds' (dev:fairseq-4619)
                            r"training ends|trainer\.fit. stopped|^done training in", re.IGNORECASE)),
    ("train_start", re.compile(r"^training \.\.\.|\*+ running training \*+|training starts|starting training|"
                               r"before the start of training|start(?:ing)? training loop|^training$", re.IGNORECASE)),
]

# --- metrics on progress lines -----------------------------------------------------------------------------
_NUM = r"([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?nan|[-+]?inf(?:inity)?)"
# "loss: 2.1", "lm loss: 2.1E+00", {'loss': 2.1}; nanoGPT's "iter 3010: loss nan, time ..." (dev:nanogpt-215) and
# BigDL's "Loss is Infinity." (dev:ipex-llm-1486) name the value without a colon
# a loss, also summed over its terms ("losses: nan", dev:nlut-12)
# a loss by its name, or a named one ('loss_net: nan', dev:medicaldataaugmentationtool-verse-31), never fp16's loss scale
# (Detectron2's "total_loss: 2.346" before its terms; Composer's "loss/train/total: 2.3456"); a row of the table that
# OpenAI's baselines logger prints each dump ("| loss          | nan       |", guided-diffusion's, dev:guided-diffusion-50)
_LOSS = re.compile(r"(?:\blm[ _]loss|\btrain[ _/]loss|\breduced_train_loss|\btotal_loss|\bloss/train/total|\blosses|"
                   r"\bloss(?:_(?!scale)[a-z]+)?)\b['\"]?\s*"
                   r"(?:value)?\s*(?:[:=|]|\bis\b)?\s*['\"]?"
                   + _NUM + r"(?!\w)", re.IGNORECASE)
# (or a column with no colon, 'step 11 | loss 2.3224 | grad_norm     nan', NeMo Automodel's, dev:automodel-1883)
_GRAD_NORM = re.compile(r"\bgrad[ _]?norm\b['\"]?(?:\s*[:=]\s*|\s+)['\"]?" + _NUM, re.IGNORECASE)
_STEP_TIME = re.compile(r"(?:elapsed time per iteration \(ms\)|iter(?:ation)? time \((m?s)\)|train_step_timing in s|"
                        r"step[ _]time(?: \((m?s)\))?|time/iteration|time per step|"
                        # the ImageNet ProgressMeter's batch time, then its running average: "Time  8.719 ( 0.361)"
                        r"(?-i:\bTime)(?=\s+[\d.]+\s+\(\s*[\d.]+\))|"
                        # MMEngine's and Detectron2's "time: 0.5123  data_time: 0.0123" (or " - " between them,
                        # dev:yet-another-efficientdet-pytorch-322); verl's "timing_s/step:12.3";
                        # MaxText's "completed step: 100, seconds: 0.512"; nanoGPT's "time 120.00ms"
                        r"\btime(?=:\s*[\d.]+\s*[-,|]?\s+data_time:)|timing_s/step|completed step: \d+, seconds|"
                        # Pythia's (MMF's predecessor) report of each window of steps, 'iter: 9300 train_loss: 1.1513
                        # ... time(s): 1371.4 s' (dev:mmf-29)
                        r"(?-i:\btime)(?=\s+[\d.]+ms\b)|(?-i:\btime\(s\)))\s*[:=]?\s*([\d.]+)(ms\b)?", re.IGNORECASE)
# the time a step waited on its data beside the step's whole time, as trainers print both: MMEngine's and MMCV's
# "time: 0.5123  data_time: 0.0123", Detectron2's "time: 0.4567  last_time: 0.4  data_time: 0.0123", the ImageNet
# ProgressMeter's "Time  8.719 ( 0.361)  Data  8.501 ( 0.120)", timm's "Time: 0.512s, ... Data: 0.012 (0.015)" and
# CenterNet's "|Data 3.556s(0.517s) |Net 1.014s" (its batch time, dev:centernet-604), PaddleClas's and PaddleDetection's
# "batch_cost: 20.16547s, reader_cost: 19.83207" (dev:paddleclas-3296)
_DATA_TIME = re.compile(r"(?<![\w/])data_time:\s*([\d.]+)|\bData:?\s+([\d.]+)|\breader_cost:\s*([\d.]+)")
_BATCH_TIME = re.compile(r"(?<![\w/])time:\s*([\d.]+)|\bTime:?\s+([\d.]+)|\|Net\s+([\d.]+)s|\bbatch_cost:\s*([\d.]+)")
DATA_BOUND_SHARE = 0.5  # a step that waits on its data this share of its time or more is held up by its input
_NAN_COUNT = re.compile(r"number of nan iterations:\s*(\d+)", re.IGNORECASE)

# --- masking: the parts of a message that vary between occurrences of one event ---------------------------
WILDCARD = "<*>"
# a token is what lies between these delimiters; '.', '-', '_', '/', '@', '+' stay inside tokens, so IPs, paths,
# host names, PCI ids, versions and pointers are masked whole
_DIGIT_TOKEN = re.compile(r"(?<![^\s,;:=|\"'\[\](){}<>!])[^\s,;:=|\"'\[\](){}<>!]*\d[^\s,;:=|\"'\[\](){}<>!]*")
_PATH_TOKEN = re.compile(r"(?<![^\s,;:=|\"'\[\](){}<>!])(?:~|\.{1,2})?/[^\s,;:=|\"'\[\](){}<>!/]+"
                         r"(?:/[^\s,;:=|\"'\[\](){}<>!/]*)*")
_HEX_TOKEN = re.compile(r"(?<![\w])(?:0x[0-9a-fA-F]+|[0-9a-fA-F]{8,}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-"
                        r"[0-9a-f]{12})(?![\w])")
# IPv6 (with "::"), MAC addresses and PCI bus ids (0000:3b:00.0)
_COLON_IDS = re.compile(r"(?<![\w.])(?:[0-9a-fA-F]{0,4}(?::[0-9a-fA-F]{0,4})*::[0-9a-fA-F:]*[0-9a-fA-F]"
                        r"|(?:[0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}|[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?)"
                        r"(?![\w:])")
_DATE_WORDS = re.compile(r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun|Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?"
                         r"(?=,?\s+(?:\d|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)))")  # Sun Jul 10 03:55
_HOST_PORT = re.compile(r"(?<![^\s,;=|\"'\[\](){}<>!])[A-Za-z][\w-]*(?:\.[\w-]+)+(?=:\d)")  # www.a.com:443
_LIST_OF_VARS = re.compile(r"([\[(])<\*>(?:\s*,\s*<\*>)+\s*,?\s*([\])])")
_SPACES = re.compile(r"\s+")
# Ray's log deduplication trailer on a line its workers printed alike: '... [repeated 7x across cluster]', the first
# time followed by '(Ray deduplicates logs by default. Set RAY_DEDUP_LOGS=0 to disable log deduplication, ...)' (Ray's
# documented log deduplication): not the message's (incident raytrain-nccl-socket-fallback-4node)
_RAY_REPEATED = re.compile(r"\s*\[repeated \d+x across cluster\](?: \(Ray deduplicates logs by default\..*)?$")


@dataclass(slots=True, frozen=True)
class ParsedLine:
    """What the header said, and the message that is left for template mining."""

    message: str
    level: Level | None  # from the header; None when the line has none
    structured: bool = False  # the line began with a time, level or NCCL header (not only a rank prefix)
    indented: bool = False  # after any rank prefix, the message was indented (a traceback line, or a detail line)


_RICH_PANEL = ("│", "╭")
_PEER_TRANSFER = re.compile(r"\bfrom peer\b|\bto peer\b|remote", re.IGNORECASE)


def split_header(text: str) -> ParsedLine:
    """Peel the structured header off a line: timestamps, rank/host/pid prefixes, level and logger names."""
    rest = text.rstrip()
    if "\x1b[" in rest:  # a terminal's colours (Ray colours its prefixes; loggers their levels)
        rest = _ANSI.sub("", rest)
    indented = rest[:1].isspace()
    if rest[:1] in _RICH_PANEL:  # rich.traceback's panel: "╭── Traceback (most recent call last) ──╮", then
        # "│ /path/file.py:9 in step │" (a frame) and "│    8 │   loss = f(x) │" or "│ ❱  9 │ ..." (source)
        rest = rest.strip("╭╮─ ") if rest[0] == "╭" else rest[1:].removesuffix("│").replace("❱", " ", 1).rstrip()
        indented = rest[:2] == "  "
    rest = rest.lstrip()
    level: Level | None = None
    structured = False
    time_only = True  # no header but a transport's time stamp (and launcher prefixes) so far
    for _ in range(8):
        for i, (pattern, level_group) in enumerate(_PREFIXES):
            m = pattern.match(rest)
            if m is None or m.end() == 0:
                continue
            if level_group is not None and m.group(level_group):
                level = _LEVEL_WORDS.get(m.group(level_group).strip("[]").lower(), level)
            structured = structured or i >= _FIRST_HEADER
            time_only = time_only and (i < _FIRST_HEADER or pattern in (_DMESG_TIME, _SYSLOG_TIME)
                                       or pattern is _DATE_TIME and _TRANSPORT_TIME.match(m.group(0)) is not None)
            rest = rest[m.end():]
            gap = len(m.group(0)) - len(m.group(0).rstrip())  # (a time stamp's pattern takes the spaces after it)
            indented = (not structured or time_only) and (rest[:1] == "\t" or rest[:2] == "  " or gap >= 1
                                                          and rest[:1].isspace() or time_only and gap >= 3)
            rest = rest.lstrip()
            break
        else:
            m = _NCCL_HEAD.match(rest)
            if m is None:
                break
            structured = True
            rest = rest[m.end():]
    if level is None:
        m = _NCCL_LEVEL.match(rest)
        if m:
            level = {"INFO": "info", "TRACE": "debug", "WARN": "warning"}.get(m.group(1), "error")
            if level == "warning" and content_level(rest) in ("error", "fatal") and not is_cascade(rest) \
                    and not _PEER_TRANSFER.search(rest):
                level = "error"  # NCCL has no error level: it reports its own errors as WARN ("port error")
        else:
            m = _PROGRAM_LEVEL.match(rest)
            if m:
                level = _LEVEL_WORDS.get(m.group(1).lower())
    if level in ("debug", "info", "warning") and (_STATUS_CODE.search(rest) or _ERROR_AT_INFO.search(rest)):
        level = "error"
    elif level in ("debug", "info") and _WARNING_AT_INFO.search(rest):
        level = "warning"
    return ParsedLine(rest, level, structured or level is not None, indented and (not structured or time_only))


# a label whose message is on the next line, as PyTorch prints NCCL's last error ("Last error:" then "Net : Call to recv
# from ... failed : Connection refused", dev:gpt-neox-1147): the words are the next line's, not its own; so are a JSON
# error body's opening keys ('"error": {', '"errors": [' of a Google API's error body, dev:kubeflow-examples-318)
# (and MS-MPI's heading over its per-rank report, '---- error analysis -----', dev:cntk-913)
_BARE_LABEL = re.compile(r"(?:last |remote |original )?(?:error|exception|reason|cause)s?:\s*$|^-+ error analysis -+\W*$|"
                         # (TensorFlow's heading over gRPC's error string: 'Additional GRPC error information:' and
                         # 'Additional GRPC error information from remote target /job:worker/replica:0/task:1:',
                         # dev:tensorflow-33979)
                         r"^Additional GRPC error information(?: from remote target \S+)?:\s*$", re.IGNORECASE)
_JSON_ERROR_KEY = re.compile(r'"errors?":\s*[{\[]\s*$')


def content_level(message: str) -> Level | None:
    """The level a message's own words imply (for lines without a header level, and to catch INFO-level errors)."""
    if _BARE_LABEL.match(message) or _JSON_ERROR_KEY.search(message):
        return None
    if _EXCEPTION_LINE.match(message) or _FATAL_WORDS.search(message):
        return "fatal" if _FATAL_WORDS.search(message) else "error"
    if _STATUS_CODE.search(message):
        return "error"
    message = without_zero_counts(message)
    if _ERROR_WORDS.search(message):
        return "error"
    if _WARNING_WORDS.search(message):
        return "warning"
    return None


LineKind = Literal["exception", "frame", "caret", "traceback", "dump", "other"]


def line_kind(message: str) -> LineKind:
    """Where a message sits in a traceback: the exception line, a frame, the `^^^` under a source line, the traceback
    header, a stack dump's thread header, or none of these."""
    if _DUMP_THREAD.match(message):
        return "dump"
    if _FRAME.match(message):
        return "other" if _RUN_TOGETHER.search(message) else "frame"
    if _CARET.match(message):
        return "caret"
    if _TRACEBACK.match(message):
        return "traceback"
    if _EXCEPTION_LINE.match(message):
        return "exception"
    return "other"


_RESUME_STEP = re.compile(r"(?:iteration|iter|global_step|step)[\s_=:-]*0*(\d+)", re.IGNORECASE)


# the step a checkpoint being saved is named for: HF Trainer's output_dir/checkpoint-{global_step} ('Saving model
# checkpoint to .../checkpoint-100', dev:ms-swift-3031; its staging 'tmp-checkpoint-49', dev:axolotl-948),
# DeepSpeed's 'global_step100', Megatron's 'iter_0001000', TensorFlow's CheckpointSaverHook 'Saving checkpoints for
# 7200 into s3://.../model.ckpt.' (dev:sagemaker-python-sdk-454); verl's and EasyR1's 'global_step_50' (dev:easyr1-50);
# Orbax's staging directory '30000.orbax-checkpoint-tmp-0' (dev:openpi-566)
_SAVED_STEP = re.compile(r"\bcheckpoint-(\d+)\b|\bglobal_step_?(\d+)\b|\biter_0*(\d+)\b|Saving checkpoints for (\d+) into|"
                         r"\b(\d+)\.orbax-checkpoint-tmp")


def saved_step(message: str) -> int | None:
    """The step a checkpoint's path names ('checkpoint-100', 'global_step100', 'iter_0001000'), or None."""
    m = _SAVED_STEP.search(message)
    return int(next(g for g in m.groups() if g is not None)) if m else None


def resume_step(message: str) -> int | None:
    """The step a checkpoint being loaded was saved at ("loading checkpoint .../global_step5100", "iter_0012000")."""
    m = _RESUME_STEP.search(message)
    return int(m.group(1)) if m else None


_FRAME_FUNCTION = re.compile(r'^(?:File "[^"]*", line \d+,? in (\S+)|\S+\.pyx?:\d+ in (\S+)$|in (\S+):\d+$|'
                             r'([\w.<>]+) \([^()\s]+\.pyx?:\d+\)$)')
# the functions a traceback passes through while a framework trains, evaluates, saves a checkpoint, or sets up
_STAGE_OF_FUNCTIONS: list[tuple[str, re.Pattern[str]]] = [
    # the process group torn down as the job exits (torchtitan's train.py, dev:torchtitan-1342), Python's atexit
    ("shutdown", re.compile(r"^destroy_process_group$|^_?atexit|^_run_exitfuncs$")),
    # any save*: a function named for saving saves state (Paddle's save_infer_program, dev:paddleseg-537)
    ("checkpoint", re.compile(r"save_checkpoint|_save|^save(?!d)|async_save|dcp_save")),
    # (mmcv's IterBasedRunner.val -> model.val_step, dev:mmcv-1107)
    # (Coqui's Trainer.fit -> _fit -> test_run, dev:trainer-48)
    ("eval", re.compile(r"evaluat|validation_step|_validate|eval_step|prediction_step|^test$|test_step|^validate$|"
                        r"^val$|^val_step$|^test_(?:run|loop|epoch)$")),
    ("training", re.compile(r"train_step|training_step|forward_backward|_inner_training_loop|train_batch|"
                            # (Keras's Model.fit and its train_function, dev:tensorflow-33531)
                            r"run_training|^train$|fit_loop|^backward$|optimizer_step|^step$|^fit$|^train_function$")),
    # a checkpoint or state dict being loaded, by whatever name: DeepSpeed's _load_zero_checkpoint (dev:glm-136),
    # torch.distributed.checkpoint's load_sharded_optimizer_state_dict (dev:pytorch-95892)
    # and a rank picking its GPU (torch.cuda.set_device -> torch._C._cuda_setDevice, dev:mlcommons-training-442)
    # (Lightning's checkpoint connector _restore_modules_and_callbacks, dev:stable-audio-tools-163)
    ("init", re.compile(r"load_\w*checkpoint|load_\w*state_dict|setup_model|initialize|from_pretrained|"
                        r"build_model|get_model|resume_or_load|resume_from_checkpoint|^set_device$|_cuda_setDevice|"
                        r"_?restore\w*")),
]


def frame_function(message: str) -> str | None:
    """The function a Python traceback frame line names."""
    m = _FRAME_FUNCTION.match(message)
    return next((g for g in m.groups() if g is not None), None) if m else None


def stage_of_frames(functions: list[str]) -> str | None:
    """The stage a traceback's frames show (innermost framework function first), or None. A traceback that ends in
    a module's top level (an import, a script's first lines) is init."""
    if functions and functions[-1] == "<module>":
        return "init"
    inner: list[str] = []
    for function in reversed(functions):
        for stage, pattern in _STAGE_OF_FUNCTIONS:
            if pattern.search(function):
                if stage == "training" and _TRAIN_ENTRY.match(function) and _set_up_only(inner):
                    return "init"  # a script's train() still building its model, data or plugin
                return stage
        inner.append(function)
    if any(_RUNNING_MODEL.search(f) for f in functions):
        return "training"  # the model ran, or a batch was fetched, in no named stage: the training loop
    if any(_SETTING_UP.search(f) for f in functions):
        return "init"  # an object under construction, a model being parallelized, and no step ran
    return None


def names_a_stage(functions: list[str]) -> bool:
    """Whether a traceback's functions name a stage (a training step, an evaluation, a save, a load), where
    stage_of_frames' 'training' may come only from a model that ran (its forward, a batch fetched), which happens in
    training and evaluation alike."""
    return any(pattern.search(f) for f in functions for _, pattern in _STAGE_OF_FUNCTIONS)


def _set_up_only(functions: list[str]) -> bool:
    """Frames that construct or set something up and run no model."""
    return any(_SETTING_UP.search(f) for f in functions) and not any(_RUNNING_MODEL.search(f) for f in functions)


# a script's whole-run entry point, which builds everything before its loop: dev:colossalai-6202 (train ->
# MoeHybridParallelPlugin.__init__), dev:yet-another-efficientdet-pytorch-72 (train -> CocoDataset.__init__); HF
# Trainer's _inner_training_loop, which prepares the model and optimizer (accelerator.prepare, deepspeed_init) before
# its first step (dev:deepspeed-6525)
_TRAIN_ENTRY = re.compile(r"^(?:train|run_training|_inner_training_loop|fit)$")
_RUNNING_MODEL = re.compile(r"^(?:forward|backward|__next__|_next_data|_worker_loop)$")
# a constructor or a setup function with no stage named inside it: dev:transformers-25988 (Trainer.__init__ ->
# create_accelerator_and_postprocess), dev:torchtitan-2184 (Trainer.__init__ -> parallelize_llama)
# and a loader run before the loop (dev:pytorch-146157, train -> checkpointer.load_from_path -> dcp.load); the
# broadcast of rank 0's weights as DDP or FSDP wraps a model (torch.distributed.utils._sync_params_and_buffers, from
# DDP's _sync_module_states and FSDP's _init_utils._sync_module_params_and_buffers; incident
# raytrain-workerfiles-nccl-internal-2node, under Ray Train's prepare_model); the command line and config being
# parsed (argparse's parse_args, HfArgumentParser's parse_args_into_dataclasses, LLaMA-Factory's get_train_args raising
# on a launch it refuses, dev:llamafactory-6268)
_SETTING_UP = re.compile(r"^(?:__init__|__post_init__|_?setup\w*|configure_\w+|parallelize\w*|_?build_\w+|"
                         r"create_\w+|_?init_\w+|prepare|_?load_\w+|_sync_(?:module_)?params_and_buffers|"
                         r"_sync_module_states|_?parse_\w*args\w*|get_\w*args)$")

# What a line's words say the job was doing, for logs without iteration lines or a traceback's frames (a partial
# paste, a Ray actor's output). Checkpoint and eval first: they happen inside training. Written for the phrasing of
# dev:verl-2950 (ray::WorkerDict.actor_rollout_generate_sequences), dev:noisyrollout-7 (vllm sleep mode between
# rollouts), dev:simplerl-reason-19 (torch.save's PytorchStreamWriter), and the documented output of torch.distributed
# (init_process_group), transformers (Loading checkpoint shards, from_pretrained) and tqdm.
_STAGE_OF_WORDS: list[tuple[str, re.Pattern[str]]] = [
    # what a process prints as it exits: PyTorch's warning that the process group was never destroyed
    # (dev:ms-swift-5109 'destroy_process_group() was not called before program exit'; torch 2.4+'s 'process group
    # has NOT been destroyed before we destruct ProcessGroupNCCL'), CPython's finalization
    ("shutdown", re.compile(r"destroy_process_group\(\) was not called before program exit|"
                            r"process group has NOT been destroyed before|\bPy_FinalizeEx\b")),
    # (accelerate's Accelerator.save_state: 'Saving current state to output_dir/checkpoint-6928', 'Saving DeepSpeed
    # Model and Optimizer', dev:videox-fun-89)
    ("checkpoint", re.compile(r"(?i)sav(?:e|ing)[_ ](?:the )?(?:model[_ ])?(?:checkpoint|ckpt|state|pretrained)|"
                              r"Saving current state to|Saving DeepSpeed Model|"
                              # (TensorFlow's Saver: 'Error writing (tmp) checkpoint file', dev:deepspeech-374)
                              r"save_checkpoint|torch\.save\b|checkpoint.{0,20}sav(?:e|ing)|writ(?:e|ing).{0,30}checkpoint|"
                              r"PytorchStreamWriter|save_pretrained|save_model\b|"
                              # latent-diffusion's melk() (dev:lambdalabsml-examples-41; its marker above)
                              r"Summoning checkpoint|"
                              # accelerate's save_state under FSDP ('Saving FSDP model', dev:accelerate-2000);
                              # safetensors refusing shared tensors ('The weights trying to be saved contained shared
                              # tensors', dev:phi3-vision-finetune-15); ENOTEMPTY as a checkpoint directory is renamed
                              # into place or an old one removed while another rank writes (dev:ms-swift-3031,
                              # dev:mm-eureka-v0-8, dev:trl-2928, dev:speechbrain-2250)
                              r"Saving FSDP (?:model|optimizer)|weights trying to be saved|"
                              r"\[Errno 39\] Directory not empty")),
    # (pydantic's "1 validation error for DeepSpeedZeroConfig" is a config check, dev:deepspeed-6525; nccl-tests'
    # echo of its arguments "... iters: 20 validation: 1" a flag, dev:nccl-473)
    # (mmcv's ProgressBar, which its EvalHook's single_gpu_test prints: '[>>>>   ] 6/15, 0.6 task/s, elapsed: 10s,
    # ETA:    15s', dev:mmdetection-9759, dev:solo-179; Lightning's validation sanity check 'Sanity Checking
    # DataLoader 0:', dev:mlcommons-training-results-v4.0-8)
    ("eval", re.compile(r"(?i)\bevaluat(?:e|ion|ing)\b|\bvalidation\b(?! errors? for)(?!: \d)|\beval(?:_step|_loop)?\b|_validate\b|\bval_\w+|"
                        r"\d task/s, elapsed: |\bSanity Checking\b|\bmAP50\b")),
    # (not a word of a hyphenated name: a Kubernetes namespace 'llm-train/titan-llama8b-master-0', incident
    # k8s-events-errimagepull-torchtitan-4node; fairseq's 'fairseq-train' entry point, a 'trainer-2:' role prefix,
    # the SageMaker 'sagemaker-training-toolkit', on dev)
    ("training", re.compile(r"(?i)(?<![\w.]-)\btrain(?:ing|er|_step|_batch|_loop)?\b(?!-\w)|fit_loop|"
                            r"optimizer\.step|\bbackward\b|"
                            r"rollout|generate_sequences|log_probs?\b|compute_(?:log_prob|ref|values|advantage)|"
                            r"update_(?:actor|policy|critic|weights?)|sleep mode|wake up|\bepoch\b|\bppo\b|\bgrpo\b|"
                            r"\bloss\b|tokens?/s|samples?/s|Skipping step|OVERFLOW!|autocast|"
                            # a compute kernel that failed as the model ran: cuDNN's and cuBLAS's status codes
                            # (dev:freezed-1), a Triton kernel compiled at its first call (dev:llamafactory-5784) or
                            # out of shared memory (dev:mamba-387), FlashAttention's checks (dev:flash-attention-775)
                            r"CUDNN_STATUS_[A-Z_]+|CUBLAS_STATUS_[A-Z_]+|triton\.compiler|OutOfResources|"
                            # torch.compile's graph compiled at the first call of the model (dev:nnunet-2349
                            # 'torch._dynamo.exc.BackendCompilerFailed'), a kernel's backward op that has no
                            # implementation for the inputs (xformers' 'No operator found for
                            # `memory_efficient_attention_backward`', dev:controlnet-218)
                            r"FlashAttention|torch\._dynamo|BackendCompilerFailed|torch\._inductor|\w_backward\b")),
    # (a checkpoint loaded to resume: 'Loading checkpoint: ./checkpoints/MACE_run-1_epoch-7.pt', dev:mace-1348;
    # DeepSpeed's '[Torch] Loading checkpoint from /home/...', dev:glm-136; JIT-built kernels before the first step:
    # torch.utils.cpp_extension's 'Building extension module X...', dev:modelscope-134, Megatron's '> compiling and
    # loading fused kernels ...', dev:megatron-lm-1050)
    # (argparse rejecting the command line before anything ran: 'train_adgen.py: error: unrecognized arguments:
    # --local_rank=2', dev:cpt-65)
    ("init", re.compile(r"(?i)from_pretrained|load_state_dict|Loading checkpoint\b|init_process_group|"
                        r"error: unrecognized arguments:|error: the following arguments are required:|"
                        r"Building extension module|Loading extension module|compiling and loading fused kernels|"
                        r"initializ(?:e|ing)|\bimport\b|ModuleNotFoundError|ImportError|build(?:ing)?[_ ]model|"
                        r"rendezvous|TCPStore|\bsetup\b|Downloading|loading (?:the )?(?:model|weights|dataset)|"
                        # NCCL's communicator setup (ncclCommInitRank ... Init COMPLETE, dev:deepspeed-2931), datasets
                        # being built
                        # (dev:open-sora-663 'Building dataset...')
                        r"ncclCommInitRank|Init COMPLETE|NCCL INFO Bootstrap|Connected all (?:rings|trees)|"
                        # NCCL_DEBUG's error trail names its source file: init.cc and bootstrap.cc are communicator
                        # setup ("INFO init.cc:422 -> 2", "bootstrap.cc:169 -> 2", dev:horovod-210)
                        r"\b(?:init|bootstrap)\.cc?u?:\d+|"
                        # its WARN names the function and line it came from: a set-up function's
                        # ("nccl_net_ofi_rdma_init:7978 NCCL WARN NET/OFI ...", dev:aws-ofi-nccl-1020)
                        r"\b\w+_init:\d+ NCCL\b|"
                        # a GPU index that is not there (cudaErrorInvalidDevice, at set_device: dev:torchtitan-423,
                        # dev:caffe-ssd-27), a container that did not start (runc's 'OCI runtime create failed',
                        # nvidia-container-cli's hook: dev:nvidia-docker-849)
                        r"invalid device ordinal|OCI runtime create failed|nvidia-container-cli|"
                        r"Building (?:the )?(?:train(?:ing)? )?dataset|"
                        # the model's parameters broadcast from rank 0 before the first update (rsl_rl's multi-GPU
                        # runner under Isaac Lab: 'Synchronizing parameters for rank 0...', dev:leggedlab-44,
                        # dev:tienkung-lab-56)
                        r"Synchroniz(?:e|ing) parameters\b|"
                        # HF datasets preparing the training data (dev:llamafactory-412)
                        r"load_dataset|_prepare_split|datasets/builder\.py|"
                        # the NVIDIA driver's words that a GPU did not come up (open-gpu-kernel-modules): its probe
                        # routine's 'The NVIDIA GPU 0000:b3:00.0 (PCI ID: 10de:26b5) installed in this system has /
                        # fallen off the bus and is not responding to commands.', 'RmInitAdapter failed!',
                        # 'rm_init_adapter failed', 'The NVIDIA probe routine failed for 1 device(s).', a GSP timeout
                        # waiting for GSP_INIT_DONE
                        r"installed in this system has\b.{0,40}fallen off the bus|RmInitAdapter failed|"
                        r"rm_init_adapter failed|probe routine failed|GSP_INIT_DONE")),
]


# a file path's words name where code lives, not what the job did ('/root/qwen3-grpo/.venv/...' in dev:verifiers-96's
# ImportError, '/torchtitan/train.py' in an __init__ frame of dev:torchtitan-2184)
_PATH = re.compile(r"""File "[^"]*"|(?:~|\.{1,2})?/[^\s"':,]+|\b[\w.-]+(?:/[\w.-]+)+\.(?:py|pyx|so|cc|cpp|cu|h)\b""")


# ProcessGroupNCCL's timeout names the collective's sequence number: one of the first few is setup (dev:vllm-1846,
# WorkNCCL(SeqNum=1, ...)), past them the job was training (dev:basicsr-737, WorkNCCL(SeqNum=808, OpType=ALLREDUCE));
# a weaker clue than what the lines around it say (a save started before the timeout, dev:videox-fun-89)
_COLLECTIVE_SEQ = re.compile(r"WorkNCCL\(SeqNum=(\d+)")


def stage_of_collective(text: str) -> str | None:
    """The stage a watchdog timeout's sequence number suggests, or None."""
    m = _COLLECTIVE_SEQ.search(text)
    return None if m is None else "init" if int(m.group(1)) < 10 else "training" if len(m.group(1)) >= 3 else None


# a trainer being constructed is the job setting up, though the word says train ('trainer = Trainer(' under Lightning's
# argument check, 'Trainer.__init__() got an unexpected keyword argument', dev:genie-1; SFTTrainer's, dev:unsloth-2010;
# transformers' Trainer under trl's, dev:medicalgpt-444; dev:optuna-3978)
_TRAINER_BUILT = re.compile(r"\b\w*Trainer(?:\.__init__\(|\()")


def stage_of_words(text: str) -> str | None:
    """The stage a line's words name (checkpoint, eval, training, init), or None. File paths are not words, nor is a
    launcher's prefix (torchx's 'trainer/0 [1]:' names a role)."""
    prefix = _LAUNCHER_PREFIX.match(text)
    text = _PATH.sub(" ", text[prefix.end():] if prefix else text)
    if _TRAINER_BUILT.search(text):
        return "init"
    for stage, pattern in _STAGE_OF_WORDS:
        if pattern.search(text):
            return stage
    return None


# torch.distributed.elastic's failure summary, one field a line (its documented ChildFailedError output):
#   Root Cause (first observed failure):
#   [0]:
#     time      : 2023-06-05_17:57:46
#     host      : gpu-7
#     rank      : 0 (local_rank: 0)
#     exitcode  : -9 (pid: 39886)
#     error_file: <N/A>
#     traceback : Signal 9 (SIGKILL) received by PID 39886
# (dev:chatglm-efficient-tuning-75, dev:fambench-103)
_SUMMARY_FIELD = re.compile(r"^\s*(host|rank|exitcode|traceback)\s*:\s*(.*?)\s*$")
_SUMMARY_RANK = re.compile(r"^(\d+)(?:\s*\(local_rank:\s*(\d+)\))?")
_SUMMARY_EXIT = re.compile(r"^(-?\d+)")
_SUMMARY_SIGNAL = re.compile(r"^Signal (\d+) \((SIG\w+)\)")


@dataclass(slots=True)
class LauncherFailure:
    """The failed rank as the launcher's summary names it: where, which rank, how it ended."""

    line: int  # the summary's first field line
    host: str | None = None
    rank: int | None = None
    local_rank: int | None = None
    exitcode: int | None = None
    signal: str | None = None  # "SIGKILL" when the summary says the rank was killed by a signal

    def describe(self) -> str:
        who = f"rank {self.rank}" if self.rank is not None else "a rank"
        if self.local_rank is not None:
            who += f" (local rank {self.local_rank})"
        if self.host:
            who += f" on {self.host}"
        how = f"was killed by {self.signal}" if self.signal else (
            f"exited with code {self.exitcode}" if self.exitcode is not None else "failed")
        return f"{who} {how}"


# Open MPI's one-line report of the first rank to die: "mpirun noticed that process rank 1 with PID 39 on node
# mpi-test-2-mpijob-worker-1 exited on signal 9 (Killed)." (dev:mpi-operator-90, dev:lanegcn-2)
_MPIRUN_FAILED = re.compile(r"noticed that process rank (\d+) with PID \d+ on node (\S+?)\.? exited on signal (\d+)")


def mpirun_failure(message: str, line: int) -> LauncherFailure | None:
    """The failed rank as mpirun's one-line report names it."""
    m = _MPIRUN_FAILED.search(message)
    if m is None:
        return None
    number = int(m.group(3))
    name = signal.Signals(number).name if number in {s.value for s in signal.Signals} else f"signal {number}"
    return LauncherFailure(line=line, host=m.group(2), rank=int(m.group(1)), signal=name)


def read_launcher_field(failure: LauncherFailure, message: str) -> None:
    """Fill in one field of torchrun's root-cause block from one of its lines; other lines are left alone."""
    m = _SUMMARY_FIELD.match(message)
    if m is None:
        return
    key, value = m.group(1), m.group(2)
    if key == "host" and value and failure.host is None:
        failure.host = value.split()[0]
    elif key == "rank" and (r := _SUMMARY_RANK.match(value)) and failure.rank is None:
        failure.rank = int(r.group(1))
        failure.local_rank = int(r.group(2)) if r.group(2) is not None else None
    elif key == "exitcode" and (e := _SUMMARY_EXIT.match(value)) and failure.exitcode is None:
        failure.exitcode = int(e.group(1))
    elif key == "traceback" and (g := _SUMMARY_SIGNAL.match(value)):
        failure.signal = g.group(2)


# Megatron's StragglerDetector report: the fastest and slowest rank's round-trip time per iteration (and their power,
# temperature, utilization, clock): "| MnRtt/Rnk: 4080.4ms/3 | MxRtt/Rnk: 5890.1ms/19 | ... | MnClk/Rnk: 1005MHz/19"
_STRAGGLER_REPORT = re.compile(r"MnRtt/Rnk:\s*([\d.]+)\s*ms/(\d+)\s*\|\s*MxRtt/Rnk:\s*([\d.]+)\s*ms/(\d+)")


@dataclass(slots=True, frozen=True)
class StragglerReport:
    """The fastest and the slowest rank of one straggler-detector report, by round-trip time."""

    min_ms: float
    min_rank: int
    max_ms: float
    max_rank: int


def read_straggler_report(message: str) -> StragglerReport | None:
    m = _STRAGGLER_REPORT.search(message)
    if m is None:
        return None
    return StragglerReport(float(m.group(1)), int(m.group(2)), float(m.group(3)), int(m.group(4)))


# a file path of two parts or more, as a checkpoint's name carries its step and metrics ("/ckpt/epoch=0-step=2000.ckpt",
# NeMo's "megatron_gpt--val_loss=2.31-step=2000-consumed_samples=1024000.0.ckpt"): its words are no progress (unlike
# _PATH's, a path here starts after a space and has two parts, so a count as "100/1000" is none)
_PATH_WORDS = re.compile(r"(?<![\w.])(?:~|\.{1,2})?/[^\s\"'/]+(?:/[^\s\"'/]*)+")


def _without_paths(message: str) -> str:
    """The message with its paths blanked (the same length, so offsets into it hold)."""
    return _PATH_WORDS.sub(lambda m: " " * len(m.group(0)), message) if "/" in message else message


def marker_of(message: str) -> Marker | None:
    """The framework marker a message is: a progress (iteration) line, the start or end of a stage, or a
    straggler-detector report."""
    if _STRAGGLER_REPORT.search(message):
        return "straggler_report"
    for marker, pattern in _STAGE_RULES:
        if pattern.search(message):
            return marker
    if _HF_METRICS.match(message):
        return "iteration"
    message = _without_paths(message)
    m = _ITERATION.search(message)
    if m and (m.group(2) or m.group(4) or m.group(8) or m.group(10) or m.group(12) or m.group(13) or m.group(17)
              or _PROGRESS_WORDS.search(message)):
        return "iteration"  # a step with its total is progress by itself: OLMo's "[step=50/65355,epoch=0]" (dev:olmo-788)
    if _LOSS.search(message):  # a loss printed with no step, or by epoch: "epoch: 3451 loss: nan" (dev:gradnorm-tf-17)
        return "iteration"
    return None


@dataclass(slots=True, frozen=True)
class Progress:
    """The numbers on one progress line."""

    iteration: int | None
    loss: float | None
    grad_norm: float | None
    step_time_s: float | None
    nan_iterations: int | None


def _number(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        return None


_PLAIN_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_FIELDS = ("iteration", "loss", "grad_norm", "step_time_s", "nan_iterations")


def _message_at(line: str) -> tuple[int, str]:
    """Where a progress line's message starts in it, and the message: the last segment of a bar redrawn with carriage
    returns (what the reader saw last), past its launcher prefix and header (Ray's "(RayTrainWorker pid=2211,
    ip=10.0.0.10) ", kubectl's RFC3339 time), which the bar's pattern must not be preceded by. The start is -1 where
    the message is not the line's own text: its colours taken out (torchtitan colours each of its metrics), a rich
    panel's borders."""
    start = line.rfind("\r", 0, len(line.rstrip())) + 1
    segment = line[start:]
    message = split_header(segment).message
    at = segment.find(message) if message else -1
    return (start + at if at >= 0 else -1), message


def _field_spans(line: str) -> tuple[dict[str, tuple[int, str, float]], bool]:
    """Each progress field found: (where its number starts in the line, its text, the factor to seconds or 1); and
    whether those starts are offsets into the line (not where its message is not the line's own text)."""
    out: dict[str, tuple[int, str, float]] = {}
    base, message = _message_at(line)
    in_line, base = base >= 0, max(base, 0)
    message = _without_paths(message)
    m = _ITERATION.search(message)
    if m:
        g = next(i for i in (1, 4, 6, 7, 9, 11, 13, 14, 15, 17) if m.group(i) is not None)
        out["iteration"] = (base + m.start(g), m.group(g), 1.0)
        if (job_wide := _GLOBAL_STEP.search(message, m.end())) is not None:  # the count across epochs, over the epoch's
            out["iteration"] = (base + job_wide.start(1), job_wide.group(1), 1.0)
    for name, pattern in (("loss", _LOSS), ("grad_norm", _GRAD_NORM), ("nan_iterations", _NAN_COUNT)):
        m = pattern.search(message)
        if m:
            out[name] = (base + m.start(1), m.group(1), 1.0)
    m = _STEP_TIME.search(message)
    if m:
        unit = m.group(1) or m.group(2) or m.group(4) or ("ms" if "(ms)" in m.group(0) else "s")
        out["step_time_s"] = (base + m.start(3), m.group(3), 0.001 if unit == "ms" else 1.0)
    elif "iteration" in out and (m := _RATE.search(message)):  # a rate in steps a second: its inverse, factor -1
        out["step_time_s"] = (base + m.start(1), m.group(1), -1.0 if m.group(2) == "it/s" else 1.0)
    elif "iteration" in out and (m := _SAMPLE_RATE.search(message)):
        out["step_time_s"] = (base + m.start(1), m.group(1), -1.0)
    return out, in_line


def _scaled(value: float, factor: float) -> float:
    """A progress field's number in its unit: times its factor, or for a rate (factor -1) its inverse."""
    if factor >= 0:
        return value * factor
    return -factor / value if value else math.inf


def _progress_of(values: dict[str, float | None]) -> Progress:
    it, nan_count = values.get("iteration"), values.get("nan_iterations")
    return Progress(int(it) if it is not None and not is_bad_number(it) else None, values.get("loss"),
                    values.get("grad_norm"), values.get("step_time_s"),
                    int(nan_count) if nan_count is not None and not is_bad_number(nan_count) else None)


def read_progress(line: str) -> Progress:
    """Iteration, loss, grad norm and step time of a progress line (any of them None when the line lacks it)."""
    values = {}
    for name, (_, text, scale) in _field_spans(line)[0].items():
        value = _number(text)
        values[name] = _scaled(value, scale) if value is not None else None
    return _progress_of(values)


@dataclass(slots=True, frozen=True)
class ProgressLayout:
    """Where each field's number sits in a progress line, in bytes. Lines of one shape (equal but for their digits)
    have their numbers at the same offsets, so reading the next one is a few slices, not five searches."""

    spans: tuple[tuple[int, int, float], ...]  # per field of _FIELDS: (start, end, factor); (0, 0, 0) when absent


def progress_layout(raw: bytes) -> ProgressLayout | None:
    """The layout of a progress line, or None when a field is not a plain number (nan, inf): read those in full."""
    text = raw.decode("latin-1")  # one character per byte, so offsets are byte offsets
    found, in_line = _field_spans(text)
    if not in_line:
        return None  # no offsets into the line to keep
    spans = []
    for name in _FIELDS:
        if name not in found:
            spans.append((0, 0, 0.0))
            continue
        start, value, scale = found[name]
        m = _PLAIN_NUMBER.match(text, start)
        if m is None or m.group(0) != value:
            return None
        spans.append((start, m.end(), scale))
    return ProgressLayout(tuple(spans))


def read_progress_with(layout: ProgressLayout, raw: bytes) -> Progress:
    values: list[float | None] = []
    for start, end, scale in layout.spans:
        values.append(_scaled(float(raw[start:end]), scale) if end else None)
    it, loss, grad, step, nan_count = values
    return Progress(int(it) if it is not None else None, loss, grad, step,
                    int(nan_count) if nan_count is not None else None)


# a tqdm bar's counts and times, "| 0/1000 [00:00<?, ?it/s]"
_BAR_END = re.compile(r"\|\s*\d+/\d+ \[[^\]]*\]")
# a traceback's header, or JAX's note before its filtered one ('jax.errors.SimplifiedTraceback: For simplicity, JAX has
# removed its internal frames from the traceback of the following exception.', dev:easydel-78): no error of their own
_TRACEBACK_WORDS = re.compile(r"Traceback \(most recent call last\):|jax\.errors\.SimplifiedTraceback: .*")


def level_after_bar(message: str) -> Level | None:
    """The level of what another print left on a progress bar's line after its last bar, before the bar's newline: its
    own header's when it has one (glog's 'F' in '6.66s/it]2022-06-24 18:11:19.419635: F tensorflow/core/tpu/kernels/
    tpu_program_group.cc:86] Check failed: ...', dev:accelerate-471), else its words' ('it/s]r0 | MPI_Allreduce
    returned error code 15: ... - aborting', dev:netket-1494); not a traceback's header fused there, which the lines
    after it explain (dev:ttt-2, dev:mle-llama-2)."""
    ends = [m.end() for m in _BAR_END.finditer(message)]
    if not ends:
        return None
    after = split_header(_TRACEBACK_WORDS.sub("", message[ends[-1]:]))
    levels = [level for level in (after.level, content_level(after.message)) if level is not None]
    return max(levels, key=LEVEL_RANK.__getitem__, default=None)


def finished_bar(message: str) -> bool:
    """A tqdm bar at its total ("Train: 100%|##########| 742/742 [1:50:01<00:00, 8.90s/it]"): its loop is over."""
    m = _ITERATION.search(message)
    return m is not None and (m.group(4) is not None and m.group(4) == m.group(5)
                              or m.group(15) is not None and m.group(15) == m.group(16))


def data_wait(message: str) -> tuple[float, float] | None:
    """(seconds the step waited on data, seconds the whole step took) of a progress line that prints both."""
    data, step = _DATA_TIME.search(message), _BATCH_TIME.search(message)
    if data is None or step is None:
        return None
    values = (_number(next(g for g in data.groups() if g)), _number(next(g for g in step.groups() if g)))
    return (values[0], values[1]) if values[0] is not None and values[1] else None


def data_bound(message: str) -> tuple[float, float] | None:
    """The progress line's data wait (as data_wait) when its step spent DATA_BOUND_SHARE of its time or more on it."""
    wait = data_wait(message)
    return wait if wait is not None and wait[0] >= DATA_BOUND_SHARE * wait[1] else None


def is_bad_number(value: float | None) -> bool:
    return value is not None and (math.isnan(value) or math.isinf(value))


def mask(message: str, extra: re.Pattern[str] | None = None) -> str:
    """The message with its variable parts (numbers, hex and pointers, IPs and ports, PCI ids, paths, host names,
    shapes, ids) replaced by `<*>`, and runs of spaces made one. `extra` masks job-specific names (the hosts)."""
    if extra is not None:
        message = extra.sub(WILDCARD, message)
    if "across cluster]" in message:
        message = _RAY_REPEATED.sub("", message)
    message = _HEX_TOKEN.sub(WILDCARD, message)
    message = _COLON_IDS.sub(WILDCARD, message)
    message = _PATH_TOKEN.sub(WILDCARD, message)
    if ":" in message:
        message = _HOST_PORT.sub(WILDCARD, message)
        message = _DATE_WORDS.sub(WILDCARD, message)
    message = _DIGIT_TOKEN.sub(WILDCARD, message)
    if "<*>," in message:
        message = _LIST_OF_VARS.sub(r"\1<*>\2", message)
    return _SPACES.sub(" ", message).strip()


def names_pattern(names: list[str]) -> re.Pattern[str] | None:
    """A pattern matching any of these names as a whole token (for masking host names that hold no digit)."""
    plain = sorted({n for n in names if n and not any(c.isdigit() for c in n)}, key=len, reverse=True)
    if not plain:
        return None
    return re.compile(r"(?<![\w.-])(?:" + "|".join(re.escape(n) for n in plain) + r")(?![\w-])")
