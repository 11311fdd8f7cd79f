#!/usr/bin/env python3
"""Writes the malformed-input corpus (tests/corpus/cases/ and cases.tsv) from the project's own files.

Every case is input clustersim must refuse: exit 2, one `file:line:col: message` line, nothing written.
Deterministic (no randomness): rerun it after adding a mutation and commit what it writes.
Usage: tests/corpus/make_corpus.py [ROOT]
"""
import json
import os
import re
import shutil
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "tests", "corpus", "cases")
cases = []  # (name, command template); {OUT} is the output folder the runner checks stays absent
shutil.rmtree(OUT, ignore_errors=True)
os.makedirs(OUT)


def write(name, text, binary=False):
    path = os.path.join(OUT, name)
    with open(path, "wb" if binary else "w") as f:
        f.write(text)
    return "tests/corpus/cases/" + name


def add(name, command):
    cases.append((name, command))


def read(rel):
    with open(os.path.join(ROOT, rel)) as f:
        return f.read()


def run(path, extra=""):
    return f"run {path} --backend analytical --out {{OUT}}{extra}"


# --- Scenario files: every scenario, mutated in ways that are never valid. ---
scenario_files = sorted(
    os.path.join(d, f)
    for d in ("scenarios", "scenarios/reference")
    for f in os.listdir(os.path.join(ROOT, d))
    if f.endswith(".yaml"))
file_mutations = {
    "unknown-key": lambda t: t + "bogus_key_xyz: 1\n",
    "duplicate-name": lambda t: t + "name: again\n",
    "second-document": lambda t: t + "---\nname: other\n",
    "syntax-error": lambda t: t + "cluster: {nodes: [1, 2\n",
    "name-escapes": lambda t: re.sub(r"(?m)^name: .*$", "name: ../escape", t, count=1),
    "override-tag": lambda t: re.sub(r"(?m)^name: (.*)$", r"name: !cs-set-7 \1", t, count=1),
    "unknown-device": lambda t: re.sub(r"(?m)^(\s*)device: .*$", r"\1device: tpu-v9", t, count=1)
    if re.search(r"(?m)^\s*device: ", t) else t + "cluster: {}\n",
    "tab-indent": lambda t: t.replace("\n  ", "\n\t", 1),
    "not-a-map": lambda t: "- " + t.replace("\n", "\n  "),
    "truncated-flow": lambda t: t + "policies: {sync: ring-allreduce\n",
}
for rel in scenario_files:
    base = os.path.splitext(os.path.basename(rel))[0]
    text = read(rel)
    for kind, mutate in file_mutations.items():
        name = f"scenario-{base}-{kind}.yaml"
        add(name, run(write(name, mutate(text))))

