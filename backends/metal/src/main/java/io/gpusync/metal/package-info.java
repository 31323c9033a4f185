/**
 * The Metal backend (macOS only): {@link io.gpusync.SyncPoint.Metal} points over {@code id<MTLSharedEvent>}
 * handles, minted by {@link io.gpusync.metal.MetalSharedEvents} and awaited with
 * {@code waitUntilSignaledValue:timeoutMS:} through {@code objc_msgSend}. Elsewhere every factory throws
 * {@link io.gpusync.SyncNotSupportedException}.
 *
 * <p><b>Native boundary.</b> No call here leaves the driver anything beyond its return: no block, callback or
 * listener is registered.
 * <table>
 *   <caption>Metal: what the driver keeps, who owns it, what keeps it alive</caption>
 *   <tr><th>site</th><th>what, and whose</th><th>why the free comes after the driver's last use</th></tr>
 *   <tr><td>adopted event ({@link io.gpusync.metal.MetalSharedEvents#adopt})</td><td>one retain, handed over to
 *       gpusync</td><td>{@code release} is sent when the anchor's last hold drops; every
 *       {@code signaledValue} read and {@code waitUntilSignaledValue:timeoutMS:} runs under a claim. A borrowed
 *       event is the caller's</td></tr>
 *   <tr><td>selectors</td><td>registered once with the Objective-C runtime</td><td>never freed (the runtime keeps
 *       them for the process)</td></tr>
 * </table>
 */
package io.gpusync.metal;
