/**
 * FFM bindings to gpusync's D3D12 shim ({@code libgpusync_d3d12.so}, built from
 * {@code bindings/bindings-d3d12/src/main/c/gpusync_d3d12.c} by {@code build-shim.sh}): System V wrappers around vkd3d's
 * {@code ms_abi} COM methods. The downcalls in {@link io.gpusync.bindings.d3d12.D3d12Shim} are written by hand —
 * the only hand-written bindings besides {@code ErrnoCalls} — because the shim is gpusync's own small library and no
 * jextract was installed when it was added; they keep the generated bindings' conventions. No logic lives here.
 */
package io.gpusync.bindings.d3d12;
