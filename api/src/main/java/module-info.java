/**
 * gpusync's contract ({@code io.gpusync}: SyncPoint, SyncWaiter, the errors) and the capabilities an engine reads
 * off a waiter ({@code io.gpusync.spi}). No backend, no native code: each backend is its own module.
 */
module io.gpusync.api {
    exports io.gpusync;
    exports io.gpusync.spi;
}
