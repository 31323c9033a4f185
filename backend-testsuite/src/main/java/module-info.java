/**
 * The suite every gpusync backend module runs in its own tests (test scope only): the {@code SyncWaiter} contract
 * ({@code SyncWaiterContract}), child JVMs, test waiters, the checkout's root. It depends on no backend, so each
 * backend's tests can use it; applications test their code with {@code gpusync-test} instead.
 */
module io.gpusync.testsuite {
    requires transitive io.gpusync.api;
    requires io.gpusync.backend.kit;
    requires transitive org.junit.jupiter.api;
    requires transitive org.assertj.core;
    exports io.gpusync.testsuite;
}
