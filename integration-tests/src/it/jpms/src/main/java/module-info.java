/** A user's application module: it requires gpusync's engine and the eventfd backend, and nothing of Netty. */
module com.example.jpms {
    requires io.gpusync.reactor;
    requires io.gpusync.linux;
}
