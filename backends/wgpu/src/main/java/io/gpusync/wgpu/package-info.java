/**
 * The wgpu backend: {@link io.gpusync.SyncPoint.Wgpu} points over a {@code WGPUDevice} and a submission index,
 * minted by {@link io.gpusync.wgpu.WgpuSubmissions} and awaited through wgpu-native's {@code wgpuDevicePoll}
 * (loaded on first use).
 *
 * <p><b>Native boundary.</b> gpusync owns nothing native here.
 * <table>
 *   <caption>wgpu: what the driver keeps, who owns it, what keeps it alive</caption>
 *   <tr><th>site</th><th>what, and whose</th><th>why the free comes after the driver's last use</th></tr>
 *   <tr><td>the {@code WGPUDevice}</td><td>borrowed: the application's</td><td>gpusync never releases it; the
 *       application keeps it alive while a point over it is in use, also across a {@code FOREVER} wait, which
 *       blocks inside {@code wgpuDevicePoll}</td></tr>
 *   <tr><td>the submission index passed to {@code wgpuDevicePoll}</td><td>a confined arena</td><td>read during the
 *       call</td></tr>
 * </table>
 */
package io.gpusync.wgpu;