# --- --set overrides on a few scenarios of each kind. ---
overrides = {
    "scenarios/quickstart.yaml": [
        "prices.gpu_hour=[{device: tpu-v9, usd: 1}]", "prices.gpu_hour=[{device: h100-sxm5, usd: 0}]",
        "prices.gpu_hour=[{device: h100-sxm5}]", "prices.gpu_hour=h100-sxm5", "prices.nic_hour=-1",
        "prices.switch_port_hour=nan", "prices.fabric=1", "workload.model={NULLrs: 4, hidden: 512}: 512}",
        "workload.model={layers: 4, layers: 5}",
        "cluster.nodes=0", "cluster.nodes=-1", "cluster.nodes=abc", "cluster.nodes=1e9", "cluster.nodes=1000000",
        "cluster.gpus_per_node=65536", "cluster.gpus_per_node=3", "cluster.gpus=7", "workload.model.hidden=0",
        "workload.model.hidden=1073741824", "workload.model.layers=2000000000", "workload.model.layers=0",
        "workload.model.heads=3", "workload.model.seq=-4", "workload.model.vocab=1.5", "workload.model.dtype=fp4",
        "workload.batch.global=7", "workload.batch.micro=0", "workload.batch.micro=1000000",
        "workload.parallel.dp=3", "workload.parallel.tp=16", "workload.parallel.pp=1048577",
        "workload.parallel.zero=4", "workload.parallel.vpp=0", "workload.parallel.ep=2",
        "workload.gradient_bucket=1e308GiB", "workload.gradient_bucket=-1MiB", "workload.gradient_bucket=0",
        "workload.gradient_bucket=12 parsecs", "workload.iterations=0", "workload.iterations=1000000",
        "workload.memory_reserve=1", "cluster.network.latency=1e308h", "cluster.network.latency=-1us",
        "cluster.network.nic_bandwidth=0", "cluster.network.nic_bandwidth=abc", "cluster.network.nic_bandwidth=400Gib/s",
        "cluster.network.nic_efficiency=2", "cluster.network.kind=torus", "cluster.network.levels=[]",
        "cluster.network.levels[9].radix=4", "cluster.network.levels[x]=1", "cluster.intra_node.kind=pcie5",
        "cluster.intra_node.bandwidth=-1GB/s", "cluster.device=tpu-v9", "cluster.profile=/dev/zero",
        "cluster.profile=/nonexistent.json", "cluster.profile=scenarios", "seed=-5", "seed=abc", "backend=foo",
        "name=", "name=a/b", "name=..", "workload.kind=spark-streaming", "policies.sync=magic",
        "policies.pipeline=zigzag", "workload.framework=pytorch-lightning", "workload.framework.dropout=1.5",
        "workload.model.preset=gpt-9", "workload.model.recompute=sometimes", "cluster=5", "workload=[1, 2]",
        "cluster.nodes.x=1", "cluster.nodes", "=3", "cluster..nodes=2", "workload.model.graph=[{name: a}]",
    ],
    "scenarios/reference/megatron-7.5b.yaml": [
        "workload.parallel.tp=3", "workload.parallel.pp=7", "workload.parallel.stage_layers=[1, 2]",
        "workload.parallel.sequence_parallel=maybe", "workload.parallel.vpp=2", "workload.model.kv_heads=5",
        "workload.framework.overlap=sometimes", "workload.batch.global=1000001",
    ],
    "scenarios/reference/nccl-h100-ring.yaml": [
        "workload.collective.factor=1.0000001", "workload.collective.factor=1", "workload.collective.op=scan",
        "workload.collective.algorithm=butterfly", "workload.collective.min_bytes=16GiB",
        "workload.collective.max_bytes=0", "workload.collective.ranks=-1", "workload.collective.pricing=guess",
        "cluster.intra_node.nvls=yes please", "workload.collective.algorithm=nvls-tree",
        "workload.collective.algorithm=nvls", "cluster.network.routing=random", "cluster.network.ecmp_seed=-1",
    ],
    "scenarios/fused-kernels-graph.yaml": [
        "workload.model.graph[0].kernel={family: gemm-chain, m: 64}", "workload.model.graph[0].kernel.family=conv",
        "workload.model.graph[1].kernel.element=fp5", "workload.model.graph[1].kernel.block=0.5",
        "workload.model.graph[0].kernel.p=-1", "workload.model.graph[0].kernel=[1]",
        "workload.model.graph[0].kernel.m=1e300", "workload.model.graph[1].kernel.source=fp8",
        "workload.model.graph[0].flops=1e9",
        "cluster.device=a100-sxm4-80gb", "workload.model.graph[0].kernel.batch={a: 1}",
    ],
    "scenarios/reference/mapreduce-hit-paper.yaml": [
        "cluster.racks=-1", "cluster.hosts_per_rack=0", "cluster.racks=100000000", "cluster.host.cores=-2",
        "cluster.nodes=4", "cluster.network.kind=fat-tree", "cluster.network.oversubscription=[0.5]",
        "workload.mapreduce.synthetic.jobs=-1", "workload.mapreduce.replication=0",
        "workload.mapreduce.map_rate=0", "workload.mapreduce.trace.path=/nonexistent.tsv",
        "workload.mapreduce.trace.path=/dev/zero", "policies.mapreduce=random",
        "policies.mapreduce={name: capacity, bogus: 1}", "cluster.network.background[0].load=2",
        "cluster.network.background[0].tier=moon", "cluster.network.model=lv08",
        "cluster.network.routing=ecmp",
    ],
    "scenarios/stragglers.yaml": [
        "cluster.stragglers.random.probability=-0.1", "cluster.stragglers.random.probability=1.01",
        "cluster.stragglers.random.probability=nan", "cluster.stragglers.random.duration=-1s",
        "cluster.stragglers.random.distribution=pareto", "cluster.stragglers.slow=[{factor: 0.5}]",
        "cluster.stragglers.slow=[{devices: [0], factor: 0}]", "cluster.stragglers.slow=[{devices: [0], factor: -2}]",
        "cluster.stragglers.slow=[{devices: [-1], factor: 0.5}]", "cluster.stragglers.slow=[{nodes: [2], factor: 0.5}]",
        "cluster.stragglers.slow=[{devices: [99], factor: 0.5}]", "cluster.stragglers.slow={devices: [1]}",
        "cluster.stragglers.step_times=/dev/zero", "cluster.stragglers.step_times=/nonexistent.csv",
        "cluster.stragglers.bogus=1", "policies.sync_scheme={name: partial-reduce, group_size: 1}",
        "policies.sync_scheme={name: partial-reduce, group_size: 17}",
        "policies.sync_scheme={name: partial-reduce, wait_time: 0s}",
        "policies.sync_scheme={name: partial-reduce, ssp_bound: -1}",
        "policies.sync_scheme={name: partial-reduce, averaging: median}",
        "policies.sync_scheme={name: ps-ssp, staleness: -1}", "policies.sync_scheme={name: ps-ssp, staleness: 0}",
        "policies.sync_scheme={name: eager-sgd, mode: quorum}", "policies.sync_scheme=gossip",
        "workload.parallel.pp=2", "workload.parallel.dp=17", "workload.steps=0", "workload.steps=1e12",
        "workload.servers=3", "workload.batch.global=100", "workload.target_updates=-1",
    ],
    "scenarios/kineto-replay.yaml": [
        "workload.profiler_trace=/dev/zero", "workload.profiler_trace=/nonexistent.json",
        "workload.from_device=tpu-v9",
        "workload.collectives=sometimes", "workload.ranks=-1", "workload.ranks=3", "workload.bogus=1",
    ],
    "scenarios/chakra-replay.yaml": [
        "workload.execution_trace=/dev/zero", "workload.execution_trace=/nonexistent.et",
        "workload.from_device=tpu-v9", "workload.collectives=sometimes", "workload.ranks=-1", "workload.ranks=9",
        "workload.bogus=1", "workload.ranks=2000000",
    ],
    "scenarios/gpu-jobs-philly.yaml": [
        "workload.trace.arrival_scale=0", "workload.trace.arrival_scale=-1", "workload.trace.limit=-1",
        "workload.trace.start=-1s", "workload.trace.format=slurm", "workload.trace.file=/dev/zero",
        "workload.trace.file=/nonexistent.csv", "workload.trace.file=scenarios", "workload.micro_batch=0",
        "workload.overlap=1.5", "workload.model.dtype=bf16", "policies.cluster=lottery",
        "policies.placement=random", "workload.trace.start=1000days",
    ],
    "scenarios/moe-mixtral.yaml": [
        "workload.model.moe.top_k=9", "workload.model.moe.top_k=0", "workload.model.moe.experts=-8",
        "workload.parallel.ep=3", "workload.parallel.ep=32", "workload.parallel.ep=0", "workload.parallel.etp=3",
        "workload.model.moe.capacity_factor=0", "workload.model.moe.capacity_factor=-1.5",
        "workload.model.moe.capacity_factor=nan", "workload.model.moe.every=0", "workload.model.moe.first_dense=99",
        "workload.model.moe.expert_ffn=3", "workload.model.moe.shared_experts=100", "workload.model.moe.experts=1e9",
        "policies.moe=deepspeed", "policies.moe_routing=random", "policies.moe_routing={name: zipf, skew: -1}",
        "policies.moe_routing={name: zipf, drift: 2}", "policies.moe_routing={name: locality, strength: 1.5}",
        "policies.moe={name: flexmoe, threshold: 0.5}", "policies.moe={name: lsh-moe, compression: 0}",
        "policies.moe={name: mpipemoe, memory_reuse: all}", "policies.moe={name: fastermoe, groups: 0}",
        "policies.moe_routing={name: trace}", "policies.moe_routing={name: trace, file: /nonexistent.csv}",
    ],
}
for scenario, sets in overrides.items():
    base = os.path.splitext(os.path.basename(scenario))[0]
    for i, s in enumerate(sets):
        command = run(scenario, f" --set '{s}'")
        if s.startswith("backend="):  # --backend is a later override and would win
            command = command.replace(" --backend analytical", "")
        add(f"set-{base}-{i:02d}", command)

