/** Benchmarks and harnesses comparing gpusync with the alternatives. */
module io.gpusync.benchmarks {
    requires io.gpusync.reactor;
    requires java.management;
    requires jdk.management;
}
