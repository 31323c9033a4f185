/**
 * The Linux fd backend: {@link io.gpusync.SyncPoint.SyncFd} points over file descriptors that turn readable when
 * signalled ({@link io.gpusync.linux.SyncFds}: eventfds, sync_files, pipes) and {@link io.gpusync.linux.EventFd},
 * the fd gpusync makes itself. Waits block in {@code poll(2)} slices, or cost no thread through an engine's epoll
 * loop.
 *
 * <p><b>Native boundary.</b> The kernel keeps no pointer of gpusync's; what matters is the fd <em>number</em>,
 * which the kernel hands to the next file opened once it is closed:
 * <table>
 *   <caption>Linux fds: what the kernel keeps, who owns it, what keeps it alive</caption>
 *   <tr><th>site</th><th>what, and whose</th><th>why the close comes after the last use</th></tr>
 *   <tr><td>adopted fd ({@link io.gpusync.linux.SyncFds#adopt}), {@link io.gpusync.linux.EventFd}</td>
 *       <td>gpusync</td><td>closed exactly once, when the anchor's last hold drops: every {@code poll(2)} slice,
 *       signal and drain runs under a claim, and an epoll lease ({@code leaseReadableFd}) holds one until the
 *       engine has removed the fd from its loop; so no number is closed (and reused by another file) while a wait
 *       of gpusync's still watches it</td></tr>
 *   <tr><td>borrowed fd ({@link io.gpusync.linux.SyncFds#borrow})</td><td>the caller's</td><td>the caller keeps it
 *       open while a point over it is in use; {@code adopt(duplicate(fd))} gives a point an fd of its own</td></tr>
 *   <tr><td>{@code pollfd} arrays, errno call state</td><td>confined arenas, per-thread scratch</td><td>read during
 *       the call</td></tr>
 * </table>
 */
package io.gpusync.linux;