# --- Command-line flags. ---
for i, flags in enumerate([
        "run scenarios/quickstart.yaml --seed -7 --out {OUT}", "run scenarios/quickstart.yaml --backend '' --out {OUT}",
        "run scenarios/quickstart.yaml --out ''", "run scenarios/quickstart.yaml --max-tasks 0 --out {OUT}",
        "run scenarios/quickstart.yaml --max-tasks 100 --out {OUT}", "run scenarios/quickstart.yaml --replicas some --out {OUT}",
        "run /dev/zero --out {OUT}", "run scenarios --out {OUT}", "run /nonexistent.yaml --out {OUT}",
        "run scenarios/quickstart.yaml --out /etc/passwd", "run scenarios/quickstart.yaml --out /etc/passwd/sub",
        "plan scenarios/reference/megatron-7.5b.yaml --gpus 268435456 --out {OUT}",
        "plan scenarios/reference/megatron-7.5b.yaml --gpus 0 --out {OUT}",
        "plan scenarios/reference/megatron-7.5b.yaml --gpus 12 --out {OUT}",
        "plan scenarios/reference/megatron-7.5b.yaml --gpus 64 --memory-limit lots --out {OUT}",
        "predict --device h100-sxm5 gemm --m 1e308 --n 10 --k 10", "predict --device h100-sxm5 gemm --m 0 --n 1 --k 1",
        "predict --device h100-sxm5 gemm --m nan --n 1 --k 1", "predict --device h100-sxm5 conv --m 1",
        "predict --device tpu-v9 gemm --m 8 --n 8 --k 8", "predict --device h100-sxm5 gemm --m 8 --n 8 --k 8 --dtype fp4",
        "predict --device h100-sxm5 memcpy --bytes 1e400", "trace scenarios", "trace /dev/zero",
        "trace traces/samples/MANIFEST.md", "trace /nonexistent.tsv", "validate /dev/urandom",
        "fit /dev/zero --out {OUT}", "fit /nonexistent.json --out {OUT}",
        "regress --profile /dev/zero --measurements calibrate/measurements/cpu-node.json",
        "sweep scenarios/quickstart.yaml --axis cluster.nodes --out {OUT}",
        "sweep scenarios/quickstart.yaml --axis cluster.nodes=1,,2 --out {OUT}",
        "sweep scenarios/quickstart.yaml --axis a=1 --axis a=2 --out {OUT}",
        "sweep scenarios/quickstart.yaml --axis a=1,2 --axis b=1 --zip --out {OUT}",
        "sweep scenarios/quickstart.yaml --axis a=1,2 --shard 3/2 --out {OUT}",
        "sweep scenarios/quickstart.yaml --axis a=1,2 --shard x --out {OUT}",
        "sweep scenarios/quickstart.yaml --axis a=1,2 --by b --out {OUT}",
        "sweep scenarios/quickstart.yaml --axis a=1,2 --seeds 0 --out {OUT}",
        "sweep scenarios/quickstart.yaml --axis a=1,2 --jobs 0 --out {OUT}",
        "sweep /dev/zero --axis a=1 --out {OUT}",
        "merge scenarios --out {OUT}", "merge /nonexistent --out {OUT}",
        "plot scenarios/quickstart.yaml --x a --y b --out {OUT}/p", "plot /dev/zero --x a --y b --out {OUT}/p",
        "plot traces/samples/MANIFEST.md --x a --y b --out {OUT}/p",
        "plan-capacity scenarios/quickstart.yaml --tokens 1e10 --target 'days<=3' --out {OUT}",
        "plan-capacity scenarios/quickstart.yaml --tokens 1e10 --target 'cost_usd<=-1' --out {OUT}",
        "plan-capacity scenarios/quickstart.yaml --tokens 1e10 --target 'cost_usd<=1' --price h100-sxm5=x --out {OUT}",
        "plan-capacity scenarios/quickstart.yaml --tokens 1e10 --target 'cost_usd<=1' --devices a100-sxm4-80gb --out {OUT}",
        "plan-capacity scenarios/quickstart.yaml --tokens 1e10 --target 'cost_usd<=1' --devices cpu-node --out {OUT}",
        "plan-capacity scenarios/quickstart.yaml --target 'cost_usd<=1' --out {OUT}",
        "plan-capacity scenarios/quickstart.yaml --tokens 0 --target 'cost_usd<=1' --out {OUT}",
        "plan-capacity scenarios/reference/nccl-h100-ring.yaml --tokens 1e10 --target 'cost_usd<=1' --out {OUT}",
        "run scenarios/quickstart.yaml --set workload.tokens=-1 --out {OUT}",
        "run scenarios/quickstart.yaml --set workload.tokens=1e30 --out {OUT}",
        "run scenarios/quickstart.yaml --set 'sweep=[1]' --backend analytical --out {OUT}",
]):
    add(f"flags-{i:02d}", flags)

