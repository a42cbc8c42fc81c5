"""Rendering and graphics jobs (Blender Cycles, UE5, V-Ray, 3D reconstruction): GPU memory from the scene, not
from a model, and what the machine around the GPU needs.

A GPU renderer keeps the whole scene on the card: geometry, textures, its acceleration structure, and the frame
buffers ("GPUs ... have some limitations in rendering complex scenes, due to more limited memory", Blender manual,
GPU Rendering). The scene size is the user's (Blender prints the render's peak as "Mem" in the status bar and the
render log); where none is given, the answer says what it assumed. Cards without RT cores (A100, H100, V100) run
OptiX without hardware ray tracing and ship without display outputs, which is why the rules ask for a graphics
GPU. The host holds the scene too while it is built and uploaded, so RAM is sized at least the scene plus
Blender's own minimum (8 GB; 32 GB recommended, blender.org requirements).
"""
from __future__ import annotations

from bot.estimate.arch import CUDA_CONTEXT_GIB, GIB, Note
from bot.records.models import MemoryEstimate, MemoryTerm, Workload

DEFAULT_SCENE_GIB = 8.0
FRAME = (1920, 1080)
PASSES = 4                # combined, plus the denoiser's albedo and normal passes, plus one data pass
BYTES_PER_PIXEL = 16      # RGBA float32
HOST_MIN_GIB = 8          # Blender's minimum RAM (blender.org/download/requirements)
HOST_RECOMMENDED_GIB = 32


def rendering_memory(w: Workload) -> MemoryEstimate:
    """Per-GPU memory of a GPU render: the scene, the frame buffers and the CUDA context."""
    notes: list[Note] = []
    scene = w.scene_gib or DEFAULT_SCENE_GIB
    if not w.scene_gib:
        notes.append(Note("rnd.scene", f"a {DEFAULT_SCENE_GIB:g} GiB scene assumed (geometry, textures and BVH as "
                          "Blender reports it in 'Mem'); say your scene's size", gib=f"{DEFAULT_SCENE_GIB:g}"))
    wpx, hpx = (w.image_size, w.image_size) if w.image_size else FRAME
    frame = wpx * hpx * PASSES * BYTES_PER_PIXEL
    terms = [MemoryTerm.model_construct(name="scene (geometry, textures, BVH)", category="weights",
                                        gib=round(scene, 4), formula=f"{scene:g} GiB as the renderer reports it"),
             MemoryTerm.model_construct(name="frame buffers", category="activations", gib=round(frame / GIB, 4),
                                        formula=f"{wpx} x {hpx} px x {PASSES} passes x {BYTES_PER_PIXEL} B"),
             MemoryTerm.model_construct(name="CUDA context", category="overhead", gib=CUDA_CONTEXT_GIB,
                                        formula="driver context and the renderer's kernels")]
    host = max(HOST_RECOMMENDED_GIB, scene + HOST_MIN_GIB)
    notes.append(Note("rnd.host", f"host RAM: at least {host:.0f} GiB (the scene is built in RAM before it is "
                      "uploaded, plus Blender's own minimum)", gib=f"{host:.0f}"))
    notes.append(Note("rnd.graphics", "a graphics GPU with RT cores and graphics drivers (L4, L40S, A10, A40, T4, "
                      "RTX); A100/H100/V100 have no RT cores and no display outputs"))
    per = sum(t.gib for t in terms)
    breakdown = {c: 0.0 for c in ("weights", "gradients", "optimizer", "activations", "kv_cache", "overhead")}
    for t in terms:
        breakdown[t.category] += t.gib
    return MemoryEstimate(per_gpu_gib=round(per, 2), total_gib=round(per * w.gpus, 2),
                          allocated_gib=round(per - CUDA_CONTEXT_GIB, 2),
                          breakdown={k: round(v, 2) for k, v in breakdown.items()}, terms=terms,
                          assumptions=[str(n) for n in notes], gpus=w.gpus,
                          assumption_keys=[{"key": n.key, "ctx": n.ctx} for n in notes])


def host_ram_gib(w: Workload) -> float:
    """Host memory a render needs (GiB): the scene plus the renderer's own minimum, at least the recommended."""
    return max(HOST_RECOMMENDED_GIB, (w.scene_gib or DEFAULT_SCENE_GIB) + HOST_MIN_GIB)
