package io.gpusync.reactor;

import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.cpu.CpuTimeline;
import io.gpusync.linux.EventFd;

import java.time.Duration;

/**
 * The child program of {@link NettyOptionalTest}: run in a JVM with no Netty or with Netty 4.1, it waits on a
 * CpuTimeline and on an eventfd through the default engine and prints one line per step; with the argument
 * {@code group} it also hands a (Netty 4.1) event loop group to a builder and prints what that says.
 */
public final class NettyOptionalProbe {
    private NettyOptionalProbe() {
    }

    public static void main(String[] args) throws Exception {
        System.out.println("netty: " + NettyPresence.transportVersion());

        CpuTimeline timeline = new CpuTimeline();
        SyncPoint atOne = timeline.at(1);
        WaitPath cpuPath = GpuSync.defaultEngine().pathFor(atOne.waiter());
        Thread.ofPlatform().start(() -> timeline.signal(1));
        GpuSync.await(atOne, Duration.ofSeconds(10)).block();
        System.out.println("cpu: " + cpuPath + " completed");

        try (EventFd eventFd = EventFd.create()) {
            SyncPoint readable = eventFd.point();
            WaitPath fdPath = GpuSync.defaultEngine().pathFor(readable.waiter());
            Thread.ofPlatform().start(eventFd::signal);
            GpuSync.await(readable, Duration.ofSeconds(10)).block();
            System.out.println("eventfd: " + fdPath + " completed");
        }

        if (args.length > 0 && args[0].equals("group")) {
            GroupStep.run(); // a class of its own: this one must load with no Netty at all
        }
        System.out.println("done");
    }

    private static final class GroupStep {
        static void run() {
            @SuppressWarnings("deprecation") // the 4.1 API, deprecated in 4.2
            io.netty.channel.EventLoopGroup loops = new io.netty.channel.nio.NioEventLoopGroup(1);
            try {
                GpuSync.builder().eventLoopGroup(loops);
                System.out.println("group: accepted");
            } catch (SyncNotSupportedException e) {
                System.out.println("group: " + e.getClass().getSimpleName() + " (" + e.kind() + "): " + e.getMessage());
            } finally {
                loops.shutdownGracefully();
            }
        }
    }
}
