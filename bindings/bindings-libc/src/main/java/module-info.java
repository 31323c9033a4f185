/** libc bindings (jextract) and the hand-written errno-capturing downcalls. Only gpusync's own modules may read them; see bindings/README.md. */
module io.gpusync.bindings.libc {
    exports io.gpusync.bindings.libc to io.gpusync.linux, io.gpusync.reactor, io.gpusync.benchmarks;
}
