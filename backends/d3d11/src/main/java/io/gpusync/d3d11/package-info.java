/**
 * The D3D11 backend (Windows only): {@link io.gpusync.SyncPoint.D3D11} points over {@code IDXGIKeyedMutex*}
 * handles, minted by {@link io.gpusync.d3d11.D3D11KeyedMutexes}; a wait is {@code AcquireSync(key)} followed by
 * {@code ReleaseSync(key)}. Elsewhere every factory throws {@link io.gpusync.SyncNotSupportedException}.
 *
 * <p><b>Native boundary.</b> Every call is synchronous: no event, callback or pointer stays with the driver.
 * <table>
 *   <caption>D3D11: what the driver keeps, who owns it, what keeps it alive</caption>
 *   <tr><th>site</th><th>what, and whose</th><th>why the free comes after the driver's last use</th></tr>
 *   <tr><td>adopted mutex ({@link io.gpusync.d3d11.D3D11KeyedMutexes#adopt})</td><td>one COM reference, handed
 *       over to gpusync</td><td>{@code Release} when the anchor's last hold drops; every {@code AcquireSync} /
 *       {@code ReleaseSync} pair runs under a claim. A borrowed mutex is the caller's</td></tr>
 * </table>
 */
package io.gpusync.d3d11;