# --- Profiles and measurements: JSON mutations, run through predict and fit. ---
profile = read("calibrate/profiles/h100-sxm5.json")
profile_json = json.loads(profile)
for i, cut in enumerate(range(40, len(profile), max(1, len(profile) // 12))):
    name = write(f"profile-truncated-{i:02d}.json", profile[:cut])
    add(f"profile-truncated-{i:02d}", f"predict --profile {name} gemm --m 8 --n 8 --k 8")
profile_mutations = {
    "schema": ("schema", "clustersim-profile/9"), "launch-negative": ("launch_overhead_s", -1),
    "launch-string": ("launch_overhead_s", "fast"), "memory-efficiency-big": ("memory_efficiency", 1e308),
    "memory-efficiency-zero": ("memory_efficiency", 0), "device-unknown": ("device", "tpu-v9"),
    "device-number": ("device", 7), "compute-not-map": ("compute_efficiency", [1, 2]),
    "memory-half-negative": ("memory_half_bytes", -5), "gemm-not-map": ("gemm", "tiles"),
    "attention-missing": ("attention", {}), "tables-not-list": ("tables", {"a": 1}),
}
for kind, (key, value) in profile_mutations.items():
    p = dict(profile_json)
    p[key] = value
    name = write(f"profile-{kind}.json", json.dumps(p, indent=1))
    add(f"profile-{kind}", f"predict --profile {name} gemm --m 8 --n 8 --k 8")
for kind, edit in {
    "compute-over-one": lambda p: p["compute_efficiency"].update({"bf16": 1.5}),
    "tile-fraction": lambda p: p["gemm"]["tiles"][0].update({"m": 0.5}),
    "ctas-zero": lambda p: p["gemm"].update({"ctas_per_sm": 0}),
    "k-overhead-negative": lambda p: p["gemm"].update({"k_overhead": -1}),
    "overlap-two": lambda p: p["gemm"].update({"overlap": 2}),
    "table-five-dims": lambda p: p.update({"tables": [{"family": "gemm", "dtype": "bf16", "points": [
        {"shape": [1, 2, 3, 4, 5], "seconds": 1e-5}]}]}),
    "table-mixed-dims": lambda p: p.update({"tables": [{"family": "gemm", "dtype": "bf16", "points": [
        {"shape": [1, 2, 3], "seconds": 1e-5}, {"shape": [1, 2], "seconds": 1e-5}]}]}),
    "table-empty": lambda p: p.update({"tables": [{"family": "gemm", "dtype": "bf16", "points": []}]}),
}.items():
    p = json.loads(profile)
    edit(p)
    name = write(f"profile-{kind}.json", json.dumps(p, indent=1))
    add(f"profile-{kind}", f"predict --profile {name} gemm --m 8 --n 8 --k 8")
name = write("profile-duplicate-key.json", profile.replace('"origin"', '"device": "h100-sxm5", "origin"', 1))
add("profile-duplicate-key", f"predict --profile {name} gemm --m 8 --n 8 --k 8")
name = write("profile-huge-number.json", profile.replace('"launch_overhead_s": ', '"launch_overhead_s": 1e400, "x": ', 1))
add("profile-huge-number", f"predict --profile {name} gemm --m 8 --n 8 --k 8")
name = write("profile-binary.json", bytes(range(256)) * 4, binary=True)
add("profile-binary", f"predict --profile {name} gemm --m 8 --n 8 --k 8")

measurements = read("calibrate/measurements/cpu-node.json")
for i, cut in enumerate(range(30, len(measurements), max(1, len(measurements) // 12))):
    name = write(f"measurements-truncated-{i:02d}.json", measurements[:cut])
    add(f"measurements-truncated-{i:02d}", f"fit {name} --out {{OUT}}/p.json")
m_json = json.loads(measurements)
for kind, edit in {
    "schema": lambda m: m.update({"schema": "x"}), "device-unknown": lambda m: m.update({"device": "tpu-v9"}),
    "no-measurements": lambda m: m.update({"measurements": []}),
    "seconds-zero": lambda m: m["measurements"][0].update({"seconds": 0}),
    "seconds-string": lambda m: m["measurements"][0].update({"seconds": "fast"}),
    "kernel-unknown": lambda m: m["measurements"][0].update({"kernel": "conv"}),
    "arg-negative": lambda m: m["measurements"][0]["args"].update({"m": "-4"}),
    "arg-huge": lambda m: m["measurements"][0]["args"].update({"m": "1e300"}),
    "arg-unknown": lambda m: m["measurements"][0]["args"].update({"q": "4"}),
    "dtype-unknown": lambda m: m["measurements"][0]["args"].update({"dtype": "fp4"}),
    "not-object": lambda m: m.update({"measurements": [[1, 2]]}),
}.items():
    m = json.loads(measurements)
    edit(m)
    name = write(f"measurements-{kind}.json", json.dumps(m, indent=1))
    add(f"measurements-{kind}", f"fit {name} --out {{OUT}}/p.json")
name = write("measurements-duplicate-key.json", measurements.replace('"device"', '"device": "cpu-node", "device"', 1))
add("measurements-duplicate-key", f"fit {name} --out {{OUT}}/p.json")

def scenario_reading(prefix, ext, texts, scenario, old, new_template):
    """One case per text: the text as prefix-NN.ext beside a copy of `scenario` whose `old` becomes new_template."""
    for i, text in enumerate(texts):
        name = f"{prefix}-{i:02d}"
        write(f"{name}.{ext}", text)
        path = write(f"{name}.yaml", read(scenario).replace(old, new_template.format(file=f"{name}.{ext}")))
        add(f"{prefix}-trace-{i:02d}", run(path))


# --- Recorded step-time traces (cluster.stragglers.step_times) with a malformed row. ---
scenario_reading("steps", "csv", [
    "worker,step,seconds\n0,0,0.5\n0,1,fast\n", "0,0,0.5\n0,2,0.5\n", "0,0,-1\n", "0.5,0,1\n", "0;0;1\n",
    "worker,step,seconds\n", "0,0,1e400\n", "2000000,0,1\n", "0,0\n", "0,x,1\n",
], "scenarios/stragglers.yaml", "  stragglers:\n", "  stragglers:\n    step_times: {file}\n")

# --- MoE routing traces with a malformed row. ---
scenario_reading("moe-routing", "csv", [
    "iteration,layer,source_rank,expert,tokens\n0,0,0,1,x\n", "0,0,0,1\n", "0,0,0,1,5,6\n", "0,0,-1,1,5\n",
    "0,0,0.5,1,5\n", "0,0,0,1,1e400\n", "0;0;0;1;5\n", "iteration,layer,source_rank,expert,tokens\n", "",
    "0,0,0,99,5\n", "0,0,0,1,nan\n",
], "scenarios/moe-mixtral.yaml", "  moe_routing: {name: zipf, skew: 1.0, drift: 0.1}\n",
   "  moe_routing: {{name: trace, file: {file}}}\n")

# --- GPU job traces with a malformed value. ---
scenario_reading("gpu-jobs", "csv", [
    "timestamp,duration,num_gpus,gpu_time,cluster\nx,1,1,1,a\n",
    "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,-1,1,1,a\n",
    "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,1,0,1,a\n",
    "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55\n",
    "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n0,1,nan,1,m,1,1\n",
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
    "p,1,1,1,2000,,LS,Running,0,1,0\n",
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
    "p,1,1,1,1000,,LS,Running,0,1,5\n",
    "jobs,gpus\n1,2\n", "",
], "scenarios/gpu-jobs-philly.yaml", "../traces/samples/gpu-jobs/philly-first-3000.csv", "{file}")

# --- Kineto traces that cannot be replayed. ---
scenario_reading("kineto", "json", [
    '{"traceEvents": [', '{"schemaVersion": 1}', '[1, 2]', '{"traceEvents": {}}',
    '{"traceEvents": [{"ph": "X", "cat": "kernel", "ts": 1}]}',
    '{"traceEvents": [{"ph": "X", "cat": "kernel", "ts": 1, "dur": -5}]}',
    '{"traceEvents": [{"ph": "X", "cat": "kernel", "ts": "x", "dur": 5}]}',
    '{"traceEvents": [{"ph": "X", "cat": "cpu_op", "ts": 1, "dur": 5}]}',
    '{"traceEvents": [{"ph": "X", "cat": "kernel", "ts": 1, "dur": 1e400}]}',
    '{"traceEvents": [], "traceEvents": []}', '',
], "scenarios/kineto-replay.yaml", "../traces/samples/kineto/nccl_data.json.gz", "{file}")

# --- Chakra execution traces that cannot be replayed: the JSON form, then broken protobuf streams. ---
scenario_reading("chakra", "json", [
    '{"workload_graph": [', '{"nodes": []}', '{"workload_graph": []}', '{"workload_graph": [{"Name": "x"}]}',
    '{"workload_graph": [{"Id": 1, "runtime": -3}]}', '{"workload_graph": [{"Id": 1, "runtime": "fast"}]}',
    '{"workload_graph": [{"Id": 1, "runtime": 1e400}]}', '{"workload_graph": [{"Id": 1}, {"Id": 1}]}',
    '{"workload_graph": [{"Id": 1, "data_deps": [2]}, {"Id": 2, "data_deps": [1]}]}',
    '{"workload_graph": [{"Id": 1, "data_deps": "2"}]}', '{"workload_graph": [{"Id": 1, "is_cpu_op": 3}]}',
    '{"workload_graph": [{"Id": 1}], "workload_graph": []}',
], "scenarios/chakra-replay.yaml", "../traces/samples/chakra/chakra.0.et.gz", "{file}")
et_sample = open(os.path.join(ROOT, "traces/samples/chakra/astra-sim-all_reduce-4npus_1MB/all_reduce.1.et"), "rb").read()
for i, data in enumerate([
        et_sample[:-4],                               # the node message cut short
        et_sample[:8] + b"\xff" * 10 + et_sample[8:],  # a length prefix that is not a varint
        b"\x7f" + et_sample[1:],                      # the metadata's length past the end
        b"\x05\x0a\x03abc",                           # metadata only: no nodes
        et_sample + et_sample[8:],                    # the same node id twice
        bytes(range(256)),                            # not protobuf at all
]):
    name = f"chakra-et-{i:02d}"
    write(f"{name}.et", data, binary=True)
    path = write(f"{name}.yaml", read("scenarios/chakra-replay.yaml").replace(
        "../traces/samples/chakra/chakra.0.et.gz", f"{name}.et"))
    add(f"chakra-et-trace-{i:02d}", run(path))

# --- Spark: overrides the workload checks, and event logs that cannot be replayed (simgrid: Spark's only backend). ---
for i, setting in enumerate([
        "workload.spark.executor_cores=0", "workload.spark.executor_cores=64", "workload.spark.executor_memory=80GiB",
        "workload.spark.executor_memory=100MiB", "workload.spark.memory_fraction=0", "workload.spark.memory_fraction=2",
        "workload.spark.storage_fraction=-1", "workload.spark.locality_wait=-1s", "workload.spark.deserialize_rate=0",
        "workload.spark.cpu_scale=nan", "workload.spark.replication=99", "workload.spark.tick=0s",
        "workload.spark.tick=1ns",
        "workload.spark.applications=[]", "workload.spark.applications=[{workload: sql}]",
        "workload.spark.applications=[{workload: kmeans, profile: enormous}]",
        "workload.spark.applications=[{workload: kmeans, converge: 0}]",
        "workload.spark.applications=[{workload: kmeans, count: 0}]",
        "workload.spark.applications=[{workload: kmeans, storage: MEMORY_ONLY_SER}]",
        "workload.spark.applications=[{workload: kmeans, data_scale: 1e9}]",
        "workload.spark.applications=[{workload: kmeans, event_log: x}]",
        "workload.spark.applications=[{event_log: /nonexistent}]", "workload.spark.applications=[{}]",
        "policies.spark_cache=arc", "policies.spark_cache={name: vanilla, eviction: fifo}",
        "policies.spark_provisioning=elastic", "policies.spark_provisioning={name: dynamic, min_executors: -1}",
        "policies.spark_provisioning={name: ispark, theta_low: 2}", "policies.spark_provisioning={name: ispark, patience: 0}",
        "backend=analytical' --set 'cluster.network.model=lv08"]):
    add(f"set-spark-hibench-{i:02d}", f"run scenarios/spark-hibench.yaml --set '{setting}' --out {{OUT}}")
spark_log = read("traces/samples/spark/local-1430917381534")
spark_start = '{"Event":"SparkListenerApplicationStart","App Name":"a","Timestamp":1000}\n'
spark_lines = spark_log.split("\n")
task_end = next(i for i, l in enumerate(spark_lines) if '"SparkListenerTaskEnd"' in l)


def spark_task_end(old, new):
    """The log with its first TaskEnd event's `old` replaced by `new`."""
    lines = list(spark_lines)
    lines[task_end] = lines[task_end].replace(old, new, 1)
    return "\n".join(lines)


for i, text in enumerate([
        spark_log[:len(spark_log) // 2], spark_task_end('"Stage ID":0', '"Stage ID":"zero"'),
        spark_task_end('"Launch Time":', '"Launch Time":-'), spark_log.replace('"Event":', '"Evnt":', 3),
        spark_start, spark_start + '{"Event":"SparkListenerTaskEnd","Task Info":[]}\n', "", "\n\n", "[1,2]\n",
        spark_log.replace('"Finish Time":', '"Finish Time":1e400,"x":', 1)]):
    name = f"spark-log-{i:02d}"
    write(name, text)
    path = write(f"{name}.yaml", read("scenarios/reference/spark-replay-local.yaml").replace(
        "../../traces/samples/spark/local-1430917381534", name))
    add(f"{name}-replay", f"run {path} --out {{OUT}}")
    add(f"{name}-trace", f"trace tests/corpus/cases/{name} --format spark")

# --- Traces whose framing is broken (bad rows are skipped and counted, not refused: see mapreduce.md). ---
rumen = read("traces/samples/hadoop/gridmix-wordcount-rumen.json")
for i, cut in enumerate([100, 1000, 5000, len(rumen) // 2, len(rumen) - 3]):
    name = write(f"rumen-truncated-{i}.json", rumen[:cut])
    add(f"rumen-truncated-{i}", f"trace {name} --format rumen")
jhist = read("traces/samples/hadoop/job_1329348432655_0001-sleep-10m-1r.jhist")
for i, text in enumerate([jhist.split("\n", 1)[1], "Avro\n" + jhist, "", "\n\n"]):
    name = write(f"jhist-header-{i}.jhist", text)
    add(f"jhist-header-{i}", f"trace {name} --format jhist")

# --- Inputs the fuzzers found (tests/corpus/fuzz-regressions/<target>/), kept as cases. ---
regressions = os.path.join(ROOT, "tests", "corpus", "fuzz-regressions", "scenario")
for name in sorted(os.listdir(regressions)) if os.path.isdir(regressions) else []:
    add(f"fuzz-scenario-{name}", f"run tests/corpus/fuzz-regressions/scenario/{name} --backend analytical --out {{OUT}}")

with open(os.path.join(ROOT, "tests", "corpus", "cases.tsv"), "w") as f:
    f.write("# name\tclustersim arguments ({OUT}: a folder that must not exist afterwards). Generated by "
            "make_corpus.py.\n")
    for name, command in cases:
        f.write(f"{name}\t{command}\n")
print(f"{len(cases)} cases written to tests/corpus/cases.tsv")
