/**
 * Test support for gpusync's backend modules (test scope only): the {@code SyncWaiter} contract suite every
 * backend runs ({@code SyncWaiterContract}), child JVMs, test waiters, the checkout's root.
 */
module io.gpusync.test {
    requires transitive io.gpusync.api;
    requires io.gpusync.backend.kit;
    requires transitive org.junit.jupiter.api;
    requires transitive org.assertj.core;
    exports io.gpusync.test;
}
