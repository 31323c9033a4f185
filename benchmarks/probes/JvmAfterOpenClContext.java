// A JVM after PoCL's clCreateContext, without and with the JDK's signal-chaining library: six threads in compiled
// loops (each safepoint is a SIGSEGV on the armed poll page in every one of them) and a System.gc() every 5 ms, for
// SECONDS. Prints "ALIVE after N GCs", or the JVM dies by a bare SIGSEGV (exit 139, no hs_err): LLVM's one-shot
// handler took the first fault and the second thread's met the default action (README, "Drivers that replace the
// JVM's signal handlers"). Figures (this 2-core box, 6 s runs, an empty POCL_CACHE_DIR each): 3 of 18 JVMs died
// without libjsig, 0 of 14 with it.
//   POCL_CACHE_DIR=$(mktemp -d) java --enable-native-access=ALL-UNNAMED -cp "$CP" benchmarks/probes/JvmAfterOpenClContext.java 6
//   LD_PRELOAD=$JAVA_HOME/lib/libjsig.so POCL_CACHE_DIR=$(mktemp -d) java … (the same)
// with reactor-adapter's test class path on $CP (the testkit's OpenClContext, the OpenCL bindings).
import io.gpusync.test.opencl.OpenClContext;

public class JvmAfterOpenClContext {
    static volatile Object sink;

    public static void main(String[] args) throws Exception {
        OpenClContext cl = OpenClContext.createDefault();
        System.out.println("context open: " + cl);
        for (int i = 0; i < 6; i++) {
            Thread.ofPlatform().daemon().start(() -> {
                long x = 0;
                while (true) {
                    if ((++x & 0xffffff) == 0) {
                        sink = new byte[64];
                    }
                }
            });
        }
        long end = System.nanoTime() + Long.parseLong(args[0]) * 1_000_000_000L;
        int gcs = 0;
        while (System.nanoTime() < end) {
            System.gc();
            gcs++;
            Thread.sleep(5);
        }
        System.out.println("ALIVE after " + gcs + " GCs");
        Runtime.getRuntime().halt(0);
    }
}
